"""Tensor's indexing: t[key] (forward and backward via engine.functional.index) and t[key] = value."""
from __future__ import annotations

import builtins

import numpy as np

from . import registry
from .dispatch import apply
from .grad_mode import STATE
from .ops import OPS
from .tensor_inplace import LEAF_INPLACE, VIEW_OF_LEAF_INPLACE, _note_write, put_recorded


class IndexMixin:
    """__getitem__ / __setitem__."""

    __slots__ = ()

    # ----- indexing -----
    def __getitem__(self, key):
        return index(self, key)

    def __setitem__(self, key, value):
        value_grad = isinstance(value, registry.Tensor) and value._requires_grad
        if STATE.grad_enabled and (self._requires_grad or value_grad):
            _put_recorded(self, key, value)
            return
        self._data = np.asarray(self._data)
        _note_write(self)
        self._data[_index_key(key)] = value._data if isinstance(value, registry.Tensor) else value
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, "__setitem__")


def _put_recorded(t, key, value):
    """t[key] = value under autograd: IndexPutBackward0 for an advanced key, CopyBackwards for `...` (PyTorch
    copies into t itself), CopySlices for a view's key (ints, slices)."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in keys):
        put_recorded(t, _index_key(key), value, "index_put", LEAF_INPLACE)
    elif key is Ellipsis:
        put_recorded(t, Ellipsis, value, "copy_into", LEAF_INPLACE)
    else:  # PyTorch writes through t[key], a view of t
        put_recorded(t, _index_key(key), value, "copy_slices", VIEW_OF_LEAF_INPLACE)


_INDEX_DTYPES = frozenset(np.dtype(t) for t in (np.int64, np.int32, np.uint8, np.bool_))  # PyTorch's index types


def _index_key(key):
    """A numpy index from a torch one: tensors become arrays."""
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, registry.Tensor):
        arr = np.asarray(key._data)
        if arr.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(key, list):
        return np.asarray([k.item() if isinstance(k, registry.Tensor) else k for k in key])
    if isinstance(key, range):
        if STATE.limits is not None:  # a range is lazy: its array is not, so its length is checked before numpy
            STATE.limits.before_alloc((len(key),))
        return np.asarray(key)
    return key


def _is_advanced(k):
    return isinstance(k, (list, range, np.ndarray)) or (isinstance(k, registry.Tensor) and (k.ndim > 0 or k._data.dtype.kind == "b"))


def index(t, key):
    """t[key] as PyTorch builds it: one node per int (Select) and slice (Slice), Index for tensors."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in keys):
        return apply(OPS["index"], (t,), (_index_key(key),))
    keys = tuple(k.item() if isinstance(k, registry.Tensor) else k for k in keys)
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
