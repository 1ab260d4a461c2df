"""Op table rows: elementwise math (binary with broadcasting, unary, comparisons and other derivative-free ops).

Each row's forward is numpy and its VJPs sit beside it; engine/op_table.py defines the row, engine/ops.py
gathers every module's rows into the one table.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import sleef, vml
from .dtypes import scalar_type_name
from .graphed import Graphed
from .graphed import op as _graphed_op
from .graphed import raw as _graphed_raw
from .op_table import Params, defop
from .vml import rounded_from_float64 as _via_f64


def erf(a):
    # MKL's erf where present, as ATen's (engine/vml.py); else math.erf per element, ~50 ns an element
    if type(a) is Graphed:
        return _graphed_op("erf", (a,))
    return vml.erf(a)


# PyTorch refuses `-` on bool tensors (numpy too, but in its own words, naming itself).
_BOOL_NEG = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
             "use the `~` or `logical_not()` operator instead.")


_BOOL_SUB2 = "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."


_BOOL_SUB1 = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.")


def _is_bool(x):
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return x.dtype.kind == "b"  # the usual operands (a 0-d op's result is a numpy scalar), without getattr
    return isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_


def _neg(a):
    if _is_bool(a):
        raise RuntimeError(_BOOL_NEG)
    return np.negative(a)


def _refuse_bool_sub(a, b):
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(_BOOL_SUB2 if _is_bool(a) and _is_bool(b) else _BOOL_SUB1)


def _sub(a, b):
    _refuse_bool_sub(a, b)
    return np.subtract(a, b)


def _refuse_two_bools(kernel):
    def check(a, b):
        if _is_bool(a) and _is_bool(b):
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    return check


# checks of an op's operands as given, run before type promotion casts them (a bool cast to float is no bool)
OPERAND_CHECKS = {"sub": _refuse_bool_sub, "pow": _refuse_two_bools("pow"), "remainder": _refuse_two_bools("remainder_cpu"),
                  "floor_divide": _refuse_two_bools("div_floor_cpu"), "div_floor": _refuse_two_bools("div_floor_cpu"),
                  "div_trunc": _refuse_two_bools("div_trunc_cpu"), "fmod": _refuse_two_bools("fmod_cpu")}


def _no_bool(a, kernel):
    if _is_bool(a):
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _sigmoid(a):
    # NOTE: the two branches keep exp() from overflowing for large |a|.
    if type(a) is Graphed:
        return _graphed_op("sigmoid", (a,))
    if np.asarray(a).dtype.kind in "biu":
        a = np.asarray(a, np.float32)  # torch: sigmoid of a bool or integer tensor is float32
    if a.dtype == np.float32:
        return sleef.sigmoid32(np.asarray(a))  # ATen's kernel, digit for digit
    with np.errstate(over="ignore"):
        return np.where(a >= 0, 1 / (1 + np.exp(-a)), np.exp(a) / (1 + np.exp(a))).astype(a.dtype)


def _power(a, b):
    """np.power as ATen computes it: float32 and float16 results computed in float64 and rounded once, integer
    powers with PyTorch's negative exponents (`_int_power`).
    NOTE: numpy's float32 power is SVML's on AVX-512 machines, a few ULP off (3 ** 1.5 = 5.1961527, ATen's and
    libm's 5.196152): through float64 every machine gives the correctly rounded value, as ATen does in practice."""
    dt = np.result_type(a, b)
    if dt.kind in "iu":
        return _int_power(a, b)
    if dt != np.float32 and dt != np.float16:
        return np.power(a, b)
    wide = np.power(a.astype(np.float64) if type(a) is np.ndarray else a,
                    b.astype(np.float64) if type(b) is np.ndarray else b, dtype=np.float64)
    with np.errstate(over="ignore"):  # float32 overflows where float64 does not: inf, as the float32 power gives
        return wide.astype(dt)


def _int_power(a, b):
    """np.power of integers with PyTorch's negative exponents: 0, or ±1 for a base of ±1 (numpy refuses)."""
    if not np.any(np.asarray(b) < 0):
        return np.power(a, b)
    negative = np.asarray(b) < 0
    out = np.power(a, np.where(negative, 0, b))
    unit = np.where(np.asarray(b) % 2 == 0, 1, a)  # 1 ** -k = 1, (-1) ** -k = ±1
    return np.where(negative, np.where((np.asarray(a) == 1) | (np.asarray(a) == -1), unit, 0), out).astype(out.dtype)


def _pow_scalar(a, c):
    """x ** c as ATen's pow_tensor_scalar computes float tensors: products for 2, 3 and -2, its sqrt kernel for 0.5,
    1 / sqrt for -0.5 and a reciprocal for -1 (np.power rounds x ** 3 and x ** -2 once, ATen twice)."""
    if type(a) is Graphed:
        return _graphed_op("pow_scalar", (a,), (c,))
    if a.dtype.kind == "f" and not isinstance(c, (complex, bool)):
        if c == 1:  # ATen's pow: a copy for 1 (pow_backward of x ** 2 asks for x ** 1), ones for 0
            return a.copy()
        if c == 0:
            return np.ones_like(a)
        if c == 2:
            return a * a
        if c == 3:
            return a * a * a
        if c == -2:
            with np.errstate(divide="ignore"):
                return np.reciprocal(a * a)
        if c == 0.5:
            return vml.sqrt(a)  # ATen's sqrt kernel: MKL's
        if c == -0.5:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.reciprocal(np.sqrt(a))  # ATen's rsqrt kernel: 1 / sqrt, each rounded
        if c == -1:
            with np.errstate(divide="ignore"):
                return np.reciprocal(a)
        if a.dtype == np.float32 and isinstance(c, (int, float, np.floating, np.integer)) and np.ndim(c) == 0:
            return sleef.pow_scalar32(a, float(c))  # ATen's: SLEEF's powf, libm's pow on the rest
        return _power(a, c)
    return np.power(a, c)  # an integer tensor: a negative exponent is refused, as torch refuses it


def _pow_scalar_vjp(g, ans, a, c):
    # PyTorch's pow_backward: grad * (c * a.pow(c - 1)), the pow being the same kernel as the forward's
    return g * 0 if c == 0 else g * (c * _pow_scalar(a, c - 1))


def _pow_exponent_vjp(g, ans, a, b):
    # NOTE: PyTorch defines d(a^b)/db as 0 where a == 0 and b >= 0 instead of 0 * log(0) = nan.
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * np.where((a == 0) & (b >= 0), 0, ans * np.log(a))


# Binary, broadcasting
defop("add", "AddBackward0", "+", np.add, (lambda g, ans, a, b: g, "1"), (lambda g, ans, a, b: g, "1"), saves=False,
      broadcasts=True)


# (the forward is numpy's: apply runs OPERAND_CHECKS["sub"], the bool refusal, before it)
defop("sub", "SubBackward0", "−", np.subtract, (lambda g, ans, a, b: g, "1"), (lambda g, ans, a, b: -g, "-1"), saves=False,
      broadcasts=True)


defop("mul", "MulBackward0", "×", np.multiply, (lambda g, ans, a, b: g * b, "b"), (lambda g, ans, a, b: g * a, "a"),
      needs=("b", "a"), broadcasts=True)


defop("div", "DivBackward0", "÷", np.true_divide, (lambda g, ans, a, b: g / b, r"\frac{1}{b}"),
      # ATen's div_tensor_other_backward: -grad * ((a / b) / b), in this order (the last bit differs otherwise)
      (lambda g, ans, a, b: -g * (a / b / b), r"-\frac{a}{b^{2}}"), needs=("b", "ab"), broadcasts=True)


defop("pow", "PowBackward1", "pow", _power, (lambda g, ans, a, b: g * b * _power(a, b - 1), r"b\,a^{b-1}"),
      (_pow_exponent_vjp, r"a^{b}\ln a"), needs=("ab", "ar"), broadcasts=True)


def _share(wins, a, b, g):
    """The gradient's share of one side of maximum / minimum: 1 where it wins, 1/2 on a tie, in g's dtype (a float64
    mask would carry a float32 gradient into float64 where two paths meet)."""
    a, b = _graphed_raw(a), _graphed_raw(b)  # (the mask is a constant of the backward graph)
    return g * (wins(a, b) + 0.5 * (a == b)).astype(g.dtype)


defop("maximum", "MaximumBackward0", "max", np.maximum,
      (lambda g, ans, a, b: _share(operator.gt, a, b, g), r"\mathbb{1}[a>b]"),
      (lambda g, ans, a, b: _share(operator.lt, a, b, g), r"\mathbb{1}[b>a]"), needs=("ab", "ab"), broadcasts=True)


defop("minimum", "MinimumBackward0", "min", np.minimum,
      (lambda g, ans, a, b: _share(operator.lt, a, b, g), r"\mathbb{1}[a<b]"),
      (lambda g, ans, a, b: _share(operator.gt, a, b, g), r"\mathbb{1}[b<a]"), needs=("ab", "ab"), broadcasts=True)


defop("where", "WhereBackward0", "where", np.where, (None, ""),
      (lambda g, ans, c, a, b: g * c, r"\mathbb{1}[c]"), (lambda g, ans, c, a, b: g * ~c, r"\mathbb{1}[\lnot c]"),
      needs=("", "a", "a"), broadcasts=True)


# Unary (params after the input)
defop("pow_scalar", "PowBackward0", "pow", _pow_scalar, (_pow_scalar_vjp, r"c\,a^{c-1}"), needs=("a",),
      params=Params("right", ("exponent",), "**"))


defop("rpow", "PowBackward2", "pow", lambda a, c: _power(c, a), (lambda g, ans, a, c: g * ans * np.log(c), r"c^{a}\ln c"),
      needs=("r",), params=Params("left", ("base",), "**"))


defop("rsub", "RsubBackward1", "−", lambda a, c: _sub(c, a), (lambda g, ans, a, c: -g, "-1"), saves=False,
      params=Params("left", ("minuend",), "−"))


defop("neg", "NegBackward0", "−", _neg, (lambda g, ans, a: -g, "-1"), saves=False)


defop("exp", "ExpBackward0", "exp", vml.exp, (lambda g, ans, a: g * ans, r"e^{a}"), needs=("r",))


defop("log", "LogBackward0", "log", vml.log, (lambda g, ans, a: g / a, r"\frac{1}{a}"), needs=("a",))


defop("sin", "SinBackward0", "sin", vml.sin, (lambda g, ans, a: g * vml.cos(a), r"\cos a"), needs=("a",))


defop("cos", "CosBackward0", "cos", vml.cos, (lambda g, ans, a: -g * vml.sin(a), r"-\sin a"), needs=("a",))


def _tanh_vjp(g, ans, a):
    """g·(1 − tanh²a). NOTE: ATen's float32 tanh_backward rounds 1 − y·y once (an fma): rounding y·y first
    differs in the last bit for ~30% of inputs (makemore's manual backprop then reads `exact: False`).
    float64 is fused too there, which numpy cannot round once cheaply: it keeps the two roundings."""
    if isinstance(ans, (np.ndarray, np.generic)) and ans.dtype == np.float32:  # not a graphed Tensor (create_graph)
        from .optim.fma import fma32  # here, not at the top: engine.optim imports the ops

        ans = np.asarray(ans)
        return g * fma32(-ans, ans, np.ones_like(ans))
    return g * (1 - ans * ans)


defop("tanh", "TanhBackward0", "tanh", vml.tanh, (_tanh_vjp, r"1-\tanh^{2} a"), needs=("r",))


# ATen's sigmoid_backward: g * (1 - y) * y, in this order (g * y * (1 - y) differs in the last bit on ~35%)
defop("sigmoid", "SigmoidBackward0", "σ", _sigmoid, (lambda g, ans, a: g * (1 - ans) * ans, r"\sigma(a)\,(1-\sigma(a))"),
      needs=("r",))


defop("relu", "ReluBackward0", "relu", lambda a: np.maximum(a, 0), (lambda g, ans, a: g * (ans > 0), r"\mathbb{1}[a>0]"),
      needs=("r",))


defop("abs", "AbsBackward0", "abs", np.abs, (lambda g, ans, a: g * np.sign(a), r"\operatorname{sign}(a)"), needs=("a",))


defop("sqrt", "SqrtBackward0", "√", vml.sqrt, (lambda g, ans, a: g / (2 * ans), r"\frac{1}{2\sqrt{a}}"), needs=("r",))


def _reciprocal(a):
    # integer and bool inputs compute in the default float32, as torch's reciprocal does (np.reciprocal(3) is 0)
    return np.reciprocal(a.astype(np.float32) if a.dtype.kind in "biu" else a)


# derivatives.yaml's -grad * (result * result), in this order (`1 / x` is reciprocal(x) * 1: the last bit differs otherwise)
defop("reciprocal", "ReciprocalBackward0", "1/x", _reciprocal, (lambda g, ans, a: -g * (ans * ans), r"-\frac{1}{a^{2}}"),
      needs=("r",))


defop("clamp", "ClampBackward1", "clamp", lambda a, lo, hi: np.clip(a, lo, hi),
      (lambda g, ans, a, lo, hi: g * (((a >= lo) if lo is not None else True) & ((a <= hi) if hi is not None else True)),
       r"\mathbb{1}[lo \le a \le hi]"), needs=("a",), params=Params("clamp", ("min", "max")))


# No derivative: the graph still shows them, and their outputs never require grad.
defop("eq", None, "==", np.equal, saves=False, broadcasts=True)


defop("ne", None, "≠", np.not_equal, saves=False, broadcasts=True)


defop("lt", None, "<", np.less, saves=False, broadcasts=True)


defop("le", None, "≤", np.less_equal, saves=False, broadcasts=True)


defop("gt", None, ">", np.greater, saves=False, broadcasts=True)


defop("ge", None, "≥", np.greater_equal, saves=False, broadcasts=True)


# PyTorch's SignBackward0: a zero gradient (the step's derivative wherever it has one)
defop("sign", "SignBackward0", "sign", np.sign, (lambda g, ans, a: g * 0, "0"), saves=False)


def _value_test(fn, integral):
    """torch.isnan and its kin: numpy's test on floats; integers and bools are all `integral` (never NaN or inf)."""
    return lambda a: fn(a) if a.dtype.kind in "fc" else np.full(a.shape, integral)


# No derivative, bool outputs (never require grad), as PyTorch's.
defop("isnan", None, "isnan", _value_test(np.isnan, False), saves=False)


defop("isinf", None, "isinf", _value_test(np.isinf, False), saves=False)


defop("isfinite", None, "isfinite", _value_test(np.isfinite, True), saves=False)


defop("isposinf", None, "isposinf", _value_test(np.isposinf, False), saves=False)


defop("isneginf", None, "isneginf", _value_test(np.isneginf, False), saves=False)


defop("isreal", None, "isreal", lambda a: np.isreal(a) if a.dtype.kind == "c" else np.ones(a.shape, dtype=bool),
      saves=False)


defop("logical_and", None, "and", np.logical_and, saves=False, broadcasts=True)


defop("logical_or", None, "or", np.logical_or, saves=False, broadcasts=True)


# & | ^ on integer tensors (bool tensors keep logical_and / logical_or): no derivative, as in PyTorch
defop("bitwise_and", None, "&", np.bitwise_and, saves=False, broadcasts=True)
defop("bitwise_or", None, "|", np.bitwise_or, saves=False, broadcasts=True)
defop("bitwise_xor", None, "^", np.bitwise_xor, saves=False, broadcasts=True)


def _shift(left):
    """<< and >> as ATen's CPU kernels shift: a count below 0 or past the dtype's bits gives 0 (>> of a negative: -1),
    where C (and numpy's loop) would be undefined or wrap the count."""
    def forward(a, b):
        dtype = np.result_type(a, b)
        count = np.asarray(b)
        outside = (count < 0) | (count >= dtype.itemsize * 8)
        inside = np.where(outside, 0, count).astype(dtype, copy=False)
        if left:
            out, fill = np.left_shift(a, inside), 0
        else:
            out, fill = np.right_shift(a, inside), np.where(np.asarray(a) < 0, -1, 0)
        return np.where(outside, fill, out).astype(dtype, copy=False)
    return forward


defop("bitwise_left_shift", None, "<<", _shift(True), saves=False, broadcasts=True)
defop("bitwise_right_shift", None, ">>", _shift(False), saves=False, broadcasts=True)


def _invert(a):
    if a.dtype.kind in "fc":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")
    return np.logical_not(a) if a.dtype.kind == "b" else np.invert(a)


defop("invert", None, "not", _invert, saves=False)


# What PyTorch's C++ losses compose with (Tensor-Scalar overloads), and the regression losses
defop("mul_scalar", "MulBackward1", "×", lambda a, c: a * c, (lambda g, ans, a, c: g * c, "c"), saves=False,
      params=Params("right", ("other",), "×"))


defop("div_scalar", "DivBackward1", "÷", lambda a, c: a / c, (lambda g, ans, a, c: g / c, r"\frac{1}{c}"), saves=False,
      params=Params("right", ("other",), "÷"))


defop("masked_fill", "MaskedFillBackward0", "masked_fill", lambda a, m, v: np.where(m, a.dtype.type(v), a),
      (lambda g, ans, a, m, v: np.where(m, 0, g), r"\mathbb{1}[\lnot m]"), (None, ""), needs=("b", ""),
      broadcasts=True, params=Params("args", ("value",)))


def _round(a, decimals):
    if a.dtype.kind in "iub":
        return a.copy()
    if decimals == 0:
        return np.round(a)
    with np.errstate(over="ignore", invalid="ignore"):  # NOTE: 10^d overflows to inf for a program's huge d
        scale = np.power(np.float64(10.0), decimals).astype(a.dtype)
        return np.round(a * scale) / scale  # PyTorch's: round(x * 10^d) / 10^d in the input's dtype


# (format "call": the page's "clamp" format reads a lone parameter as the lower bound)
defop("clamp_min", "ClampMinBackward0", "clamp_min", lambda a, lo: np.maximum(a, lo),
      (lambda g, ans, a, lo: g * (a >= lo), r"\mathbb{1}[a\ge lo]"), needs=("a",), params=Params("call", ("min",)))


defop("clamp_max", "ClampMaxBackward0", "clamp_max", lambda a, hi: np.minimum(a, hi),
      (lambda g, ans, a, hi: g * (a <= hi), r"\mathbb{1}[a\le hi]"), needs=("a",), params=Params("call", ("max",)))


defop("erf", "ErfBackward0", "erf", erf,
      (lambda g, ans, a: (2 / math.sqrt(math.pi)) * vml.exp(-(a * a)) * g, r"\tfrac{2}{\sqrt{\pi}}e^{-a^{2}}"),
      needs=("a",))


defop("log1p", "Log1PBackward0", "log1p", _via_f64(np.log1p), (lambda g, ans, a: g / (1 + a), r"\frac{1}{1+a}"), needs=("a",))


defop("expm1", "Expm1Backward0", "expm1", _via_f64(np.expm1), (lambda g, ans, a: g * (ans + 1), r"e^{a}"), needs=("r",))


defop("atan2", "Atan2Backward0", "atan2", np.arctan2, (lambda g, ans, a, b: g * b / (a * a + b * b), r"\frac{b}{a^{2}+b^{2}}"),
      (lambda g, ans, a, b: -g * a / (a * a + b * b), r"-\frac{a}{a^{2}+b^{2}}"), needs=("ab", "ab"), broadcasts=True)


defop("floor", "FloorBackward0", "floor", lambda a: np.floor(a) if a.dtype.kind == "f" else a.copy(),
      (lambda g, ans, a: g * 0, "0"), saves=False)


defop("ceil", "CeilBackward0", "ceil", lambda a: np.ceil(a) if a.dtype.kind == "f" else a.copy(), (lambda g, ans, a: g * 0, "0"),
      saves=False)


defop("round", "RoundBackward0", "round", lambda a: _round(a, 0), (lambda g, ans, a: g * 0, "0"), saves=False)


def _nan_to_num(a, nan, posinf, neginf):
    """NaN, +inf, -inf replaced; None for an infinity is the dtype's largest (smallest) finite value, as in torch."""
    if a.dtype.kind not in "fc":
        return a.copy()
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


defop("nan_to_num", "NanToNumBackward0", "nan_to_num", _nan_to_num,
      (lambda g, ans, a, nan, posinf, neginf: g * np.isfinite(a), r"\mathbb{1}[a\ \mathrm{finite}]"), needs=("a",),
      params=Params("keywords", ("nan", "posinf", "neginf"),
                    defaults=(("nan", 0.0), ("posinf", None), ("neginf", None))))


defop("round_decimals", "RoundBackward1", "round", _round, (lambda g, ans, a, decimals: g * 0, "0"), saves=False,
      params=Params("keywords", ("decimals",)))


defop("masked_fill_tensor", "MaskedFillBackward1", "masked_fill", lambda a, m, v: np.where(m, np.asarray(v, a.dtype), a),
      (lambda g, ans, a, m, v: np.where(m, 0, g), r"\mathbb{1}[\lnot m]"), (None, ""),
      (lambda g, ans, a, m, v: np.where(m, g, 0), r"\mathbb{1}[m]"), needs=("b", "", "b"), broadcasts=True)


defop("isclose", None, "isclose", lambda a, b, rtol, atol, nan: np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=nan),
      saves=False, broadcasts=True,
      params=Params("keywords", ("rtol", "atol", "equal_nan"), defaults=(("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False))))


# ---------------------------------------------------------------- remainder, fmod, floor_divide (the % and // operators)
def _integer_divisor_check(a, b):
    # torch's integer kernels raise on a zero divisor (numpy warns and returns 0)
    if np.asarray(a).dtype.kind in "iub" and np.asarray(b).dtype.kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _fmod(a, b):
    _integer_divisor_check(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.fmod(a, b)


def _remainder(a, b):
    """PyTorch's remainder: fmod, moved by b where its sign differs from b's (a zero keeps fmod's sign: -0.0)."""
    mod = _fmod(a, b)
    with np.errstate(invalid="ignore"):
        moved = (mod != 0) & ((np.asarray(b) < 0) != (mod < 0))
    return np.where(moved, mod + b, mod).astype(mod.dtype, copy=False)


def _floor_divide(a, b):
    _integer_divisor_check(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.floor_divide(a, b)  # NOTE: numpy's float floor division is PyTorch's div_floor (fmod, then rounding)


def _quotient(a, b, rounding):
    """floor(a / b) or trunc(a / b) on the values: piecewise constant, so a double backward sees a constant."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return rounding(np.true_divide(_graphed_raw(a), _graphed_raw(b)))


_NO_LATEX = r"\text{not implemented}"  # what the page shows for a derivative PyTorch does not define


def _derivative_missing(name):
    """The backward of an op PyTorch records with grad_fn=<NotImplemented>: it raises when reached."""
    def vjp(g, ans, *inputs):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return vjp


defop("remainder", "RemainderBackward1", "%", _remainder, (lambda g, ans, a, b: g, "1"),
      (lambda g, ans, a, b: -g * _quotient(a, b, np.floor), r"-\lfloor a/b \rfloor"), needs=("", "ab"),
      broadcasts=True)


defop("remainder_scalar", "RemainderBackward0", "%", _remainder, (lambda g, ans, a, c: g, "1"), saves=False,
      params=Params("right", ("other",), "%"))


defop("rremainder", "NotImplemented", "%", lambda a, c: _remainder(c, a), (_derivative_missing("remainder"), _NO_LATEX),
      saves=False, params=Params("left", ("self",), "%"))


defop("fmod", "FmodBackward1", "fmod", _fmod, (lambda g, ans, a, b: g, "1"),
      (lambda g, ans, a, b: -g * _quotient(a, b, np.trunc), r"-\operatorname{trunc}(a/b)"), needs=("", "ab"),
      broadcasts=True)


defop("fmod_scalar", "FmodBackward0", "fmod", _fmod, (lambda g, ans, a, c: g, "1"), saves=False,
      params=Params("call", ("other",)))


defop("floor_divide", "NotImplemented", "//", _floor_divide, (_derivative_missing("floor_divide"), _NO_LATEX),
      (_derivative_missing("floor_divide"), _NO_LATEX), saves=False, broadcasts=True)


defop("bernoulli_scalar_draw", "NotImplemented", "bernoulli", lambda a, values: np.array(values, dtype=a.dtype),
      (_derivative_missing("bernoulli"), _NO_LATEX), saves=False, params=Params("hidden", ("values",)))


defop("rfloor_divide", "NotImplemented", "//", lambda a, c: _floor_divide(c, a), (_derivative_missing("floor_divide"), _NO_LATEX),
      saves=False, params=Params("left", ("self",), "//"))


# ---------------------------------------------------------------- the rest of the elementwise family tutorials use
_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _float_only(fn):
    """A forward that keeps integer and bool inputs out of numpy's float64 (PyTorch computes them in float32)."""
    def forward(a):
        if np.asarray(a).dtype.kind in "iub":
            a = np.asarray(a, np.float32)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return fn(a)
    return forward


def _rsqrt(a):
    return np.reciprocal(np.sqrt(a))


def _frac(a):
    return a - np.trunc(a)


def _deg2rad(a):
    return a * a.dtype.type(math.pi / 180.0)


def _rad2deg(a):
    return a * a.dtype.type(180.0 / math.pi)


defop("exp2", "Exp2Backward0", "exp2", _float_only(_via_f64(np.exp2)), (lambda g, ans, a: g * ans * _LN2, r"2^{a}\ln 2"),
      needs=("r",))


defop("log2", "Log2Backward0", "log2", _float_only(vml.log2), (lambda g, ans, a: g / (a * _LN2), r"\frac{1}{a\ln 2}"),
      needs=("a",))


defop("log10", "Log10Backward0", "log10", _float_only(vml.log10),
      (lambda g, ans, a: g / (a * _LN10), r"\frac{1}{a\ln 10}"), needs=("a",))


defop("rsqrt", "RsqrtBackward0", "rsqrt", _float_only(_rsqrt), (lambda g, ans, a: -0.5 * g * ans ** 3,
                                                                  r"-\tfrac{1}{2}a^{-3/2}"), needs=("r",))


defop("tan", "TanBackward0", "tan", _float_only(vml.tan), (lambda g, ans, a: g * (1 + ans * ans), r"1+\tan^{2} a"),
      needs=("r",))


defop("asin", "AsinBackward0", "asin", _float_only(vml.arcsin), (lambda g, ans, a: g * _rsqrt(-a * a + 1),
                                                                 r"\frac{1}{\sqrt{1-a^{2}}}"), needs=("a",))


defop("acos", "AcosBackward0", "acos", _float_only(vml.arccos), (lambda g, ans, a: g * -_rsqrt(-a * a + 1),
                                                                 r"-\frac{1}{\sqrt{1-a^{2}}}"), needs=("a",))


defop("atan", "AtanBackward0", "atan", _float_only(vml.arctan), (lambda g, ans, a: g / (1 + a * a),
                                                                 r"\frac{1}{1+a^{2}}"), needs=("a",))


defop("sinh", "SinhBackward0", "sinh", _float_only(_via_f64(np.sinh)),
      (lambda g, ans, a: g * (np.exp(a) + np.exp(-a)) / 2, r"\cosh a"), needs=("a",))


defop("cosh", "CoshBackward0", "cosh", _float_only(_via_f64(np.cosh)),
      (lambda g, ans, a: g * (np.exp(a) - np.exp(-a)) / 2, r"\sinh a"), needs=("a",))


defop("asinh", "AsinhBackward0", "asinh", _float_only(np.arcsinh),
      (lambda g, ans, a: g / np.sqrt(a * a + 1), r"\frac{1}{\sqrt{a^{2}+1}}"), needs=("a",))


defop("acosh", "AcoshBackward0", "acosh", _float_only(np.arccosh),
      (lambda g, ans, a: g / np.sqrt(a * a - 1), r"\frac{1}{\sqrt{a^{2}-1}}"), needs=("a",))


defop("atanh", "AtanhBackward0", "atanh", _float_only(_via_f64(np.arctanh)), (lambda g, ans, a: g / (1 - a * a),
                                                                     r"\frac{1}{1-a^{2}}"), needs=("a",))


defop("trunc", "TruncBackward0", "trunc", lambda a: np.trunc(a) if a.dtype.kind == "f" else a.copy(),
      (lambda g, ans, a: g * 0, "0"), saves=False)


defop("frac", "FracBackward0", "frac", _frac, (lambda g, ans, a: g, "1"), saves=False)


defop("deg2rad", "Deg2RadBackward0", "deg2rad", _float_only(_deg2rad), (lambda g, ans, a: g * (math.pi / 180.0),
                                                                         r"\frac{\pi}{180}"), saves=False)


defop("rad2deg", "Rad2DegBackward0", "rad2deg", _float_only(_rad2deg), (lambda g, ans, a: g * (180.0 / math.pi),
                                                                         r"\frac{180}{\pi}"), saves=False)


# torch.div(a, b, rounding_mode=...): a quotient rounded down or toward zero; PyTorch's derivative is zero for both
def _div_trunc(a, b):
    _integer_divisor_check(a, b)
    if np.asarray(a).dtype.kind in "iub" and np.asarray(b).dtype.kind in "iub":
        return np.trunc(np.true_divide(a, b)).astype(np.result_type(a, b))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.trunc(np.true_divide(a, b))


defop("div_floor", "DivBackward2", "÷", _floor_divide, (lambda g, ans, a, b: g * 0, "0"),
      (lambda g, ans, a, b: g * 0, "0"), saves=False, broadcasts=True, params=Params("hidden"))


defop("div_trunc", "DivBackward2", "÷", _div_trunc, (lambda g, ans, a, b: g * 0, "0"),
      (lambda g, ans, a, b: g * 0, "0"), saves=False, broadcasts=True, params=Params("hidden"))
