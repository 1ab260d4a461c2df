"""The float32 multiply-add of a big in-place SGD update (`p.add_(g, alpha=-lr)`) through numpy's own OpenBLAS
`saxpy`, whose vector kernels fuse the multiply and the add (one rounding, as ATen's `vec::fmadd`): one pass
instead of fma.py's six and its fix-up.

Used only where it is known to round once: numpy's bundled OpenBLAS is found, and at first use its results on
inputs where a second rounding goes wrong (fma.py's double-rounding traps, normal and subnormal) and on random
values of every magnitude equal fma.py's exact ones bit for bit; else (another BLAS, a CPU whose kernel does not
fuse) fma.py does every update.
NOTE: OpenBLAS computes the last n % 16 elements of a call in plain C (rounded twice) and splits calls over
10,000 elements between threads (each part with such a tail); so every call here is a multiple of 64 elements,
at most _BLOCK unless OpenBLAS runs on one thread (then one call: eleven calls cost twice a 100k update's time),
and fma.py computes the array's last n % 64.
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

_BLOCK = 9984  # elements per call: a multiple of 64, under OpenBLAS's 10,000-element threading threshold
_F32 = np.dtype(np.float32)
_state = {"saxpy": None, "checked": False, "threads": None}
ENABLED = True  # False: fma.py alone does every update (bench/engine.py --without blas_axpy)


def _load():
    """numpy's bundled OpenBLAS saxpy (cblas interface), or None."""
    libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libdir, "libscipy_openblas*.so*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name, int_type in (("scipy_cblas_saxpy64_", ctypes.c_int64), ("scipy_cblas_saxpy", ctypes.c_int)):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = (int_type, ctypes.c_float, ctypes.c_void_p, int_type, ctypes.c_void_p, int_type)
                fn.restype = None
                _state["threads"] = _threads_function(lib)
                return fn
    return None


def _threads_function(lib):
    """OpenBLAS's get_num_threads of the same library (ctypes, no arguments), or None."""
    for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads"):
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.argtypes, fn.restype = (), ctypes.c_int
            return fn
    return None


def _traps(n, rng):
    """z, y, alpha per element where float64-then-float32 (and float32-then-float32) rounding goes wrong."""
    e = rng.integers(-100, 100, n)
    k = rng.integers(0, 1 << 23, n)
    sign = rng.choice([-1.0, 1.0], n)
    side = rng.choice([-1.0, 1.0], n)
    sub = rng.random(n) < 0.25
    z = np.where(sub, sign * k * 2.0 ** -149, sign * (1 + k * 2.0 ** -23) * 2.0 ** e)
    y = np.where(sub, sign * (1 - 2.0 ** -23) * 2.0 ** -120, sign * (1 - 2.0 ** -23) * 2.0 ** (e - 24.0))
    alpha = side * np.where(sub, (1 + 2.0 ** -23) * 2.0 ** -30, 1 + 2.0 ** -23)
    return z.astype(np.float32), y.astype(np.float32), alpha.astype(np.float32)


def _rounds_once(saxpy, exact):
    """Whether saxpy agrees with `exact` (fma.py's fma32 without this module) bit for bit on traps and random
    values, one alpha per call (a trap's alpha is one of two values up to sign: the calls group them)."""
    rng = np.random.default_rng(20261123)
    z, y, alpha = _traps(2 * _BLOCK, rng)
    for a in np.unique(alpha):
        pick = np.flatnonzero(alpha == a)
        pick = pick[: len(pick) // 64 * 64]
        if not pick.size or not _agrees(saxpy, exact, a, y[pick], z[pick]):
            return False
    for _ in range(2):
        n = _BLOCK + 64
        z = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
        y = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
        if not _agrees(saxpy, exact, np.float32(-10.0 ** rng.uniform(-6, 1)), y, z):
            return False
    return True


def _agrees(saxpy, exact, alpha, y, z):
    """Both ways of calling: one call (OpenBLAS on one thread) and calls of at most _BLOCK elements."""
    want = exact(alpha, y, z).view(np.uint32)
    for one_call in (True, False):
        got = z.copy()
        _block_calls(saxpy, float(alpha), y.ctypes.data, got.ctypes.data, got.size, one_call)
        if not np.array_equal(want, got.view(np.uint32)):
            return False
    return True


def _blocks(saxpy, alpha, y, z, n):
    """z[:n] += alpha * y[:n] (n a multiple of 64)."""
    _block_calls(saxpy, float(alpha), y.ctypes.data, z.ctypes.data, n)


def _block_calls(saxpy, a, yp, zp, n, one_call=None):
    """In one call where OpenBLAS would not split it between threads, else in calls of at most _BLOCK."""
    if one_call is None:
        threads = _state["threads"]
        one_call = n <= _BLOCK or (threads is not None and threads() == 1)
    if one_call:
        saxpy(n, a, yp, 1, zp, 1)
        return
    for start in range(0, n, _BLOCK):
        saxpy(min(_BLOCK, n - start), a, yp + 4 * start, 1, zp + 4 * start, 1)


def _checked_saxpy(exact):
    """saxpy once it passed the first-use check against `exact`, else None."""
    if not ENABLED:
        return None
    if not _state["checked"]:
        saxpy = _load()
        _state["saxpy"] = saxpy if saxpy is not None and _rounds_once(saxpy, exact) else None
        _state["checked"] = True
    return _state["saxpy"]


def add_at(alpha, y_address, z_address, n, exact) -> bool:
    """The float32 arrays of n elements (a multiple of 64) at these addresses: z += alpha * y rounded once, if saxpy
    can (see add_in_place). For buffers an update keeps (their addresses found once). False: nothing was written."""
    saxpy = _checked_saxpy(exact)
    if saxpy is None or alpha == 0 or n % 64:
        return False
    _block_calls(saxpy, float(alpha), y_address, z_address, n)
    return True


def add_in_place(alpha, y, z, exact) -> bool:
    """z += alpha * y rounded once, in place, if saxpy can do it (C-contiguous float32 arrays of one shape that do
    not overlap, alpha a nonzero float32 scalar: OpenBLAS skips alpha == 0, where torch still gives NaN for an
    infinite y); `exact(alpha, y, z)` computes the last n % 64 elements. False: nothing was written."""
    saxpy = _checked_saxpy(exact)
    if (saxpy is None or alpha == 0 or type(y) is not np.ndarray or y.dtype != _F32 or z.dtype != _F32
            or y.shape != z.shape or not (y.flags.c_contiguous and z.flags.c_contiguous and z.flags.writeable)
            or (y is not z and np.may_share_memory(y, z))):
        return False
    n = z.size
    whole = n - n % 64
    _blocks(saxpy, alpha, y, z, whole)
    if whole < n:
        tail = z.reshape(-1)[whole:]
        tail[...] = exact(alpha, y.reshape(-1)[whole:], tail)
    return True
