"""`out=`: torch functions and factories that write their result into a tensor the caller passes.

As in torch, `out=` is outside autograd: it is refused when the output or an argument requires grad (with grad
mode on), the result is cast into out's dtype when the cast is safe, and `out` is resized when its shape differs.
"""
from __future__ import annotations

import functools

import numpy as np

from . import dtypes
from .autograd import STATE
from .tensor_core import Tensor


def write_out(out: Tensor, values) -> Tensor:
    """Put `values` into `out` (in place when the shapes agree, so views of out see it) and return out."""
    values = np.asarray(values)
    if out._data.shape == values.shape and isinstance(out._data, np.ndarray):
        return out._set_data_(values, "copy_")
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc(values.shape)
    out._data = values.astype(out._data.dtype, copy=True)  # a resize gives out new storage, as in torch
    if limits is not None:
        limits.track(out)
    rec = STATE.recorder
    if rec is not None:
        rec.on_inplace(out, "copy_")
    return out


def _requires_grad(value) -> bool:
    if isinstance(value, Tensor):
        return value._requires_grad
    if isinstance(value, (list, tuple)):
        return any(_requires_grad(v) for v in value)
    return False


def with_out(fn, name=None):
    """`fn` with torch's keyword `out=`; the function itself computes as before."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if STATE.grad_enabled and (out._requires_grad or _requires_grad(args) or _requires_grad(kwargs)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        if not isinstance(result, Tensor):
            return result
        dtypes.check_can_cast(result._data.dtype, out._data.dtype)
        return write_out(out, result._data)

    return call
