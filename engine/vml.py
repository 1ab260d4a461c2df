"""PyTorch's CPU math functions digit for digit: MKL's vector math library (VML), called as ATen calls it.

NOTE: ATen computes sin, cos, tan, asin, acos, atan, tanh, exp, log, log2, log10, sqrt, erf, erfc and erfinv of
float32 and float64 tensors with MKL VML in its high-accuracy mode (aten/src/ATen/cpu/vml.h), which is not
correctly rounded (within 1 ulp, by a rule that depends on the CPU). Measured on 100,000 inputs against PyTorch
2.13: numpy's float32 kernels differ from it on 13-50% of them, correctly rounded values on 0.1-17%, VML on none.
A training loop's printed losses then differ in the last digits. MKL itself (engine/mkl.py) gives those very
digits; where it is absent (another platform) each function is computed in float64 and rounded, the nearest a
numpy engine comes.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from . import mkl

# VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE: ATen's mode (vml.h), so subnormals and errors are handled as there
_MODE = ctypes.c_longlong(0x2 | 0x140000 | 0x100)
_CHUNK = 1 << 30  # VML's lengths are 32-bit ints (the LP64 interface)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_ERF = np.frompyfunc(math.erf, 1, 1)  # NOTE: no erf in numpy: math.erf per element, exact in float64


_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _erf(a, *args, **kwargs):
    return np.asarray(_ERF(a), np.float64 if np.asarray(a).dtype.kind in "biu" else np.asarray(a).dtype)[()]


def _erfc(a, *args, **kwargs):
    return np.asarray(_ERFC(a), np.float64 if np.asarray(a).dtype.kind in "biu" else np.asarray(a).dtype)[()]


def _erfinv(a, *args, **kwargs):
    """ATen's calc_erfinv in float64 (a rational first guess, then two Newton steps), rounded once: used only
    where MKL is absent."""
    y = np.asarray(a, np.float64)
    z = np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        c2 = y * y
        central = y * (((-0.140543331 * c2 + 0.914624893) * c2 - 1.645349621) * c2 + 0.886226899) / (
            (((0.012229801 * c2 - 0.329097515) * c2 + 1.442710462) * c2 - 2.118377725) * c2 + 1.0)
        t = np.sqrt(-np.log((1.0 - z) / 2.0))
        tail = np.copysign(((1.641345311 * t + 3.429567803) * t - 1.624906493) * t - 1.970840454, y) / (
            (1.637067800 * t + 3.543889200) * t + 1.0)
        x = np.where(z <= 0.7, central, tail)
        for _ in range(2):
            x = x - (np.asarray(_ERF(x), np.float64) - y) / ((2.0 / math.sqrt(math.pi)) * np.exp(-x * x))
    x = np.where(z == 1.0, np.copysign(np.inf, y), np.where(z > 1.0, np.nan, x))
    return x.astype(np.asarray(a).dtype if np.asarray(a).dtype.kind == "f" else np.float64)[()]


# engine name -> (VML function suffix, the numpy function used for other dtypes and without MKL)
FUNCTIONS = {"sin": ("Sin", np.sin), "cos": ("Cos", np.cos), "tan": ("Tan", np.tan), "arcsin": ("Asin", np.arcsin),
             "arccos": ("Acos", np.arccos), "arctan": ("Atan", np.arctan), "tanh": ("Tanh", np.tanh),
             "exp": ("Exp", np.exp), "log": ("Ln", np.log), "log2": ("Log2", np.log2),
             "log10": ("Log10", np.log10), "sqrt": ("Sqrt", np.sqrt), "erf": ("Erf", _erf),
             "erfc": ("Erfc", _erfc), "erfinv": ("ErfInv", _erfinv)}


_LIB = mkl.LIBRARY
_KERNELS: dict[tuple[str, np.dtype], object] = {}
if _LIB is not None:
    for _suffix, _ in FUNCTIONS.values():
        for _prefix, _dtype in (("vms", _F32), ("vmd", _F64)):
            _fn = getattr(_LIB, _prefix + _suffix)
            _fn.restype = None
            _fn.argtypes = (ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong)
            _KERNELS[(_suffix, _dtype)] = _fn
AVAILABLE = _LIB is not None


def _vml(kernel, a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = a.copy()  # NOTE: np.ascontiguousarray would make a 0-d array 1-d
    out = np.empty(a.shape, a.dtype)
    n, start = a.size, 0
    step = a.itemsize
    while start < n:
        count = min(n - start, _CHUNK)
        kernel(count, a.ctypes.data + start * step, out.ctypes.data + start * step, _MODE)
        start += count
    return out


def _warm() -> None:
    """One call of each kernel at import: MKL loads its CPU-specific code on the first call, which must not happen
    in a run process under its address-space limit."""
    for kernel in _KERNELS.values():
        _vml(kernel, np.ones(16, np.float32 if kernel.__name__.startswith("vms") else np.float64))


if AVAILABLE:
    _warm()


def _in_float64(ufunc, a):
    """``ufunc`` of float32 ``a`` computed in float64 and rounded once (correctly rounded but for double rounding)."""
    return ufunc(a.astype(_F64)).astype(_F32)


def _function(name: str):
    suffix, ufunc = FUNCTIONS[name]
    k32, k64 = _KERNELS.get((suffix, _F32)), _KERNELS.get((suffix, _F64))

    def apply(a, *args, **kwargs):
        t = type(a)
        if (t is np.ndarray or isinstance(a, np.generic)) and not args and not kwargs:
            dtype = a.dtype
            if dtype.kind in "biu":  # integers and bools compute in the default float32, as in PyTorch
                a, dtype = a.astype(_F32), _F32
            if dtype is _F32 or dtype == _F32:
                if k32 is None:  # no MKL: float64, rounded once
                    return _in_float64(ufunc, a)
                out = _vml(k32, a)
                return out if out.ndim else out[()]
            if (dtype is _F64 or dtype == _F64) and k64 is not None:
                out = _vml(k64, a)
                return out if out.ndim else out[()]
        return ufunc(a, *args, **kwargs)  # other dtypes, and a graphed value (create_graph) through its own rules

    apply.__name__ = name
    apply.__qualname__ = name
    apply.__doc__ = f"np.{name}, as PyTorch computes it on CPU (MKL VML where present)."
    return apply


sin, cos, tan = _function("sin"), _function("cos"), _function("tan")
arcsin, arccos, arctan = _function("arcsin"), _function("arccos"), _function("arctan")
tanh, exp, sqrt = _function("tanh"), _function("exp"), _function("sqrt")
log, log2, log10 = _function("log"), _function("log2"), _function("log10")
erf, erfc, erfinv = _function("erf"), _function("erfc"), _function("erfinv")


def rounded_from_float64(ufunc):
    """``ufunc`` whose float32 results are computed in float64 and rounded once. NOTE: for the functions ATen takes
    from SLEEF (log1p, expm1, sinh, cosh, atanh, exp2: within 1 ulp, mostly correctly rounded) this differs from
    PyTorch on 0.04-6% of inputs, numpy's float32 kernels on 11-39%."""
    def apply(a, *args, **kwargs):
        if type(a) is np.ndarray or isinstance(a, np.generic):
            if a.dtype == _F32 and not args and not kwargs:
                return _in_float64(ufunc, a)
        return ufunc(a, *args, **kwargs)

    apply.__name__ = apply.__qualname__ = ufunc.__name__
    return apply
