"""Tensor factories: torch.tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint..."""
from __future__ import annotations

import math
import operator
import sys

import numpy as np

from . import devices, dtypes, random, registry
from .autograd import STATE
from .dispatch import apply
from .ops import OPS
from .outparam import write_out
from .tensor_core import Tensor, _check, _nested_shape, _np_dtype, _to_array, _unwrap  # noqa: F401 — shared with factories

GRAD_DTYPE_MESSAGE = "Only Tensors of floating point and complex dtype can require gradients"


def _leaf(arr, requires_grad):
    t = Tensor._wrap(np.asarray(arr))
    if requires_grad:
        if t._data.dtype.kind != "f":
            raise RuntimeError(GRAD_DTYPE_MESSAGE)  # a factory's wording, not requires_grad_()'s
        t.requires_grad_(True)
    limits = STATE.limits
    if limits is not None:
        limits.track(t)
    return t


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """Always a copy: a numpy array handed in stays the program's (torch.as_tensor / from_numpy share it)."""
    devices.resolve(device, "tensor")
    arr = _to_array(data, dtype)
    if isinstance(data, np.ndarray) and np.may_share_memory(arr, data):
        arr = arr.copy()
    return _leaf(arr, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """The data itself where it can be: a tensor of that dtype, or a numpy array whose dtype the tensor keeps
    (its memory shared, as from_numpy's); anything else is copied as torch.tensor copies it."""
    devices.resolve(device)
    if isinstance(data, Tensor) and dtype is None:
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf" and (dtype is None or _np_dtype(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def Variable(data=None, requires_grad=False, volatile=False):  # noqa: N802 — torch.autograd.Variable
    """The legacy wrapper, as torch 2.x keeps it: a new leaf sharing `data`'s storage (a Tensor, not a class)."""
    if data is None:
        return tensor([])
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    out = data.detach()
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(arr) -> Tensor:
    """A tensor sharing `arr`'s memory (torch's from_numpy): numeric arrays only, checked against the limits."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"can't convert np.ndarray of type numpy.{arr.dtype.name}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
                        "uint16, uint8, and bool.")
    _check(arr.shape)
    return _leaf(arr, False)


def _size(size, keyword=None, fn=None):
    """The shape from `*size` or `size=` (torch takes either, not both)."""
    if keyword is not None:
        if size and fn in ("rand", "randn"):
            got = ", ".join(type(s).__name__ for s in size) + ", size=" + type(keyword).__name__
            raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but expected one "
                            "of:\n" + _RANDOM_SIGNATURES)
        if size:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        size = (keyword,)
    elif fn is not None and not size:
        raise _no_size(fn)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    _check(shape)
    return shape


_RANDOM_SIGNATURES = (
    " * (tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, torch.layout "
    "layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n"
)


def _no_size(fn):
    if fn in ("rand", "randn"):
        return TypeError(f"{fn}() received an invalid combination of arguments - got (), but expected one of:\n"
                         + _RANDOM_SIGNATURES)
    return TypeError(f'{fn}() missing 1 required positional arguments: "size"')


def _factory_dtype(dtype, out, fn, default=dtypes.NP_F32):
    """The dtype of a factory's result: dtype=, else out='s, else the default; the two must agree."""
    if out is None:
        return _np_dtype(dtype, default)
    _check_out(out, fn)
    if dtype is not None and _np_dtype(dtype) != out._data.dtype:
        raise RuntimeError(f"dtype {dtypes.scalar_type_name(_np_dtype(dtype))} does not match dtype of out parameter "
                           f"({dtypes.scalar_type_name(out._data.dtype)})")
    return out._data.dtype


def _check_out(out, fn):
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._requires_grad and STATE.grad_enabled:
        raise RuntimeError(f"aten::{fn}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")


def _made(arr, requires_grad, out):
    """A factory's result: a new leaf, or written into `out` (resized as torch resizes it)."""
    if out is None:
        return _leaf(arr, requires_grad)

    return write_out(out, arr)


def zeros(*dims, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False) -> Tensor:
    devices.resolve(device, "zeros")
    shape = _size(dims, size, "zeros")
    return _made(np.zeros(shape, dtype=_factory_dtype(dtype, out, "zeros")), requires_grad, out)


def ones(*dims, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    devices.resolve(device, "ones")
    shape = _size(dims, size, "ones")
    return _made(np.ones(shape, dtype=_factory_dtype(dtype, out, "ones")), requires_grad, out)


def empty(*dims, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None) -> Tensor:
    # NOTE: torch leaves the memory uninitialised; zeros keep runs reproducible
    devices.resolve(device, "empty")
    shape = _size(dims, size, "empty")
    return _made(np.zeros(shape, dtype=_factory_dtype(dtype, out, "empty")), requires_grad, out)


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


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    devices.resolve(device, "full")
    fill_value = _number(fill_value, "full", "fill_value", 2)
    if dtype is None:
        default = np.dtype(np.bool_) if isinstance(fill_value, bool) else \
            np.dtype(np.int64) if isinstance(fill_value, int) else dtypes.NP_F32
    else:
        default = None
    dt = _factory_dtype(dtype, out, "full", default)
    dtypes.check_fits(fill_value, dt)
    return _made(np.full(_size((size,)), fill_value, dtype=dt), requires_grad, out)



def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False) -> Tensor:
    devices.resolve(device, "eye")
    n = _count(n, "eye", "n")
    m = n if m is None else _count(m, "eye", "m")
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    _check((n, m))
    return _made(np.eye(n, m, dtype=_factory_dtype(dtype, out, "eye")), requires_grad, out)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False) -> Tensor:
    devices.resolve(device, "arange")
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
    dt = _factory_dtype(dtype, out, "arange", default)
    return _made(np.arange(start, end, step, dtype=np.float64 if not is_int else None).astype(dt), requires_grad, out)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    devices.resolve(device, "linspace")
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got {name} with "
                               f"{v.ndim} dimension(s).")
    start, end = float(_number(start, "linspace", "start")), float(_number(end, "linspace", "end"))
    steps = _count(steps, "linspace", "steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _check((steps,))
    dt = _factory_dtype(dtype, out, "linspace")
    return _made(torch_linspace(start, end, steps, dt), requires_grad, out)


def torch_linspace(start, end, steps, dt):
    """PyTorch's CPU linspace, bit for bit: step = (end - start) / (steps - 1) in the output's dtype (double for
    integers); the first half counts up from start (start + step * i), the second half down from end
    (end - step * (steps - 1 - i)), each one fused multiply-add as the compiled kernel does it."""
    if steps <= 1:
        return np.full(steps, start).astype(dt)
    work = dt if dt.kind == "f" else dtypes.NP_F64
    first, last = np.array(start).astype(dt).astype(work), np.array(end).astype(dt).astype(work)
    step = (last - first) / work.type(steps - 1)
    half = steps // 2
    i = np.arange(steps, dtype=np.float64)
    wide = np.float64
    up = _fma(wide(step), i[:half], wide(first))
    down = _fma(-wide(step), (steps - 1) - i[half:], wide(last))
    values = np.concatenate((up, down))
    # NOTE: float32 values are fused in float64 and rounded once more to float32; the product of two float32 is exact
    # in float64, so only a sum rounding exactly half-way could differ (none seen in the torch cross-check)
    return values.astype(dt) if dt.kind == "f" else np.trunc(values).astype(dt)


def _veltkamp(x):
    t = 134217729.0 * x  # 2**27 + 1 splits a double into two 26-bit halves
    hi = t - (t - x)
    return hi, x - hi


def _fma(a, b, c):
    """a * b + c rounded once (float64), from Dekker's exact product and Knuth's exact sum."""
    p = a * b
    a_hi, a_lo = _veltkamp(a)
    b_hi, b_lo = _veltkamp(b)
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    back = s - p
    s_err = (p - (s - back)) + (c - back)
    # NOTE: the two errors are summed in double before the final rounding: off by an ulp only when that sum itself
    # rounds across a half-way point, which the cross-check against torch never met
    return s + (p_err + s_err)


def _random_leaf(values, shape, requires_grad, out=None):
    return _made(values.reshape(shape), requires_grad, out)


def rand(*dims, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    devices.resolve(device, "rand")
    shape = _size(dims, size, "rand")
    dt = _factory_dtype(dtype, out, "rand")
    return _random_leaf(random.uniform(_numel(shape), 0.0, 1.0, dt, generator), shape, requires_grad, out)


def randn(*dims, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False) -> Tensor:
    devices.resolve(device, "randn")
    shape = _size(dims, size, "randn")
    dt = _factory_dtype(dtype, out, "randn")
    return _random_leaf(random.normal(_numel(shape), 0.0, 1.0, dt, generator), shape, requires_grad, out)


def randint(low, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False) -> Tensor:
    devices.resolve(device, "randint")
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional argument: 'size'")
    shape = _size((size,))
    dt = _factory_dtype(dtype, out, "randint", np.dtype(np.int64))
    return _random_leaf(random.random_from_to(_numel(shape), low, high, dt, generator), shape, requires_grad, out)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    devices.resolve(device, "randperm")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    _check((n,))
    dt = _factory_dtype(dtype, out, "randperm", np.dtype(np.int64))
    return _made(random.randperm(n, dt, generator), requires_grad, out)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False) -> Tensor:
    """torch.normal: (float, float, size), (Tensor, Tensor), (Tensor, float) or (float, Tensor)."""
    devices.resolve(device, "normal")
    if out is not None:
        _check_out(out, "normal")

        return write_out(out, normal(mean, std, size, generator=generator, dtype=dtype or out.dtype)._data)
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
    if STATE.grad_enabled and input._requires_grad:  # PyTorch records a node whose gradient is zeros or an error
        return apply(OPS["bernoulli_draw" if p is None else "bernoulli_scalar_draw"], (input,),
                     (vals.reshape(arr.shape),))
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


def zeros_like(t, dtype=None, requires_grad=False, *, layout=None, device=None, pin_memory=False,
               memory_format=None) -> Tensor:
    return zeros(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)


def ones_like(t, dtype=None, requires_grad=False, *, layout=None, device=None, pin_memory=False,
              memory_format=None) -> Tensor:
    return ones(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)


def full_like(t, fill_value, dtype=None, requires_grad=False, *, layout=None, device=None, pin_memory=False,
              memory_format=None) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device)


def randn_like(t, dtype=None, requires_grad=False, *, generator=None, layout=None, device=None, pin_memory=False,
               memory_format=None) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator, device=device)


def rand_like(t, dtype=None, requires_grad=False, *, generator=None, layout=None, device=None, pin_memory=False,
              memory_format=None) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator, device=device)


def randint_like(t, low, high=None, *, dtype=None, requires_grad=False, generator=None, layout=None, device=None,
                 pin_memory=False, memory_format=None) -> Tensor:
    return randint(low, high, t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator,
                   device=device)


registry.new_tensor = tensor  # an operand given as a list or an ndarray (`x + [1, 2]`) becomes a tensor
