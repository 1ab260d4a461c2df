"""ATen's vectorized float32 kernels that take their maths from SLEEF, digit for digit: sigmoid's exp.

NOTE: ATen's `Vectorized<float>::exp` is SLEEF's `expf_u10` (within 1 ulp, not correctly rounded) built with fused
multiply-adds, and its elementwise loops (aten/src/ATen/native/cpu/Loops.h `vectorized_loop`) run it on blocks of
two vectors (32 floats on AVX-512, 16 on AVX2) and the scalar `std::exp` on what is left of each contiguous run.
numpy's float32 exp differs from that on ~40% of inputs, float64 rounded on ~1%; the port here on none (200,000
random inputs of torch.sigmoid). fma: engine/optim/fma.py's float32 multiply-add, rounded once as the hardware's.
"""
from __future__ import annotations

import numpy as np

try:
    from numpy._core._multiarray_umath import __cpu_features__ as _CPU_FEATURES  # numpy >= 2
except ImportError:  # pragma: no cover
    _CPU_FEATURES = {}

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
F = np.float32
# ATen's elementwise loop runs the vector kernel on blocks of two vectors of this CPU's widest kind
BLOCK = 32 if _CPU_FEATURES.get("AVX512F") else 16
# SLEEF's expf_u10 (src/libm/sleefsimdsp.c xexpf): log(2) split in two, and the polynomial's coefficients
_R_LN2 = F(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = F(0.693145751953125), F(1.428606765330187045e-06)
_EXP_POLY = (0.00139304355252534151077271, 0.00833336077630519866943359, 0.0416664853692054748535156,
             0.166666671633720397949219, 0.5)
_EXP_FIRST = F(0.000198527617612853646278381)


# NOTE: a float32 multiply-add rounded once. Up to CHECKED_FMA elements engine/optim/fma.py's (exact: it redoes
# the sums a float64 rounding leaves on a float32 halfway point); past it float64 then float32, which differs from the
# hardware's only where the exact sum lies within 2^-53 of such a point (about 1 operation in 2^29), at a fifth of
# the cost: a sigmoid of a million elements takes 0.1 s either way instead of numpy's 0.005 s.
CHECKED_FMA = 1 << 14


def _fma(x, y, z):
    shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z))
    if int(np.prod(shape)) > CHECKED_FMA:
        with np.errstate(over="ignore", invalid="ignore"):
            return (np.multiply(x, y, dtype=_F64) + np.asarray(z, _F64)).astype(F)
    from .optim.fma import fma32  # here: engine.optim imports the op table, which imports this module

    return fma32(*(np.ascontiguousarray(np.broadcast_to(np.asarray(v, F), shape)) for v in (x, y, z)))


def expf_u10(d: np.ndarray) -> np.ndarray:
    """SLEEF's vectorized float32 exp (1-d float32 array in, a new one out)."""
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        q = np.rint(d * _R_LN2).astype(np.int32)  # NaN and huge |d|: any q (the selects below decide)
        qf = q.astype(F)
        s = _fma(-_L2U, qf, d)
        s = _fma(-_L2L, qf, s)
        u = np.full(d.shape, _EXP_FIRST, F)
        for c in _EXP_POLY:
            u = _fma(u, s, F(c))
        u = F(1) + _fma(s * s, u, s)
        half = q >> 1  # SLEEF's ldexp2: two powers of two, so that subnormal results round once
        u = u * np.ldexp(F(1), half) * np.ldexp(F(1), q - half)
        u[d < F(-104)] = 0
        u[d > F(100)] = np.inf
        u[np.isnan(d)] = np.nan
    return u


def _runs(a: np.ndarray) -> int:
    """The length of the contiguous runs ATen's loop walks `a` in (its trailing dims that are dense)."""
    run = 1
    for n, stride in zip(a.shape[::-1], a.strides[::-1]):
        if n == 1:
            continue
        if stride != run * a.itemsize:
            break
        run *= n
    return run if run > 1 or a.size <= 1 else 1


def vectorized_then_scalar(a: np.ndarray, vector, scalar, *others: np.ndarray) -> np.ndarray:
    """``vector`` on each contiguous run's whole blocks, ``scalar`` on the rest of each run (ATen's loop); both take
    and give flat float32 arrays (after a's pieces, the same pieces of each of ``others``, arrays of a's shape). The
    result has a's shape."""
    if a.ndim > 1 and not a.flags.c_contiguous:
        # ATen walks a dense tensor in memory order (its dims sorted by stride): a transposed one is one run too
        order = sorted(range(a.ndim), key=lambda d: -a.strides[d])
        if order != list(range(a.ndim)):
            back = np.argsort(order)
            return vectorized_then_scalar(a.transpose(order), vector, scalar,
                                          *(o.transpose(order) for o in others)).transpose(back)
    run = _runs(a)
    size = a.size
    flats = [np.ascontiguousarray(x).reshape(-1) for x in (a, *others)]
    if run >= size:
        head = size - size % BLOCK
        out = np.empty(size, F)
        if head:
            out[:head] = vector(*(f[:head] for f in flats))
        if head < size:
            out[head:] = scalar(*(f[head:] for f in flats))
        return out.reshape(a.shape)
    rows = [f.reshape(-1, run) for f in flats]
    head = run - run % BLOCK
    out = np.empty_like(rows[0])
    if head:
        out[:, :head] = vector(*(r[:, :head].reshape(-1) for r in rows)).reshape(-1, head)
    if head < run:
        out[:, head:] = scalar(*(r[:, head:].reshape(-1) for r in rows)).reshape(-1, run - head)
    return out.reshape(a.shape)


def _sigmoid_vector(x):
    return F(1) / (F(1) + expf_u10(-x))


# glibc's expf (sysdeps/ieee754/flt-32/e_expf.c, 2.27 on): 2^(k/32) from a table times a cubic in float64.
# NOTE: not correctly rounded (0.502 ulp): float64 rounded once differs from it on ~1 input in 5,000
_EXP2_TABLE = np.array([
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540], dtype=np.uint64)
_EXP2_POWERS = (_EXP2_TABLE + (np.arange(32, dtype=np.uint64) << np.uint64(47))).view(_F64)  # 2^(i/32)
_INV_LN2_32 = float.fromhex("0x1.71547652b82fep+0") * 32
_EXPF_POLY = (float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3, float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2,
              float.fromhex("0x1.62e42ff0c52d6p-1") / 32)


def expf_libm(x: np.ndarray) -> np.ndarray:
    """glibc's scalar float32 exp, elementwise (what ATen's loops call on the elements past the last whole block)."""
    with np.errstate(invalid="ignore", over="ignore"):
        z = _INV_LN2_32 * x.astype(_F64)
        kd = np.rint(np.where(np.isfinite(z), z, 0))
        k = kd.astype(np.int64)
        r = z - kd
        scale = _EXP2_POWERS[k % 32] * np.ldexp(1.0, k // 32)
        c0, c1, c2 = _EXPF_POLY
        y = ((c0 * r + c1) * (r * r) + (c2 * r + 1)) * scale
        out = y.astype(F)
        out[x > F(float.fromhex("0x1.62e42ep6"))] = np.inf
        out[x < F(float.fromhex("-0x1.9fe368p6"))] = 0
        out[np.isnan(x)] = np.nan
    return out


def _sigmoid_scalar(x):
    return F(1) / (F(1) + expf_libm(-x))


def sigmoid32(a: np.ndarray) -> np.ndarray:
    """torch.sigmoid of a float32 array: 1 / (1 + exp(-x)), SLEEF's exp on whole blocks and glibc's on the rest."""
    if a.ndim == 0:
        return _sigmoid_scalar(a.reshape(1)).reshape(())[()]
    return vectorized_then_scalar(a, _sigmoid_vector, _sigmoid_scalar)


# ---------------------------------------------------------------------------------------- log (SLEEF logf_u10)
_LN2_HI, _LN2_LO = F(0.69314718246459960938), F(-1.904654323148236017e-09)


def logf_u10(d: np.ndarray) -> np.ndarray:
    """SLEEF's vectorized float32 log (xlogf_u1, fused multiply-adds; double-float steps as its df.h writes them)."""
    d = np.asarray(d, F)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        _, exp_of_scaled = np.frexp(d * (F(1) / F(0.75)))
        e = (exp_of_scaled - 1).astype(F)
        fraction, exponent = np.frexp(d)
        if BLOCK == 32:  # AVX-512: getexp and getmant, each on its own (the pair need not agree at 1.5)
            significand = (fraction * 2).astype(F)
            m = np.where(significand >= F(1.5), significand * F(0.5), significand).astype(F)
        else:  # AVX2: d scaled by 2^-e
            m = np.ldexp(d, -(exp_of_scaled - 1)).astype(F)
        # s = ln2 (double-float) * e
        sx = _LN2_HI * e
        sy = _fma(_LN2_LO, e, _fma(_LN2_HI, e, -sx))
        # x = (m - 1) / (m + 1), double-float
        ax = F(-1) + m
        v = ax - F(-1)
        ay = (F(-1) - (ax - v)) + (m - v)
        bx = F(1) + m
        v = bx - F(1)
        by = (F(1) - (bx - v)) + (m - v)
        t = F(1) / bx
        xx = ax * t
        u = _fma(t, ax, -xx)
        w = _fma(-by, t, _fma(-bx, t, F(1)))
        xy = _fma(xx, w, _fma(ay, t, u))
        x2 = xx * xx
        poly = _fma(_fma(F(0.3027294874), x2, F(0.3996108174)), x2, F(0.6666694880))
        total = sx + xx * F(2)
        low = (((sx - total) + xx * F(2)) + sy) + xy * F(2)
        tail = (x2 * xx) * poly
        r = total + tail
        low = ((total - r) + tail) + low
        r = (r + low).astype(F)
        r[d == 0] = -np.inf
        r[(d < 0) | np.isnan(d)] = np.nan
        r[d == np.inf] = np.inf
    return r


# -------------------------------------------------------------------------- softmax and log_softmax, last dim
LANES = BLOCK // 2  # floats in one vector


def lane_sum(rows: np.ndarray, products_of: np.ndarray | None = None) -> np.ndarray:
    """The sum of each row (R x D, float32) as ATen's `vec::reduce_all` adds it: vector accumulators over the row's
    whole vectors, the last partial one added to the lanes it fills, then a tree over the lanes (i + i^8, ^4, ^2,
    ^1 on AVX-512). Rows shorter than a vector are summed lane after lane. With ``products_of`` the sum is of
    rows * products_of (`map2_reduce_all`): NOTE: the compiler fuses the partial vector's multiply-add, not the
    others'."""
    n_rows, width = rows.shape
    prod = (lambda a, b: a * b) if products_of is not None else None
    if width < LANES:
        acc = rows[:, 0] * products_of[:, 0] if prod else rows[:, 0].copy()
        for i in range(1, width):
            acc = acc + (rows[:, i] * products_of[:, i] if prod else rows[:, i])
        return acc
    acc = rows[:, :LANES] * products_of[:, :LANES] if prod else rows[:, :LANES].copy()
    full = width - width % LANES
    for d in range(LANES, full, LANES):
        acc += rows[:, d:d + LANES] * products_of[:, d:d + LANES] if prod else rows[:, d:d + LANES]
    if full < width:
        if prod:
            acc[:, :width - full] = _fma(rows[:, full:], products_of[:, full:], acc[:, :width - full])
        else:
            acc[:, :width - full] += rows[:, full:]
    step = LANES
    while step > 1:
        step //= 2
        acc = acc + acc[:, np.arange(LANES) ^ step]
    return acc[:, 0].copy()


def _rows(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1])


def softmax_lastdim(a: np.ndarray) -> np.ndarray:
    """torch.softmax(a, -1) of a float32 array (`_vec_softmax_lastdim`): exp(x - max) by SLEEF, times 1 / sum."""
    rows = _rows(a)
    shifted = rows - rows.max(axis=1, keepdims=True)
    e = expf_u10(shifted.reshape(-1)).reshape(rows.shape)
    inverse = F(1) / lane_sum(e)
    return (e * inverse[:, None]).reshape(a.shape)


def log_softmax_lastdim(a: np.ndarray) -> np.ndarray:
    """torch.log_softmax(a, -1) of a float32 array (`_vec_log_softmax_lastdim`): x - max - log(sum exp(x - max)),
    in that order, SLEEF's exp and log."""
    rows = _rows(a)
    top = rows.max(axis=1, keepdims=True)
    e = expf_u10((rows - top).reshape(-1)).reshape(rows.shape)
    log_sum = logf_u10(lane_sum(e))
    return (rows - top - log_sum[:, None]).reshape(a.shape)


def softmax_backward_lastdim(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The softmax's gradient (`_vec_host_softmax_backward_lastdim`): (g - sum(g * y)) * y."""
    gr, yr = _rows(g), _rows(y)
    total = lane_sum(gr, products_of=yr)
    return ((gr - total[:, None]) * yr).reshape(g.shape)


def log_softmax_backward_lastdim(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log_softmax's gradient: g - exp(y) * sum(g), the multiply-add fused (as the compiler emits it)."""
    gr, yr = _rows(g), _rows(y)
    total = lane_sum(gr)
    e = expf_u10(yr.reshape(-1)).reshape(yr.shape)
    return _fma(-e, np.broadcast_to(total[:, None], e.shape), gr).reshape(g.shape)


# ------------------------------------------------------------------------------------ pow: SLEEF's powf_u10
# double-float helpers of SLEEF's df.h (FMA variants): a pair (hi, lo) of float32 arrays
def _df_mul_f(xh, xl, y):
    s = xh * y
    return s, _fma(xl, y, _fma(xh, y, -s))


def _df_mul(xh, xl, yh, yl):
    s = xh * yh
    return s, _fma(xh, yl, _fma(xl, yh, _fma(xh, yh, -s)))


def _df_square(xh, xl):
    s = xh * xh
    return s, _fma(xh + xh, xl, _fma(xh, xh, -s))


def _df_add2_ff(x, y):
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _df_add2_df_f(xh, xl, y):
    s = xh + y
    v = s - xh
    return s, ((xh - (s - v)) + (y - v)) + xl


def _df_add2(xh, xl, yh, yl):
    s = xh + yh
    v = s - xh
    return s, ((xh - (s - v)) + (yh - v)) + (xl + yl)


def _df_add(xh, xl, yh, yl):  # |x| >= |y|
    s = xh + yh
    return s, (((xh - s) + yh) + xl) + yl


def _df_div(nh, nl, dh, dl):
    t = F(1) / dh
    s = nh * t
    u = _fma(t, nh, -s)
    w = _fma(-dl, t, _fma(-dh, t, F(1)))
    return s, _fma(s, w, _fma(nl, t, u))


def _logkf(d):
    """SLEEF's double-float log (logkf, AVX-512: getexp / getmant)."""
    _, exp_of_scaled = np.frexp(d * (F(1) / F(0.75)))
    e = np.where(np.isinf(d), F(128), (exp_of_scaled - 1).astype(F)).astype(F)
    fraction, _ = np.frexp(d)
    significand = (fraction * 2).astype(F)
    m = np.where(significand >= F(1.5), significand * F(0.5), significand).astype(F)
    xh, xl = _df_div(*_df_add2_ff(F(-1), m), *_df_add2_ff(F(1), m))
    x2h, x2l = _df_square(xh, xl)
    t = _fma(_fma(F(0.240320354700088500976562), x2h, F(0.285112679004669189453125)), x2h,
             F(0.400007992982864379882812))
    sh, sl = _df_mul_f(_LN2_HI, _LN2_LO, e)
    sh, sl = _df_add(sh, sl, xh * F(2), xl * F(2))
    ph, pl = _df_mul(*_df_mul(x2h, x2l, xh, xl), *_df_add2(*_df_mul_f(x2h, x2l, t),
                                                           F(0.66666662693023681640625), F(3.69183861259614332084311e-09)))
    return _df_add(sh, sl, ph, pl)


def _expkf(dh, dl):
    """SLEEF's exp of a double-float (expkf)."""
    q = np.rint((dh + dl) * _R_LN2).astype(np.int32)
    qf = q.astype(F)
    sh, sl = _df_add2_df_f(dh, dl, qf * -_L2U)
    sh, sl = _df_add2_df_f(sh, sl, qf * -_L2L)
    s = sh + sl
    sh, sl = s, (sh - s) + sl
    u = F(0.00136324646882712841033936)
    for c in (0.00836596917361021041870117, 0.0416710823774337768554688, 0.166665524244308471679688,
              0.499999850988388061523438):
        u = _fma(u, sh, F(c))
    th, tl = _df_add(sh, sl, *_df_mul_f(*_df_square(sh, sl), u))
    s = F(1) + th
    th, tl = s, ((F(1) - s) + th) + tl
    out = np.ldexp(th + tl, q).astype(F)
    out[dh < F(-104)] = 0
    return out


def powf_u10(x: np.ndarray, y) -> np.ndarray:
    """SLEEF's vectorized float32 pow (xpowf), y a float32 number or an array of x's shape."""
    y = np.broadcast_to(np.asarray(y, F), x.shape)
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        ay = np.abs(y)
        yisint = (np.trunc(y) == y) | (ay > F(1 << 24))
        yisodd = ((np.trunc(np.where(ay < F(1 << 24), y, 0)).astype(np.int64) & 1) == 1) & yisint & (ay < F(1 << 24))
        lh, ll = _logkf(np.abs(x))
        result = _expkf(*_df_mul_f(lh, ll, y))
        result = np.where(np.isnan(result), F(np.inf), result)
        result = result * np.where(x > 0, F(1), np.where(yisint, np.where(yisodd, F(-1), F(1)), F(np.nan)))
        efx = (np.abs(x) - F(1)) * np.where(np.signbit(y), F(-1), F(1))  # vmulsign: the sign of y applied
        result = np.where(np.isinf(y), np.where(efx < 0, F(0), np.where(efx == 0, F(1), F(np.inf))), result)
        zero_or_inf = np.isinf(x) | (x == 0)
        mag = np.where(np.signbit(y) ^ (x == 0), F(0), F(np.inf))
        signed = np.where(np.signbit(np.where(yisodd, x, F(1))), -mag, mag)
        result = np.where(zero_or_inf, signed, result)
        result = np.where(np.isnan(x) | np.isnan(y), F(np.nan), result)
        result = np.where((y == 0) | (x == 1), F(1), result)
    return result.astype(F)


def pow_scalar32(a: np.ndarray, exponent: float) -> np.ndarray:
    """torch.pow(a, exponent) of a float32 array for exponents without a kernel of their own: SLEEF's powf (the
    exponent rounded to float32) on whole blocks, libm's double pow (the exponent as given) rounded on the rest."""
    vector_exponent = F(exponent)

    def scalar(v):
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            return np.power(v.astype(_F64), float(exponent)).astype(F)

    if a.ndim == 0:
        return scalar(a.reshape(1)).reshape(())[()]
    return vectorized_then_scalar(a, lambda v: powf_u10(v, vector_exponent), scalar)


# ---------------------------------------------------------------------------------------------------- silu
def silu32(a: np.ndarray) -> np.ndarray:
    """F.silu of a float32 array (ATen: x / (1 + exp(-x)), SLEEF's exp on whole blocks, glibc's on the rest)."""
    if a.ndim == 0:
        v = a.reshape(1)
        return (v / (F(1) + expf_libm(-v))).reshape(())[()]
    return vectorized_then_scalar(a, lambda v: v / (F(1) + expf_u10(-v)), lambda v: v / (F(1) + expf_libm(-v)))


def silu_backward32(g: np.ndarray, a: np.ndarray):
    """SiLU's gradient as ATen's kernel: g * s * (1 + x * (1 - s)), the inner multiply-add fused, s = 1 / (1 +
    exp(-x)) (SLEEF's exp on whole blocks, glibc's on the rest). None unless both are contiguous of one shape."""
    if not (type(g) is np.ndarray and g.dtype == _F32 and g.shape == a.shape and g.flags.c_contiguous
            and a.flags.c_contiguous):
        return None

    def gradient(exp):
        def of(x, dy):
            s = F(1) / (F(1) + exp(-x))
            return dy * s * _fma(x, F(1) - s, F(1))
        return of

    return vectorized_then_scalar(a, gradient(expf_u10), gradient(expf_libm), g)
