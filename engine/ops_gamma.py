"""Op table rows for torch.lgamma / digamma / polygamma: PyTorch's nodes (LgammaBackward0, DigammaBackward0,
PolygammaBackward0), each derivative the next function of the family, as derivatives.yaml writes it.

NOTE: ATen computes float32 inputs in float32 arithmetic (calc_trigamma, glibc's lgammaf); here lgamma and polygamma
are computed in float64 and rounded once, so a float32 result can differ from PyTorch's in the last bit or two, and
more near the poles of negative inputs, where ATen's float arithmetic loses digits (digamma follows ATen's float
arithmetic, bit for bit)."""
from __future__ import annotations

import math

import numpy as np

from .grad_mode import STATE
from .graphed import Graphed
from .graphed import op as _graphed_op
from .libm import logf_libm
from .op_table import Params, defop

_F64 = np.dtype(np.float64)
_TICK_EVERY = 4096  # elements the scalar loops go through per step of the program's budget


def _out_dtype(a):
    return a.dtype if a.dtype.kind == "f" else _F64


def _lgamma_one(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:  # a pole (0 and the negative integers): +inf, as std::lgamma
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma_one, 1, 1)


def lgamma(a):
    if type(a) is Graphed:
        return _graphed_op("lgamma", (a,))
    return np.asarray(_LGAMMA(np.asarray(a, _F64)), _F64).astype(_out_dtype(a))[()]


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma_of(x):
    """ATen's calc_digamma, elementwise in x's own precision (float32 arithmetic and glibc's logf for float32, as
    ATen's float kernel: bit for bit on every input tried): the reflection for x < 0, the recurrence up to 10, then
    the asymptotic series; ±inf at ±0 (copysign(inf, -x)), NaN at the negative integers."""
    x = np.array(x, ndmin=1)
    if x.dtype.kind != "f":
        x = x.astype(_F64)
    t = x.dtype.type
    out = np.empty_like(x)
    negative = x < 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if negative.any():
            xn = x[negative]
            r = np.modf(xn.astype(_F64))[0]
            reflected = (math.pi / np.tan(math.pi * r)).astype(x.dtype)  # (in double, then rounded: ATen's)
            out[negative] = _digamma_of(t(1) - xn) - reflected
            out[negative & (x == np.trunc(x))] = np.nan
        y = np.where(negative, t(10.5), x)
        result = np.zeros_like(y)
        for _ in range(10):  # push x to >= 10: every x >= 0 needs at most 10 steps
            low = y < 10
            result = np.where(low, result - t(1) / np.where(low, y, t(1)), result)
            y = np.where(low, y + t(1), y)
        z = t(1) / (y * y)
        poly = np.full_like(z, _DIGAMMA_A[0])
        for c in _DIGAMMA_A[1:]:
            poly = poly * z + t(c)
        series = np.where(y < t(1.0e17), z * poly, t(0))
        log = logf_libm(y) if x.dtype == np.float32 else np.log(y)
        tail = np.where(y == 10, result + t(_PSI_10), result + log - t(0.5) / y - series)
        plain = ~negative
        out[plain] = tail[plain]
        out[x == 0] = np.copysign(t(np.inf), -x[x == 0])
    return out


def _trigamma64(x):
    """ATen's calc_trigamma: the reflection below 1/2, six steps of the recurrence, then the asymptotic series."""
    x = np.array(x, _F64, ndmin=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        sin_pi_x = np.sin(math.pi * x)
        result = np.where(reflect, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
        sign = np.where(reflect, -1.0, 1.0)
        y = np.where(reflect, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (y * y)
            y = y + 1
        ixx = 1 / (y * y)
        result = result + (1 + 1 / (2 * y) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / y
    return sign * result


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
           -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042e-16


def _zeta(x: float, q: float) -> float:
    """Cephes' Hurwitz zeta(x, q) (ATen's `zeta`): direct sum to q + 9, then Euler-Maclaurin."""
    if x == 1:
        return math.inf
    if x < 1 or q != q:
        return math.nan
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = q ** -x
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1
        b = a ** -x
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1)
    s -= 0.5 * b
    a, k = 1.0, 0.0
    for c in _ZETA_A:
        a *= x + k
        b /= w
        t = a * b / c
        s += t
        if abs(t / s) < _MACHEP:
            return s
        k += 1
        a *= x + k
        b /= w
        k += 1
    return s


def _polygamma64(n, x):
    if n == 0:
        return _digamma_of(np.asarray(x, _F64))
    if n == 1:
        return _trigamma64(x)
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    flat = np.array(x, _F64, ndmin=1).reshape(-1)
    out = np.empty_like(flat)
    for i, v in enumerate(flat.tolist()):
        if i % _TICK_EVERY == 0 and STATE.tick is not None:
            STATE.tick()  # a Python loop per element: the run's budgets can stop it
        out[i] = factor * _zeta(n + 1.0, v)
    return out.reshape(np.shape(x) or (1,))


def digamma(a):
    if type(a) is Graphed:
        return _graphed_op("digamma", (a,))
    return _digamma_of(a).reshape(np.shape(a)).astype(_out_dtype(a))[()]


def polygamma(a, n):
    if type(a) is Graphed:
        return _graphed_op("polygamma", (a,), (n,))
    return _polygamma64(n, a).reshape(np.shape(a)).astype(_out_dtype(a))[()]


defop("lgamma", "LgammaBackward0", "lgamma", lgamma, (lambda g, ans, a: g * digamma(a), r"\psi(a)"), needs=("a",))
defop("digamma", "DigammaBackward0", "digamma", digamma, (lambda g, ans, a: g * polygamma(a, 1), r"\psi^{(1)}(a)"),
      needs=("a",))
defop("polygamma", "PolygammaBackward0", "polygamma", polygamma,
      (lambda g, ans, a, n: g * polygamma(a, n + 1), r"\psi^{(n+1)}(a)"), needs=("a",),
      params=Params("call", ("n",)))
