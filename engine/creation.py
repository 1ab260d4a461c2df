"""Tensor factories: torch.tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint..."""
from __future__ import annotations

import math
import operator
import sys

import numpy as np

from . import dtypes, random
from .autograd import STATE
from .boundary import infer_error
from .tensor import Tensor


def _check(shape):
    """Refuse a tensor above the run's limits before numpy allocates it."""
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc(shape)


def _np_dtype(dtype, default=dtypes.NP_F32):
    if dtype is None:
        return default
    if isinstance(dtype, dtypes.dtype):
        return dtype.np
    if dtype is float:
        return dtypes.NP_F32
    if dtype is int:
        return np.dtype(np.int64)
    if dtype is bool:
        return np.dtype(np.bool_)
    raise TypeError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")


def _nested_shape(data):
    """Shape of nested lists, walked without recursion, with numel checked before numpy copies them.
    Ranges are lists to numpy, and a tensor at the bottom adds its own dims (numpy copies its elements)."""
    shape = []
    level = data
    while isinstance(level, (list, tuple, range)):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    if isinstance(level, Tensor) and shape and shape[-1]:
        shape.extend(level._data.shape)
    return shape


def _to_array(data, dtype=None):
    if isinstance(data, Tensor):
        arr = np.array(data._data, dtype=_np_dtype(dtype, data._data.dtype))
        return arr
    if isinstance(data, (list, tuple, range)):
        _check(_nested_shape(data))
        flat = _unwrap(data)
        try:
            arr = np.array(flat)
        except ValueError:
            raise ValueError(f"expected sequence of length {len(data[0]) if data and isinstance(data[0], (list, tuple)) else 0} "
                             "at dim 1 (got a ragged list)") from None
        if arr.dtype == object:
            raise infer_error(data)  # objects: tensors hold numbers only
    else:
        arr = np.asarray(data)
    if dtype is not None:
        return arr.astype(_np_dtype(dtype))
    if arr.dtype.kind == "f":
        return arr.astype(dtypes.NP_F32) if arr.dtype != dtypes.NP_F32 and not isinstance(data, np.ndarray) else arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64) if not isinstance(data, np.ndarray) else arr
    if arr.dtype.kind == "b":
        return arr
    raise infer_error(data)


def _unwrap(data):
    """Replace 0-d tensors inside nested lists by their numbers (torch.tensor([t1, t2]) works)."""
    if isinstance(data, (list, tuple)):
        if data and not isinstance(data[0], (list, tuple, Tensor)):
            return data
        return [_unwrap(x) for x in data]
    if isinstance(data, Tensor):
        return data.item() if data._data.size == 1 else data._data
    return data


def _leaf(arr, requires_grad):
    t = Tensor._wrap(np.asarray(arr))
    if requires_grad:
        t.requires_grad_(True)
    limits = STATE.limits
    if limits is not None:
        limits.track(t)
    return t


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _leaf(_to_array(data, dtype), requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None:
        return data
    return tensor(data, dtype=dtype)


def from_numpy(arr) -> Tensor:
    return _leaf(np.asarray(arr), False)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    _check(shape)
    return shape


def zeros(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    return _leaf(np.zeros(_size(size), dtype=_np_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    return _leaf(np.ones(_size(size), dtype=_np_dtype(dtype)), requires_grad)


empty = zeros


def _number(value, fn, arg, position=None):
    """A Python number from what torch accepts as a Number: a number or a 0-dimensional tensor. Anything
    else (a list numpy would broadcast, a tensor of many elements) is refused before numpy sees it."""
    if isinstance(value, Tensor):
        if value._data.ndim == 0:
            return value._data.item()
    elif isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
        return value.item() if isinstance(value, np.generic) else value
    where = f" (position {position})" if position else ""
    raise TypeError(f"{fn}(): argument '{arg}'{where} must be Number, not {type(value).__name__}")


def _count(value, fn, arg):
    """An int argument (steps, n): an int or a one-element integer tensor; never a float or a list."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, Tensor)):
        raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(value).__name__}")
    return operator.index(value)


def full(size, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    fill_value = _number(fill_value, "full", "fill_value", 2)
    if dtype is None:
        default = np.dtype(np.bool_) if isinstance(fill_value, bool) else \
            np.dtype(np.int64) if isinstance(fill_value, int) else dtypes.NP_F32
    else:
        default = None
    return _leaf(np.full(_size((size,)), fill_value, dtype=_np_dtype(dtype, default)), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    n = _count(n, "eye", "n")
    m = n if m is None else _count(m, "eye", "m")
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    _check((n, m))
    return _leaf(np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None) -> Tensor:
    start, step = _number(start, "arange", "start"), _number(step, "arange", "step")
    end = None if end is None else _number(end, "arange", "end")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end) if isinstance(v, float)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    is_int = all(isinstance(v, int) for v in (start, end, step))
    if is_int:
        count = max(0, -((start - end) // step))  # exact for integers of any size
    else:
        span = (end - start) / step
        count = max(0, math.ceil(span)) if math.isfinite(span) else sys.maxsize
    _check((count,))
    default = np.dtype(np.int64) if is_int else dtypes.NP_F32
    return _leaf(np.arange(start, end, step, dtype=np.float64 if not is_int else None).astype(_np_dtype(dtype, default)),
                 requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None) -> Tensor:
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got {name} with "
                               f"{v.ndim} dimension(s).")
    start, end = float(_number(start, "linspace", "start")), float(_number(end, "linspace", "end"))
    steps = _count(steps, "linspace", "steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _check((steps,))
    return _leaf(np.linspace(start, end, steps).astype(_np_dtype(dtype)), requires_grad)


def _random_leaf(values, shape, requires_grad):
    return _leaf(values.reshape(shape), requires_grad)


def rand(*size, generator=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape = _size(size)
    dt = _np_dtype(dtype)
    return _random_leaf(random.uniform(_numel(shape), 0.0, 1.0, dt, generator), shape, requires_grad)


def randn(*size, generator=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape = _size(size)
    dt = _np_dtype(dtype)
    return _random_leaf(random.normal(_numel(shape), 0.0, 1.0, dt, generator), shape, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional argument: 'size'")
    shape = _size((size,))
    dt = _np_dtype(dtype, np.dtype(np.int64))
    return _random_leaf(random.random_from_to(_numel(shape), low, high, dt, generator), shape, requires_grad)


def randperm(n, *, generator=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    n = int(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    _check((n,))
    return _leaf(random.randperm(n, _np_dtype(dtype, np.dtype(np.int64)), generator), requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    """torch.normal: (float, float, size), (Tensor, Tensor), (Tensor, float) or (float, Tensor)."""
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), "
                            "but expected (float mean, float std, tuple of ints size)")
        shape = _size((size,))
        dt = _np_dtype(dtype)
        return _random_leaf(random.normal(_numel(shape), float(mean), float(std), dt, generator), shape,
                            requires_grad)
    if std_t and (std._data < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    ref = mean if mean_t else std
    shape = np.broadcast_shapes(mean.shape if mean_t else (), std.shape if std_t else ())
    _check(shape)
    dt = ref._data.dtype if ref._data.dtype.kind == "f" else dtypes.NP_F32
    if mean_t and not std_t:  # output.normal_(0, std).add_(mean)
        out = random.normal(_numel(shape), 0.0, float(std), dt, generator).reshape(shape)
        return _leaf((out + mean._data).astype(dt, copy=False), False)
    out = random.normal(_numel(shape), 0.0, 1.0, dt, generator).reshape(shape)  # .mul_(std).add_(mean)
    out = (out * std._data.astype(dt, copy=False)).astype(dt, copy=False)
    return _leaf((out + (mean._data if mean_t else np.asarray(mean, dt))).astype(dt, copy=False), False)


def bernoulli(input, p=None, *, generator=None) -> Tensor:  # noqa: A002 — torch's name
    """torch.bernoulli(probs) draws each element with its own probability; (input, p) with one p."""
    arr = input._data
    if p is not None:
        vals = random.bernoulli_scalar(arr.size, p, arr.dtype, generator)
    else:
        vals = random.bernoulli_tensor(arr, arr.dtype, generator)
    return _leaf(vals.reshape(arr.shape), False)


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:  # noqa: A002
    """torch.multinomial: indices drawn by the probabilities of each row (engine/random.py has PyTorch's draws)."""
    arr = input._data
    if arr.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dtypes.scalar_type_name(arr.dtype)}")
    if arr.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > arr.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    shape = arr.shape[:-1] + (num_samples,)
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc(shape)
    return _leaf(random.multinomial(arr, num_samples, bool(replacement), generator), False)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def zeros_like(t, dtype=None, requires_grad=False) -> Tensor:
    return zeros(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def ones_like(t, dtype=None, requires_grad=False) -> Tensor:
    return ones(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randn_like(t, dtype=None, requires_grad=False, *, generator=None) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator)


def rand_like(t, dtype=None, requires_grad=False, *, generator=None) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator)


def randint_like(t, low, high=None, *, dtype=None, requires_grad=False, generator=None) -> Tensor:
    return randint(low, high, t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator)
