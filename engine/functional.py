"""torch.* functions built from op-table primitives, in the same node structure PyTorch builds."""
from __future__ import annotations

import builtins

import numpy as np

from .boundary import check_where, expect_tensor
from .ops import OPS
from .product_errors import check_matmul
from .tensor import _REAL, Tensor, _dim, apply


def _t(x):
    if isinstance(x, Tensor):
        return x
    from .creation import tensor

    return tensor(x)


def matmul(a, b):
    a, b = _t(a), _t(b)
    da, db = a.ndim, b.ndim
    check_matmul(a.shape, b.shape)  # torch's message for each case (engine/product_errors.py)
    if da == 1 and db == 1:
        return apply(OPS["dot"], (a, b))
    if da == 2 and db == 2:
        return apply(OPS["mm"], (a, b))
    if da == 2 and db == 1:
        return apply(OPS["mv"], (a, b))
    if da == 1 and db == 2:
        return apply(OPS["matmul_squeeze"], (apply(OPS["mm"], (a.unsqueeze(0), b)),), ((0,),))
    if db == 2:
        # PyTorch folds the batch dims into one matrix: view → mm → view back.
        lead = a.shape[:-1]
        folded = a.reshape(-1, a.shape[-1])
        return apply(OPS["unsafe_view"], (apply(OPS["mm"], (folded, b)),), (lead + (b.shape[-1],),))
    if da == 1:
        return apply(OPS["squeeze_dim"], (matmul(a.unsqueeze(0), b),), (-2 % (db),))
    if db == 1:
        return apply(OPS["squeeze_dim"], (matmul(a, b.unsqueeze(-1)),), (da - 1,))
    out = apply(OPS["bmm"], (a, b))
    return apply(OPS["unsafe_view"], (out,), (out.shape,))


mm = Tensor.mm
dot = Tensor.dot


def _index_key(key):
    """A numpy index from a torch one: tensors become arrays."""
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        return np.asarray(key._data)
    if isinstance(key, list):
        return np.asarray([k.item() if isinstance(k, Tensor) else k for k in key])
    return key


def _is_advanced(k):
    return isinstance(k, (list, np.ndarray)) or (isinstance(k, Tensor) and (k.ndim > 0 or k._data.dtype.kind == "b"))


def index(t, key):
    """t[key] as PyTorch builds it: one node per int (Select) and slice (Slice), Index for tensors."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in keys):
        return apply(OPS["index"], (t,), (_index_key(key),))
    keys = tuple(k.item() if isinstance(k, Tensor) else k for k in keys)
    explicit = builtins.sum(1 for k in keys if k is not None and k is not Ellipsis)
    if explicit > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    out, dim = t, 0
    for k in keys:
        if k is None:
            out = apply(OPS["unsqueeze"], (out,), (dim,))
            dim += 1
        elif k is Ellipsis:
            dim += t.ndim - explicit
        elif isinstance(k, slice):
            size = out.shape[dim]
            start, stop, step = k.indices(size)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            full = start == 0 and stop == size and step == 1
            if not (full and len(keys) > 1):  # PyTorch skips a full `:` inside a multi-index
                out = apply(OPS["slice"], (out,), ((slice(None),) * dim + (slice(start, stop, step),),))
            dim += 1
        elif isinstance(k, (int, np.integer)):
            size = out.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
            out = apply(OPS["select"], (out,), ((slice(None),) * dim + (int(k) % size,),))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got " + type(k).__name__ + ")")
    return out


def cat(tensors, dim=0):
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = _dim(dim, tensors[0].ndim)
    ref = tensors[0].shape
    for i, x in enumerate(tensors):
        if x.ndim != len(ref) or any(x.shape[j] != ref[j] for j in range(len(ref)) if j != d):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                               f"{ref[1 - d] if len(ref) > 1 else ref[0]} but got size "
                               f"{x.shape[1 - d] if x.ndim > 1 else x.shape[0]} for tensor number {i} in the list.")
    return apply(OPS["cat"], tensors, (d,))


concat = cat


def stack(tensors, dim=0):
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at entry 0 "
                               f"and {list(x.shape)} at entry {i}")
    return apply(OPS["stack"], tensors, (_dim(dim, tensors[0].ndim + 1),))


def where(condition, input=None, other=None):  # noqa: A002
    if input is None and other is None:
        expect_tensor(condition, "where", "condition", 1)
        return tuple(Tensor._wrap(i) for i in np.nonzero(condition._data))
    check_where(condition, input, other)
    return apply(OPS["where"], (condition, input, other))


def maximum(a, b):
    return apply(OPS["maximum"], (_t(a), _t(b)))


def minimum(a, b):
    return apply(OPS["minimum"], (_t(a), _t(b)))


def maximum_or_minimum(name, a, b):
    return maximum(a, b) if name == "max" else minimum(a, b)


def softmax(x, dim=None, dtype=None):
    expect_tensor(x, "softmax", "input", 1)
    return x.softmax(dim if dim is not None else -1)


def log_softmax(x, dim=None, dtype=None):
    expect_tensor(x, "log_softmax", "input", 1)
    return x.log_softmax(dim if dim is not None else -1)


def _unary(name):
    def fn(x, *args, **kwargs):
        return getattr(_t(x), name)(*args, **kwargs)

    fn.__name__ = name
    return fn


exp, log, sin, cos, tanh, sigmoid, relu, sqrt, reciprocal, sign = (
    _unary(n) for n in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "reciprocal", "sign"))
clamp = clip = _unary("clamp")
sum = _unary("sum")  # noqa: A001 — torch.sum
mean = _unary("mean")
argmax = _unary("argmax")
argmin = _unary("argmin")
reshape = _unary("reshape")
flatten = _unary("flatten")
transpose = _unary("transpose")
permute = _unary("permute")
squeeze = _unary("squeeze")
unsqueeze = _unary("unsqueeze")
t = _unary("t")
norm = _unary("norm")
square = _unary("square")
neg = _unary("neg")
clone = _unary("clone")
detach = _unary("detach")
numel = _unary("numel")


def abs(x):  # noqa: A001
    return _t(x).abs()


def max(x, dim=None, keepdim=False):  # noqa: A001
    return _t(x).max(dim, keepdim)


def min(x, dim=None, keepdim=False):  # noqa: A001
    return _t(x).min(dim, keepdim)


def pow(x, exponent):  # noqa: A001
    if isinstance(x, _REAL):
        return exponent.__rpow__(x)
    return _t(x) ** exponent


def add(a, b, alpha=1):
    return _t(a).add(b, alpha=alpha)


def sub(a, b, alpha=1):
    return _t(a).sub(b, alpha=alpha)


def mul(a, b):
    return _t(a) * b


def div(a, b):
    return _t(a) / b


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def allclose(a, b, rtol=1e-5, atol=1e-8) -> bool:
    return bool(np.allclose(_t(a)._data, _t(b)._data, rtol=rtol, atol=atol))


def equal(a, b) -> bool:
    expect_tensor(a, "equal", "input", 1)
    expect_tensor(b, "equal", "other", 2)
    return a.shape == b.shape and bool(np.array_equal(a._data, b._data))
