"""The optimizers' float32 multiply-add, rounded once as ATen's `vec::fmadd` rounds it (add(alpha=), addcmul,
lerp): z + x * y, computed in float64 and rounded to float32 once more, with the rare inputs where that
second rounding could differ from one rounding found and fixed.

NOTE: "float64 then float32" is NOT always the correctly rounded fma. The float32 product x*y (48 bits) is
exact in float64, but x*y + z can need up to ~180 bits, so the float64 sum is rounded; when that rounded sum
lands exactly on a float32 halfway point while the true sum does not, the float32 cast breaks the tie by
rounding to even and can go the wrong way (z = 1 + 2**-23, x = -(1 + 2**-23), y = -2**-24 * (1 - 2**-23):
torch's add_ gives 1 + 2**-23, float64-then-float32 gives 1 + 2**-22). Double rounding is harmless
everywhere else: a float64 sum that is not a float32 halfway point lies on the same side of every float32
halfway point as the true sum (halfway points are float64 numbers, and rounding to nearest is monotonic).
So only sums that sit exactly on a halfway point are redone, with their exact error (Knuth's TwoSum) moving
them one float64 step toward the true sum. Halfway points of normal float32 are float64 numbers whose low
29 mantissa bits are 1 followed by 28 zeros; below 2**-126 float32 is subnormal and its halfway points are
the odd multiples of 2**-150, checked separately (on the few sums that small).
"""
from __future__ import annotations

import numpy as np

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_LOW29 = np.uint64((1 << 29) - 1)
_HALFWAY = np.uint64(1 << 28)
_SMALLEST_NORMAL32 = float(np.finfo(np.float32).tiny)  # 2**-126


def fma32(x, y, z):
    """float32(x * y + z) rounded once, as a new array. y, z: float32 arrays of one shape; x: a float32 array
    of that shape or a number (rounded to float32 first, as ATen converts a Scalar alpha to the dtype)."""
    return _rounded_once(x if isinstance(x, np.ndarray) else np.float32(x), y, z)


def _rounded_once(x, y, z):
    """x * y + z in float64 (the product is exact there), rounded to float32 with the halfway cases fixed."""
    if isinstance(x, np.ndarray) and x.ndim:
        s = np.multiply(x, y, out=np.empty(np.shape(z), _F64), dtype=_F64)
    else:
        x = _F64.type(x)  # a float64 scalar: the product below is computed (exactly) in float64
        s = np.multiply(y, x, out=np.empty(np.shape(z), _F64))
    with np.errstate(over="ignore", invalid="ignore"):  # inf - inf and overflow give NaN and inf silently, as in torch
        np.add(s, z, out=s)
        ties = np.equal(np.bitwise_and(s.view(np.uint64), _LOW29), _HALFWAY)
        if ties.any():
            _nudge(s, ties, x, y, z)
        out = s.astype(_F32)
        if out.size and not np.abs(out).min() > _SMALLEST_NORMAL32:  # zeros, subnormals (and NaN): rare
            small = np.abs(s) < _SMALLEST_NORMAL32
            halfway = small & (np.mod(np.where(small, s, 0.0) * 2.0 ** 150, 2.0) == 1.0)  # odd multiples of 2**-150
            if halfway.any():
                _nudge(s, halfway, x, y, z)
                out = s.astype(_F32)
    return out


def _nudge(s, where, x, y, z):
    """Move the float64 sums `s[where]` (float32 halfway points) one float64 step toward the exact x*y + z.
    Called before `out` is written, so z (which may be out) still holds its old values."""
    st = s[where]
    xs = x[where] if x.ndim else x
    p = np.multiply(xs, np.asarray(y)[where], dtype=_F64)
    c = np.asarray(z, dtype=_F64)[where]
    bb = st - p  # Knuth's TwoSum: p + c - st exactly
    err = (p - (st - bb)) + (c - bb)
    s[where] = np.where(err > 0, np.nextafter(st, np.inf), np.where(err < 0, np.nextafter(st, -np.inf), st))
