"""The Tensor methods of engine/linalg_more.py's functions (det, inverse, cross, kron, cummax, cummin) and
Tensor.fill_diagonal_ (issue 21 §3): an in-place write of the diagonal, CopySlices under autograd as in PyTorch."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .autograd import STATE
from .boundary import type_name
from .linalg_more import cross, cummax, cummin, det, inverse, kron
from .ops_linalg_more import fill_positions
from .random import _bounds_name
from .tensor_core import Tensor
from .tensor_inplace import VIEW_OF_LEAF_INPLACE, _note_write, put_recorded


def _checked_fill(value, dt):
    """A Python number as PyTorch writes it into a tensor of numpy dtype `dt` (c10::checked_convert): past the type's
    range is refused (an unsigned type takes negatives down to -max, which wrap), a float into an integer truncates."""
    if dt.kind == "b":
        return bool(value)
    if isinstance(value, int) and not -2**63 <= value < 2**64:  # PyTorch reads a Python int as a C (u)int64
        raise OverflowError("int too big to convert")
    if dt.kind == "f":
        finite = not isinstance(value, float) or math.isfinite(value)  # inf and NaN are written as they are
        if finite and abs(value) > float(np.finfo(dt).max):
            raise RuntimeError(f"value cannot be converted to type {_bounds_name(dt)} without overflow")
        return value
    info = np.iinfo(dt)
    low = -int(info.max) if dt.kind == "u" and not isinstance(value, float) else int(info.min)
    if (isinstance(value, float) and np.isnan(value)) or not low <= value <= int(info.max):
        raise RuntimeError(f"value cannot be converted to type {_bounds_name(dt)} without overflow")
    return int(value) % (int(info.max) + 1) if dt.kind == "u" else int(value)


def fill_diagonal_(self, fill_value, wrap=False):
    if isinstance(fill_value, Tensor) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number) or isinstance(fill_value, complex):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
                        f"{type_name(fill_value)}")
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    key = fill_positions(self.shape, bool(wrap))
    fill_value = _checked_fill(fill_value, self._data.dtype)
    if STATE.grad_enabled and self._requires_grad:
        value = np.asarray(fill_value).astype(self._data.dtype)
        put_recorded(self, key, Tensor._wrap(np.broadcast_to(value, key[0].shape).copy()), "copy_slices",
                     VIEW_OF_LEAF_INPLACE)
        return self
    self._data = np.asarray(self._data)
    _note_write(self)
    self._data[key] = fill_value
    rec = STATE.recorder
    if rec is not None:
        rec.on_inplace(self, "fill_diagonal_")
    return self


Tensor.det = lambda self: det(self)
Tensor.inverse = lambda self: inverse(self)
Tensor.cross = lambda self, other, dim=None: cross(self, other, dim)
Tensor.kron = lambda self, other: kron(self, other)
Tensor.cummax = lambda self, dim: cummax(self, dim)
Tensor.cummin = lambda self, dim: cummin(self, dim)
Tensor.fill_diagonal_ = fill_diagonal_
