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
the odd multiples of 2**-150, checked separately (on the few sums that small). Big arrays first try float32
alone (_bracketed: half the bytes of float64) and take the float64 way only where that leaves the answer open.
"""
from __future__ import annotations

import numpy as np

from . import blas_axpy

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_LOW29 = np.uint64((1 << 29) - 1)
_HALFWAY = np.uint64(1 << 28)
_SMALLEST_NORMAL32 = float(np.finfo(np.float32).tiny)  # 2**-126


def fma32(x, y, z, out=None):
    """float32(x * y + z) rounded once, into `out` (a new array when None; `out` may be z itself). y, z: float32
    arrays of one shape; x: a float32 array of that shape or a number (rounded to float32 first, as ATen
    converts a Scalar alpha to the dtype)."""
    if not isinstance(x, np.ndarray):
        x = np.float32(x)
    if (z.size if type(z) is np.ndarray else np.size(z)) < _BRACKET_FROM:
        new = _rounded_once(x, y, z)
        if out is None:
            return new
        np.copyto(out, new)
        return out
    if out is z and x.ndim == 0 and blas_axpy.add_in_place(x, y, z, _fma32_numpy):
        return z
    return _bracketed_fixed(x, y, z, out)


def _fma32_numpy(x, y, z):
    """fma32 by numpy alone (blas_axpy's reference), as a new array."""
    return _rounded_once(x, y, z) if np.size(z) < _BRACKET_FROM else _bracketed_fixed(x, y, z, None)


def _bracketed_fixed(x, y, z, out):
    lo, unsure = _bracketed(x, y, z)
    idx = np.flatnonzero(unsure)
    fixed = None
    if idx.size:  # computed before `out` is written: z may be out
        fixed = _rounded_once(x.reshape(-1)[idx] if x.ndim else x, y.reshape(-1)[idx], z.reshape(-1)[idx])
    if out is None:
        out = lo
    else:
        np.copyto(out, lo)
    if fixed is not None:
        out.reshape(-1)[idx] = fixed
    return out


_BRACKET_FROM = 1 << 14  # elements: below, fewer numpy calls (float64 throughout) beat fewer bytes (the bracket)


def _bracketed(x, y, z):
    """float32 arithmetic only. p = x*y lies between the two float32 neighbours of fl(p) (it is within half a
    step of it), and rounding is monotonic, so float32(z + p) lies between z plus either neighbour, each
    rounded: where those agree, that is the answer. The neighbours are fl(p)'s bit pattern -1 and +1 (toward
    and away from zero whatever the sign; a zero, infinity or NaN gives a NaN there: never agreeing).
    Returns (z + the lower neighbour, `unsure`): `unsure` marks where they disagree, about |p| / |z| of the
    elements, a few percent in an SGD step. Six passes, two arrays allocated."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflow and inf - inf: unsure, redone exactly
        hi = np.multiply(x, y)
        bits = hi.view(np.int32)
        lo = np.subtract(bits, 1).view(np.float32)
        np.add(bits, 1, out=bits)  # in place: fl(p) itself is not needed past its neighbours
        np.add(lo, z, out=lo)
        np.add(hi, z, out=hi)
    return lo, np.not_equal(lo, hi)


# 0 * inf, inf - inf give NaN silently, as in torch; the decorator form costs half the `with` statement's time
_quiet = np.errstate(over="ignore", invalid="ignore")


@_quiet
def _rounded_once(x, y, z):
    """x * y + z in float64 (the product is exact there), rounded to float32 with the halfway cases fixed."""
    # Direct ufunc calls (no .any()/.min() wrappers, no out= buffer): this runs on small arrays, once a step.
    if not (isinstance(x, np.ndarray) and x.ndim):
        x = _F64.type(x)  # a float64 scalar: the product below is computed (exactly) in float64
    s = np.multiply(x, y, dtype=_F64)
    shape = z.shape if type(z) is np.ndarray else np.shape(z)
    if type(s) is not np.ndarray or s.shape != shape:  # 0-d, or y broadcast to z's shape
        s = np.multiply(x, y, out=np.empty(shape, _F64), dtype=_F64)
    np.add(s, z, out=s)
    if np.count_nonzero(np.equal(np.bitwise_and(s.view(np.uint64), _LOW29), _HALFWAY)):
        _nudge(s, np.equal(np.bitwise_and(s.view(np.uint64), _LOW29), _HALFWAY), x, y, z)
    out = s.astype(_F32)
    if out.size and not np.minimum.reduce(np.abs(out), axis=None) > _SMALLEST_NORMAL32:  # zeros, subnormals, NaN: rare
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
