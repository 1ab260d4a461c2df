"""glibc's scalar float32 log and log1p, elementwise in numpy: what ATen's scalar loops call (`std::log`, `std::log1p`
on a float), where its vectorized kernels call SLEEF's (engine/sleef.py). binary_cross_entropy is one such loop.

NOTE: numpy's float32 log differs from glibc's logf on ~1 input in 5 (this host, AVX-512), and float64 rounded once on
~1 in 140; glibc's log1pf (SunPro's float code, single-precision steps) differs from float64 rounded once on ~1 in 14.
"""
from __future__ import annotations

import math
import struct

import numpy as np

_F32 = np.dtype(np.float32)
F = np.float32
_U32 = np.uint32

# glibc's logf (sysdeps/ieee754/flt-32/e_logf.c, 2.28 on; Arm's optimized routines): log(x) = log1p(z/c - 1) + log(c)
# + k ln2, with x = 2^k z, c near the centre of z's subinterval (16 of them), a cubic for log1p, float64 throughout
_LOGF_INVC_LOGC = np.array([(float.fromhex(a), float.fromhex(b)) for a, b in (
    ("0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2"), ("0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2"),
    ("0x1.49539f0f010bp+0", "-0x1.01eae7f513a67p-2"), ("0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3"),
    ("0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3"), ("0x1.25e227b0b8eap+0", "-0x1.1aa2bc79c81p-3"),
    ("0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4"), ("0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4"),
    ("0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5"), ("0x1p+0", "0x0p+0"),
    ("0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5"), ("0x1.ca4b31f026aap-1", "0x1.c5e53aa362eb4p-4"),
    ("0x1.b2036576afce6p-1", "0x1.526e57720db08p-3"), ("0x1.9c2d163a1aa2dp-1", "0x1.bc2860d22477p-3"),
    ("0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2"), ("0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2"))])
_LOGF_INVC, _LOGF_LOGC = np.ascontiguousarray(_LOGF_INVC_LOGC[:, 0]), np.ascontiguousarray(_LOGF_INVC_LOGC[:, 1])
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_POLY = tuple(float.fromhex(a) for a in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2"))
_LOGF_OFF = 0x3F330000


def logf_libm(x) -> np.ndarray:
    """glibc's logf of each element of a float32 array (0 -> -inf, negatives and NaN -> NaN, inf -> inf)."""
    x = np.asarray(x, _F32)
    if x.size <= SCALAR_SIZE:
        return _one_by_one(_logf_one, x)
    ix = x.view(_U32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        special = (ix - _U32(0x00800000)) >= _U32(0x7F800000 - 0x00800000)  # subnormal, zero, inf, NaN, negative
        any_special = special.any()
        if any_special:
            subnormal = special & (ix > 0) & (ix < 0x00800000)
            if subnormal.any():  # normalized: x * 2^23, its exponent taken back by 23
                ix = ix.copy()
                ix[subnormal] = (x[subnormal] * F(2 ** 23)).view(_U32) - _U32(23 << 23)
        tmp = ix - _U32(_LOGF_OFF)
        i = (tmp >> _U32(19)) & _U32(15)
        k = (tmp.view(np.int32) >> 23).astype(np.float64)
        z = (ix - (tmp & _U32(0xFF800000))).view(_F32).astype(np.float64)
        r = z * _LOGF_INVC.take(i) - 1
        y0 = _LOGF_LOGC.take(i) + k * _LOGF_LN2
        a0, a1, a2 = _LOGF_POLY
        r2 = r * r
        y = a1 * r + a2
        y = a0 * r2 + y
        y *= r2
        y += y0 + r
        out = y.astype(_F32)
        out[ix == 0x3F800000] = 0
        if any_special:
            rest = special & ~subnormal
            out[rest] = np.log(x[rest])  # 0, inf, NaN, negatives: numpy's -inf, inf and NaN are glibc's
    return out


_LN2_HI, _LN2_LO = F(6.9313812256e-01), F(9.0580006145e-06)
_LP = tuple(F(v) for v in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01, 2.2222198546e-01, 1.8183572590e-01,
                           1.5313838422e-01, 1.4798198640e-01))


def log1pf_libm(x) -> np.ndarray:
    """glibc's log1pf of each element of a float32 array: SunPro's float code, every step in float32."""
    x = np.asarray(x, _F32)
    if x.size <= SCALAR_SIZE:
        return _one_by_one(_log1pf_one, x)
    hx = x.view(np.int32)
    ax = hx & 0x7FFFFFFF
    one = F(1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        # the argument reduction, on every element (whole-array steps beat picking the elements that take it)
        small = hx < 0x5A000000
        u = np.where(small, one + x, x)
        hu = u.view(np.int32)
        k = (hu >> 23) - 127
        c = np.where(k > 0, one - (u - x), x - (u - one)) / u  # the correction term
        c[~small] = 0
        hu = hu & 0x007FFFFF
        low = hu < 0x3504F7
        f = np.where(low, hu | 0x3F800000, hu | 0x3F000000).view(_F32) - one
        k += ~low
        hu = np.where(low, hu, (0x00800000 - hu) >> 2)
        # -0.2929 < x < 0.41422: no reduction (k = 0, f = x)
        unreduced = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-1097468385)))
        if unreduced.any():
            f[unreduced] = x[unreduced]
            k[unreduced] = 0
            hu[unreduced] = 1
        kf = k.astype(_F32)
        hfsq = F(0.5) * f * f
        s = f / (F(2) + f)
        z = s * s
        lp1, lp2, lp3, lp4, lp5, lp6, lp7 = _LP
        big_r = z * (lp1 + z * (lp2 + z * (lp3 + z * (lp4 + z * (lp5 + z * (lp6 + z * lp7))))))
        t = s * (hfsq + big_r)
        out = np.where(k == 0, f - (hfsq - t), kf * _LN2_HI - ((hfsq - (t + (kf * _LN2_LO + c))) - f))
        tiny = hu == 0  # |f| < 2^-20: a shorter series
        if tiny.any():
            out[tiny] = _log1pf_tiny(f[tiny], kf[tiny], c[tiny])
        near_zero = ax < 0x31000000  # |x| < 2^-29: x - x*x/2 (below 2^-54, x itself)
        if near_zero.any():
            xz = x[near_zero]
            out[near_zero] = np.where(np.abs(xz) < F(2.0 ** -54), xz, xz - xz * xz * F(0.5))
        edge = (hx >= 0x7F800000) | (hx < 0) & (ax >= 0x3F800000)  # x <= -1, inf, NaN: numpy's -inf, NaN, inf
        if edge.any():
            out[edge] = np.log1p(x[edge])
    return out


def _log1pf_tiny(f, kf, c):
    hfsq = F(0.5) * f * f
    big_r = hfsq * (F(1) - F(0.66666666666666666) * f)
    zero_f = kf * _LN2_HI + (c + kf * _LN2_LO)
    general = np.where(kf == 0, f - big_r, kf * _LN2_HI - ((big_r - (kf * _LN2_LO + c)) - f))
    return np.where(f == 0, np.where(kf == 0, F(0), zero_f), general)


# ---------------------------------------------------------------- one element at a time (a GAN's loss of one decision)
# NOTE: a few numpy calls per step cost ~150 us for one element; Python floats rounded to float32 after every step
# give the same bits (a float32 +, -, * or / done in float64 and rounded once is the float32 result)
_PACK_F, _UNPACK_F = struct.Struct("<f").pack, struct.Struct("<f").unpack
_PACK_I, _UNPACK_I = struct.Struct("<I").pack, struct.Struct("<I").unpack
SCALAR_SIZE = 8  # arrays up to this many elements go element by element


def _f32(v: float) -> float:
    return _UNPACK_F(_PACK_F(v))[0]


def _bits(v: float) -> int:
    return _UNPACK_I(_PACK_F(v))[0]


def _from_bits(b: int) -> float:
    return _UNPACK_F(_PACK_I(b & 0xFFFFFFFF))[0]


_LOGF_ROWS = [tuple(row) for row in _LOGF_INVC_LOGC.tolist()]


def _logf_one(x: float) -> float:
    ix = _bits(x)
    if ix == 0x3F800000:
        return 0.0
    if (ix - 0x00800000) & 0xFFFFFFFF >= 0x7F800000 - 0x00800000:
        if (ix << 1) & 0xFFFFFFFF == 0:
            return -math.inf
        if ix == 0x7F800000:
            return math.inf
        if ix & 0x80000000 or (ix << 1) & 0xFFFFFFFF >= 0xFF000000:
            return math.nan
        ix = (_bits(x * 2.0 ** 23) - (23 << 23)) & 0xFFFFFFFF  # a subnormal, normalized
    tmp = (ix - _LOGF_OFF) & 0xFFFFFFFF
    invc, logc = _LOGF_ROWS[(tmp >> 19) % 16]
    k = (tmp - (1 << 32) if tmp & 0x80000000 else tmp) >> 23
    z = _from_bits(ix - (tmp & 0xFF800000))
    r = z * invc - 1
    y0 = logc + k * _LOGF_LN2
    a0, a1, a2 = _LOGF_POLY
    r2 = r * r
    y = a1 * r + a2
    y = a0 * r2 + y
    return _f32(y * r2 + (y0 + r))


_LN2_HI_F, _LN2_LO_F = float(_LN2_HI), float(_LN2_LO)
_LP_F = tuple(float(v) for v in _LP)
_TWO_THIRDS_F = float(F(0.66666666666666666))


def _log1pf_one(x: float) -> float:
    r = _f32
    hx = _bits(x)
    hx = hx - (1 << 32) if hx & 0x80000000 else hx
    ax = hx & 0x7FFFFFFF
    k, c, hu, f = 1, 0.0, 1, 0.0
    if hx < 0x3ED413D7:
        if ax >= 0x3F800000:
            return -math.inf if x == -1.0 else math.nan
        if ax < 0x31000000:
            return x if ax < 0x24800000 else r(x - r(r(x * x) * 0.5))
        if hx > 0 or hx <= -1097468385:
            k, f, hu = 0, x, 1
    if hx >= 0x7F800000:
        return x + x
    if k != 0:
        if hx < 0x5A000000:
            u = r(1.0 + x)
            hu = _bits(u)
            k = (hu >> 23) - 127
            c = r(r(1.0 - r(u - x)) / u) if k > 0 else r(r(x - r(u - 1.0)) / u)  # the correction term
        else:
            u = x
            hu = _bits(u)
            k = (hu >> 23) - 127
            c = 0.0
        hu &= 0x007FFFFF
        if hu < 0x3504F7:
            u = _from_bits(hu | 0x3F800000)
        else:
            k += 1
            u = _from_bits(hu | 0x3F000000)
            hu = (0x00800000 - hu) >> 2
        f = r(u - 1.0)
    hfsq = r(r(0.5 * f) * f)
    kf = float(k)
    if hu == 0:
        if f == 0.0:
            return 0.0 if k == 0 else r(r(kf * _LN2_HI_F) + r(c + r(kf * _LN2_LO_F)))
        big_r = r(hfsq * r(1.0 - r(_TWO_THIRDS_F * f)))
        if k == 0:
            return r(f - big_r)
        return r(r(kf * _LN2_HI_F) - r(r(big_r - r(r(kf * _LN2_LO_F) + c)) - f))
    s = r(f / r(2.0 + f))
    z = r(s * s)
    acc = _LP_F[6]
    for lp in _LP_F[5::-1]:  # z * (Lp1 + z * (Lp2 + ... + z * Lp7)), every step rounded
        acc = r(lp + r(z * acc))
    big_r = r(z * acc)
    if k == 0:
        return r(f - r(hfsq - r(s * r(hfsq + big_r))))
    return r(r(kf * _LN2_HI_F) - r(r(hfsq - r(r(s * r(hfsq + big_r)) + r(r(kf * _LN2_LO_F) + c))) - f))


def _one_by_one(fn, x: np.ndarray) -> np.ndarray:
    return np.array([fn(v) for v in x.reshape(-1).tolist()], _F32).reshape(x.shape)
