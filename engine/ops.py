"""The op table: every differentiable primitive, one entry each.

An entry carries the forward (numpy), one vector-Jacobian product per input, PyTorch's `grad_fn`
name, the label the page draws, the LaTeX of each local derivative, whether backward needs saved
tensors (PyTorch frees those after backward, so only such nodes raise on a second backward) and
which ones each VJP reads, whether the output is a view, whether the inputs broadcast, and how the
op's scalar parameters are written on the page. This table is the only place an op is described:
adding one is a `defop` line here plus its case in tests/engine/test_gradcheck.py.
VJPs take `(g, ans, *inputs, *params)` and return the gradient at the broadcast shape; the engine
undoes broadcasting with `unbroadcast`. Composite ops (linear, cross_entropy, ...) are built from
these in `engine/functional.py`, so the graph shows the same nodes PyTorch builds.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import linalg_ops as _la
from . import ops_nn as _nn
from .graphed import Graphed, vjps_by_decomposition
from .graphed import op as _graphed_op
from .graphed import raw as _raw

PARAM_FORMATS = ("args", "call", "reduce", "reduction", "clamp", "subscript", "hidden", "right", "left", "keywords")


@dataclass(frozen=True, slots=True)
class SameAs:
    """A "keywords" default that is another parameter's value (pooling's stride: its kernel_size)."""
    name: str


@dataclass(frozen=True, slots=True)
class Params:
    """How an op's scalar parameters are written on the page; app/trace/labels.py and
    static/js/oplabels.js implement each format, the page reads it from the API's `ops` table.

    format: "args" `label(p0, p1…)` · "call" `label(p0)` (one dim, shape or dtype) · "reduce"
    `label(dims[, keepdim])` · "reduction" `label` for the default "mean", else `label(reduction)` ·
    "clamp" `clamp(lo, hi)` / `clamp(min=lo)` / `clamp(max=hi)` · "subscript" `[p0…]` · "hidden"
    `label` · "right" `symbol p0` (`** 2`) · "left" `p0 symbol` (`2 **`) · "keywords" PyTorch's call
    `label<N>d(name=p, …)` (`conv2d(stride=2, padding=1)`): N is the length of the first (spatial)
    parameter, a parameter equal to its default is left out, a tuple of equal items is written as one.
    names: what each parameter is called in the inspector.
    defaults ("keywords"): {name: default}; a default {"same_as": other} is another parameter's value
    (max_pool2d's stride is its kernel_size); a name without a default is always written.
    """
    format: str = "args"
    names: tuple = ()
    symbol: str | None = None  # the operator of "left" and "right"
    defaults: tuple = ()  # ("keywords") (name, default) pairs: a tuple so the dataclass stays hashable

    def __post_init__(self):
        if self.format not in PARAM_FORMATS or (self.symbol is None) == (self.format in ("left", "right")):
            raise ValueError(f"bad parameter format {self.format!r} (symbol {self.symbol!r})")  # a typo fails at import
        if any(name not in self.names for name, _ in self.defaults) or (self.defaults and self.format != "keywords"):
            raise ValueError(f"defaults {self.defaults!r} name no parameter of {self.names!r}")

    def table(self) -> dict:
        out = {"format": self.format, "names": list(self.names), "symbol": self.symbol}
        if self.format == "keywords":
            out["defaults"] = {name: {"same_as": d.name} if isinstance(d, SameAs) else d for name, d in self.defaults}
        return out


ARGS = Params()
DIM = Params("call", ("dim",))
REDUCE = Params("reduce", ("dim", "keepdim"))
REDUCTION = Params("reduction", ("reduction",))


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    grad_fn: str | None  # PyTorch's node name; None for ops without a derivative (comparisons)
    label: str
    forward: Callable
    vjps: tuple  # one per input; None where the input never gets a gradient
    latex: tuple  # LaTeX of d(out)/d(input) per input, in the names a, b, c of the inputs
    saves: bool  # backward reads saved tensors: a second backward without retain_graph raises
    variadic: bool  # inputs come as one list (cat, stack); vjps[0](g, ans, i, arrays, *p)
    needs: tuple  # per input: the tensors its VJP reads ("a", "b", "c" = inputs, "r" = result)
    view: bool  # the output shares the input's memory (and so its version counter)
    broadcasts: bool  # the inputs broadcast against each other: limits predict the output, gradients are summed back
    params: Params  # how the op's scalar parameters are written on the page


OPS: dict[str, Op] = {}


def defop(name, grad_fn, label, forward, *rules, saves=True, variadic=False, needs=(), view=False, broadcasts=False,
          params=ARGS):
    """rules: (vjp, latex) per input; none for an op without a derivative.

    needs: what each input's VJP reads, as PyTorch saves it: a tensor is saved only when an input
    that needs it requires grad, and modifying a saved tensor in place before backward is PyTorch's
    version-counter error."""
    vjps = tuple(r[0] for r in rules)
    latex = tuple(r[1] for r in rules)
    OPS[name] = Op(name, grad_fn, label, forward, vjps, latex, saves, variadic, needs, view, broadcasts, params)


_add_reduce = np.add.reduce


def unbroadcast(g, shape):
    """Sum a gradient back to an input's shape: the backward of broadcasting."""
    if g.shape == shape:
        return g
    # np.add.reduce is what ndarray.sum runs, without its Python wrapper (a double-backward gradient has its own .sum)
    total = _add_reduce if type(g) is np.ndarray else _sum_method
    extra = g.ndim - len(shape)
    if extra:
        g = total(g, axis=0 if extra == 1 else tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = total(g, axis=axes, keepdims=True)
    return g


def _sum_method(g, axis, keepdims=False):
    return g.sum(axis=axis, keepdims=keepdims)


def _expand_reduced(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not keepdim and dims is not None:
        g = np.expand_dims(g, tuple(d % len(shape) for d in dims))
    return np.broadcast_to(g, shape)


def _count(shape, dims):
    if dims is None:
        return int(np.prod(shape)) if shape else 1
    return int(np.prod([shape[d] for d in dims]))


def _scatter(shape, dtype, key, g, accumulate=False, kind="slice"):
    """g placed at `key` in zeros of `shape` (summed where an index repeats): the backward of indexing.
    Under create_graph it is the op `<kind>_backward`, whose own VJP indexes again."""
    if type(g) is Graphed:
        return _graphed_op(kind + "_backward", (g,), (tuple(shape), key, accumulate))
    z = np.zeros(shape, dtype=dtype)
    if accumulate:
        np.add.at(z, key, g)
    else:
        z[key] = g
    return z


def _reduce_arg(a, ans, dim, keepdim, g, pick):
    """Gradient of max/min along dim: all of g goes to the first extreme element (PyTorch's indices)."""
    idx = pick(_raw(a), axis=dim, keepdims=True)
    if type(g) is Graphed:  # a constant one-hot mask times g: differentiable in g
        mask = np.zeros(a.shape, dtype=bool)
        np.put_along_axis(mask, idx, True, axis=dim)
        return mask * (g if keepdim else np.expand_dims(g, dim))
    z = np.zeros(a.shape, dtype=g.dtype)
    np.put_along_axis(z, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return z


def _evenly(a, ans, g):
    """Gradient of a full max/min: PyTorch shares it evenly among tied extremes."""
    mask = a == ans
    return mask * (g / mask.sum())


# PyTorch refuses `-` on bool tensors (numpy too, but in its own words, naming itself).
_BOOL_NEG = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
             "use the `~` or `logical_not()` operator instead.")
_BOOL_SUB2 = "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."
_BOOL_SUB1 = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.")


def _is_bool(x):
    if type(x) is np.ndarray:
        return x.dtype.kind == "b"  # the usual operand, without isinstance and getattr
    return isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_


def _neg(a):
    if _is_bool(a):
        raise RuntimeError(_BOOL_NEG)
    return np.negative(a)


def _sub(a, b):
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(_BOOL_SUB2 if _is_bool(a) and _is_bool(b) else _BOOL_SUB1)
    return np.subtract(a, b)


def _no_bool(a, kernel):
    if _is_bool(a):
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _softmax(a, dim):
    _no_bool(a, "softmax_lastdim_kernel_impl" if dim in (-1, a.ndim - 1) or a.ndim == 0 else "softmax_kernel_impl")
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(a, dim):
    _no_bool(a, "log_softmax_lastdim_kernel_impl" if dim in (-1, a.ndim - 1) or a.ndim == 0 else "log_softmax_kernel_impl")
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _reduce(x, reduction):
    if reduction == "mean":
        return x.sum() / x.dtype.type(x.size)
    if reduction == "sum":
        return x.sum()
    return x


def _reduce_grad(g, shape, reduction):
    """Gradient flowing into the unreduced elementwise loss."""
    if reduction == "mean":
        return np.broadcast_to(g / _count(shape, None), shape)
    if reduction == "sum":
        return np.broadcast_to(g, shape)
    return g


def _nll_weights(logp, target, weight, ignore_index):
    """Per-sample weight w[target] (1 without class weights), 0 where the target is ignore_index."""
    t = np.asarray(target)
    w = np.ones(t.shape, dtype=logp.dtype) if weight is None else \
        np.asarray(weight, dtype=logp.dtype)[np.where(t == ignore_index, 0, t)]
    return np.where(t == ignore_index, 0, w).astype(logp.dtype)


NLL_FAST_PATH = True  # False: the weighted path always (bench/engine.py --without nll_fast_path)


def _all_weights_one(target, weight, ignore_index):
    """No class weights and no ignored target: every per-sample weight of _nll_weights is 1."""
    return NLL_FAST_PATH and weight is None and target.size and not (target == ignore_index).any()


def _nll(logp, target, reduction, weight=None, ignore_index=-100):
    if logp.ndim == 1:
        w = _nll_weights(logp, target, weight, ignore_index)
        picked = -logp[target if target != ignore_index else 0] * w
        return picked / w if reduction == "mean" else picked
    if logp.ndim == 2 and _all_weights_one(target, weight, ignore_index):  # as below, a third of the numpy calls
        picked = -logp[np.arange(logp.shape[0]), target]
        return picked.sum() / logp.dtype.type(picked.size) if reduction == "mean" else _reduce(picked, reduction)
    t = np.where(target == ignore_index, 0, target)
    w = _nll_weights(logp, target, weight, ignore_index)
    picked = -np.take_along_axis(logp, np.expand_dims(t, 1), axis=1).squeeze(1) * w
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return picked.sum() / w.sum()  # PyTorch: NaN when every target is ignored
    return _reduce(picked, reduction)


def _nll_vjp(g, ans, logp, target, reduction, weight=None, ignore_index=-100):
    if logp.ndim == 2 and _all_weights_one(target, weight, ignore_index) and type(g) is not Graphed:
        z = np.zeros_like(logp)  # as _nll's fast path: every weight 1
        z[np.arange(logp.shape[0]), target] = -(g / logp.dtype.type(target.size) if reduction == "mean" else g)
        return z
    w = _nll_weights(logp, target, weight, ignore_index)
    if type(g) is Graphed:  # the same placement as one differentiable scatter
        if logp.ndim == 1:
            picked = -g * w / w if reduction == "mean" else -g * w
            return _scatter(logp.shape, logp.dtype, target if target != ignore_index else 0,
                            picked * (target != ignore_index), kind="select")
        scale = g / w.sum() if reduction == "mean" else g
        key = (np.arange(logp.shape[0]), np.where(target == ignore_index, 0, target))
        return _scatter(logp.shape, logp.dtype, key, -scale * w, kind="index")
    z = np.zeros_like(logp)
    if logp.ndim == 1:
        if target != ignore_index:
            z[target] = -g * w / w if reduction == "mean" else -g * w
        return z
    rows = np.arange(logp.shape[0])
    scale = g / w.sum() if reduction == "mean" else g
    z[rows, np.where(target == ignore_index, 0, target)] = -scale * w
    return z


def _weighted(x, weight):
    return x if weight is None else x * weight


def _bce(p, y, reduction, weight=None):
    # NOTE: PyTorch clamps each log at -100 so p = 0 or 1 gives a finite loss.
    with np.errstate(divide="ignore"):
        loss = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))
    return _reduce(_weighted(loss, weight), reduction)


def _bce_vjp_p(g, ans, p, y, reduction, weight=None):
    # NOTE: PyTorch's epsilon keeps the denominator p(1 - p) away from zero.
    return _weighted(_reduce_grad(g, p.shape, reduction) * (p - y) / np.maximum(p * (1 - p), 1e-12), weight)


def _bce_logits(x, y, reduction, weight=None, pos_weight=None):
    # NOTE: max(x, 0) - x*y + log(1 + e^{-|x|}) never overflows, unlike log(sigmoid(x)).
    if pos_weight is None:
        loss = np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))
    else:  # PyTorch's: (1 - y) x + (1 + (pw - 1) y) softplus(-x)
        loss = (1 - y) * x + (1 + (pos_weight - 1) * y) * (np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x))))
    return _reduce(_weighted(loss, weight), reduction)


def _bce_logits_vjp_x(g, ans, x, y, reduction, weight=None, pos_weight=None):
    gr = _reduce_grad(g, x.shape, reduction)
    if pos_weight is None:
        return _weighted(gr * (_sigmoid(x) - y), weight)
    return _weighted(gr * ((1 - y) - (1 + (pos_weight - 1) * y) * _sigmoid(-x)), weight)


def _bce_logits_vjp_y(g, ans, x, y, reduction, weight=None, pos_weight=None):
    gr = _reduce_grad(g, x.shape, reduction)
    if pos_weight is None:
        return _weighted(gr * -x, weight)
    return _weighted(gr * (-x + (pos_weight - 1) * (np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x))))), weight)


def _sigmoid(a):
    # NOTE: the two branches keep exp() from overflowing for large |a|.
    if type(a) is Graphed:
        return _graphed_op("sigmoid", (a,))
    if _is_bool(a):
        a = a.astype(np.float32)  # torch: sigmoid of a bool tensor is float
    with np.errstate(over="ignore"):
        return np.where(a >= 0, 1 / (1 + np.exp(-a)), np.exp(a) / (1 + np.exp(a))).astype(a.dtype)


def _addmm(c, a, b):
    out = a @ b
    if getattr(c, "dtype", None) != out.dtype:
        return out + c
    out += c  # in place: one allocation fewer than c + a @ b
    return out


def _mse_diff(a, b):
    if _is_bool(a) and _is_bool(b):
        raise NotImplementedError("\"mse_cpu\" not implemented for 'Bool'")
    if _is_bool(a):
        a = np.asarray(a, dtype=np.result_type(b))
    if _is_bool(b):
        b = np.asarray(b, dtype=np.result_type(a))
    return np.subtract(a, b)


def _mse_vjp(g, a, b, reduction, sign):
    scale = 2 * sign * g
    if reduction == "mean":
        scale = scale / a.size
    return (a - b) * scale


def _mm_grad_b(g, a, b):
    """d(a @ b)/db in b's own memory layout: for b = W.t() (an F-ordered view) the gradient is built
    transposed, so after TBackward0 the weight's gradient is C-ordered like the weight itself.
    NOTE: a layout mismatch makes every later elementwise update of the weight ~10x slower."""
    if b.flags.f_contiguous and not b.flags.c_contiguous:
        return (g.T @ a).T
    return a.T @ g


def _swap(m):
    return np.swapaxes(m, -1, -2)


def _pow_scalar_vjp(g, ans, a, c):
    return g * 0 if c == 0 else g * (c * a ** (c - 1))


def _pow_exponent_vjp(g, ans, a, b):
    # NOTE: PyTorch defines d(a^b)/db as 0 where a == 0 and b >= 0 instead of 0 * log(0) = nan.
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * np.where((a == 0) & (b >= 0), 0, ans * np.log(a))


# Binary, broadcasting
defop("add", "AddBackward0", "+", np.add, (lambda g, ans, a, b: g, "1"), (lambda g, ans, a, b: g, "1"), saves=False,
      broadcasts=True)
defop("sub", "SubBackward0", "−", _sub, (lambda g, ans, a, b: g, "1"), (lambda g, ans, a, b: -g, "-1"), saves=False,
      broadcasts=True)
defop("mul", "MulBackward0", "×", np.multiply, (lambda g, ans, a, b: g * b, "b"), (lambda g, ans, a, b: g * a, "a"),
      needs=("b", "a"), broadcasts=True)
defop("div", "DivBackward0", "÷", np.true_divide, (lambda g, ans, a, b: g / b, r"\frac{1}{b}"),
      (lambda g, ans, a, b: -g * a / (b * b), r"-\frac{a}{b^{2}}"), needs=("b", "ab"), broadcasts=True)
defop("pow", "PowBackward1", "pow", np.power, (lambda g, ans, a, b: g * b * a ** (b - 1), r"b\,a^{b-1}"),
      (_pow_exponent_vjp, r"a^{b}\ln a"), needs=("ab", "ar"), broadcasts=True)
defop("maximum", "MaximumBackward0", "max", np.maximum,
      (lambda g, ans, a, b: g * ((a > b) + 0.5 * (a == b)), r"\mathbb{1}[a>b]"),
      (lambda g, ans, a, b: g * ((b > a) + 0.5 * (a == b)), r"\mathbb{1}[b>a]"), needs=("ab", "ab"), broadcasts=True)
defop("minimum", "MinimumBackward0", "min", np.minimum,
      (lambda g, ans, a, b: g * ((a < b) + 0.5 * (a == b)), r"\mathbb{1}[a<b]"),
      (lambda g, ans, a, b: g * ((b < a) + 0.5 * (a == b)), r"\mathbb{1}[b<a]"), needs=("ab", "ab"), broadcasts=True)
defop("where", "WhereBackward0", "where", np.where, (None, ""),
      (lambda g, ans, c, a, b: g * c, r"\mathbb{1}[c]"), (lambda g, ans, c, a, b: g * ~c, r"\mathbb{1}[\lnot c]"),
      needs=("", "a", "a"), broadcasts=True)

# Unary (params after the input)
defop("pow_scalar", "PowBackward0", "pow", np.power, (_pow_scalar_vjp, r"c\,a^{c-1}"), needs=("a",),
      params=Params("right", ("exponent",), "**"))
defop("rpow", "PowBackward2", "pow", lambda a, c: np.power(c, a), (lambda g, ans, a, c: g * ans * np.log(c), r"c^{a}\ln c"),
      needs=("r",), params=Params("left", ("base",), "**"))
defop("rsub", "RsubBackward1", "−", lambda a, c: _sub(c, a), (lambda g, ans, a, c: -g, "-1"), saves=False,
      params=Params("left", ("minuend",), "−"))
defop("neg", "NegBackward0", "−", _neg, (lambda g, ans, a: -g, "-1"), saves=False)
defop("exp", "ExpBackward0", "exp", np.exp, (lambda g, ans, a: g * ans, r"e^{a}"), needs=("r",))
defop("log", "LogBackward0", "log", np.log, (lambda g, ans, a: g / a, r"\frac{1}{a}"), needs=("a",))
defop("sin", "SinBackward0", "sin", np.sin, (lambda g, ans, a: g * np.cos(a), r"\cos a"), needs=("a",))
defop("cos", "CosBackward0", "cos", np.cos, (lambda g, ans, a: -g * np.sin(a), r"-\sin a"), needs=("a",))
defop("tanh", "TanhBackward0", "tanh", np.tanh, (lambda g, ans, a: g * (1 - ans * ans), r"1-\tanh^{2} a"), needs=("r",))
defop("sigmoid", "SigmoidBackward0", "σ", _sigmoid, (lambda g, ans, a: g * ans * (1 - ans), r"\sigma(a)\,(1-\sigma(a))"),
      needs=("r",))
defop("relu", "ReluBackward0", "relu", lambda a: np.maximum(a, 0), (lambda g, ans, a: g * (ans > 0), r"\mathbb{1}[a>0]"),
      needs=("r",))
defop("abs", "AbsBackward0", "abs", np.abs, (lambda g, ans, a: g * np.sign(a), r"\operatorname{sign}(a)"), needs=("a",))
defop("sqrt", "SqrtBackward0", "√", np.sqrt, (lambda g, ans, a: g / (2 * ans), r"\frac{1}{2\sqrt{a}}"), needs=("r",))
defop("reciprocal", "ReciprocalBackward0", "1/x", np.reciprocal, (lambda g, ans, a: -g * ans * ans, r"-\frac{1}{a^{2}}"),
      needs=("r",))
defop("clamp", "ClampBackward1", "clamp", lambda a, lo, hi: np.clip(a, lo, hi),
      (lambda g, ans, a, lo, hi: g * (((a >= lo) if lo is not None else True) & ((a <= hi) if hi is not None else True)),
       r"\mathbb{1}[lo \le a \le hi]"), needs=("a",), params=Params("clamp", ("min", "max")))

# Reductions
defop("sum", "SumBackward0", "sum", lambda a: a.sum(), (lambda g, ans, a: np.broadcast_to(g, a.shape), "1"), saves=False)
defop("sum_dim", "SumBackward1", "sum", lambda a, dims, keep: a.sum(axis=dims, keepdims=keep),
      (lambda g, ans, a, dims, keep: _expand_reduced(g, a.shape, dims, keep), "1"), saves=False, params=REDUCE)
defop("mean", "MeanBackward0", "mean", lambda a: a.mean(), (lambda g, ans, a: np.broadcast_to(g / a.size, a.shape), r"\frac{1}{n}"),
      saves=False)
defop("mean_dim", "MeanBackward1", "mean", lambda a, dims, keep: a.mean(axis=dims, keepdims=keep),
      (lambda g, ans, a, dims, keep: _expand_reduced(g / _count(a.shape, dims), a.shape, dims, keep), r"\frac{1}{n}"),
      saves=False, params=REDUCE)
defop("norm", "LinalgVectorNormBackward0", "‖·‖", lambda a: np.sqrt((a * a).sum()),
      (lambda g, ans, a: g * a / ans if ans != 0 else g * 0 * a, r"\frac{a}{\lVert a\rVert}"), needs=("ar",))
defop("max", "MaxBackward1", "max", lambda a: a.max(), (lambda g, ans, a: _evenly(a, ans, g), r"\mathbb{1}[a=\max a]"),
      needs=("ar",))
defop("min", "MinBackward1", "min", lambda a: a.min(), (lambda g, ans, a: _evenly(a, ans, g), r"\mathbb{1}[a=\min a]"),
      needs=("ar",))
defop("max_dim", "MaxBackward0", "max", lambda a, dim, keep: a.max(axis=dim, keepdims=keep),
      (lambda g, ans, a, dim, keep: _reduce_arg(a, ans, dim, keep, g, np.argmax), r"\mathbb{1}[i=\arg\max a]"),
      needs=("a",), params=REDUCE)
defop("min_dim", "MinBackward0", "min", lambda a, dim, keep: a.min(axis=dim, keepdims=keep),
      (lambda g, ans, a, dim, keep: _reduce_arg(a, ans, dim, keep, g, np.argmin), r"\mathbb{1}[i=\arg\min a]"),
      needs=("a",), params=REDUCE)

# Shape and indexing (views: no saved tensors)
defop("view", "ViewBackward0", "view", lambda a, shape: np.reshape(a, shape), (lambda g, ans, a, shape: g.reshape(a.shape), "1"),
      saves=False, view=True, params=Params("call", ("shape",)))
defop("unsafe_view", "UnsafeViewBackward0", "view", lambda a, shape: np.reshape(a, shape),
      (lambda g, ans, a, shape: g.reshape(a.shape), "1"), saves=False, params=Params("call", ("shape",)))
defop("to_copy", "ToCopyBackward0", "to", lambda a, dt: a.astype(dt), (lambda g, ans, a, dt: g.astype(a.dtype), "1"), saves=False,
      params=Params("call", ("dtype",)))
defop("clone", "CloneBackward0", "clone", np.copy, (lambda g, ans, a: g, "1"), saves=False)
defop("t", "TBackward0", "ᵀ", lambda a: a.T, (lambda g, ans, a: g.T, r"(\cdot)^{\top}"), saves=False, view=True)
defop("transpose", "TransposeBackward0", "transpose", lambda a, d0, d1: np.swapaxes(a, d0, d1),
      (lambda g, ans, a, d0, d1: np.swapaxes(g, d0, d1), r"(\cdot)^{\top}"), saves=False, view=True,
      params=Params("args", ("dim0", "dim1")))
defop("permute", "PermuteBackward0", "permute", lambda a, dims: np.transpose(a, dims),
      (lambda g, ans, a, dims: np.transpose(g, np.argsort(dims)), r"(\cdot)^{\top}"), saves=False, view=True,
      params=Params("call", ("dims",)))
defop("squeeze", "SqueezeBackward0", "squeeze", np.squeeze, (lambda g, ans, a: g.reshape(a.shape), "1"), saves=False, view=True)
defop("squeeze_dim", "SqueezeBackward1", "squeeze", lambda a, dim: np.squeeze(a, dim) if a.shape[dim] == 1 else a,
      (lambda g, ans, a, dim: g.reshape(a.shape), "1"), saves=False, view=True, params=DIM)
defop("squeeze_dims", "SqueezeBackward2", "squeeze", lambda a, dims: np.squeeze(a, dims),
      (lambda g, ans, a, dims: g.reshape(a.shape), "1"), saves=False, view=True, params=Params("call", ("dims",)))
# The same squeeze as PyTorch's matmul emits it for a vector on the left (another overload, another name).
defop("matmul_squeeze", "SqueezeBackward4", "squeeze", lambda a, dims: np.squeeze(a, dims),
      (lambda g, ans, a, dims: g.reshape(a.shape), "1"), saves=False, view=True, params=Params("call", ("dims",)))
defop("unsqueeze", "UnsqueezeBackward0", "unsqueeze", np.expand_dims, (lambda g, ans, a, dim: g.reshape(a.shape), "1"),
      saves=False, view=True, params=DIM)
defop("expand", "ExpandBackward0", "expand", np.broadcast_to, (lambda g, ans, a, shape: unbroadcast(g, a.shape), r"\textstyle\sum"),
      saves=False, view=True, params=Params("call", ("size",)))
defop("select", "SelectBackward0", "[i]", lambda a, key: a[key],
      (lambda g, ans, a, key: _scatter(a.shape, g.dtype, key, g, kind="select"), "1"), saves=False, view=True,
      params=Params("subscript", ("index",)))
defop("slice", "SliceBackward0", "[a:b]", lambda a, key: a[key],
      (lambda g, ans, a, key: _scatter(a.shape, g.dtype, key, g), "1"), saves=False, view=True,
      params=Params("subscript", ("index",)))
defop("index", "IndexBackward0", "[idx]", lambda a, key: a[key],
      (lambda g, ans, a, key: _scatter(a.shape, g.dtype, key, g, accumulate=True, kind="index"), "1"), needs=("",),
      params=Params("hidden", ("index",)))
defop("cat", "CatBackward0", "cat", lambda arrays, dim: np.concatenate(arrays, axis=dim),
      (lambda g, ans, i, arrays, dim: np.split(g, np.cumsum([x.shape[dim] for x in arrays])[:-1], axis=dim)[i], "1"),
      saves=False, variadic=True, params=DIM)
defop("stack", "StackBackward0", "stack", lambda arrays, dim: np.stack(arrays, axis=dim),
      (lambda g, ans, i, arrays, dim: np.take(g, i, axis=dim), "1"), saves=False, variadic=True, params=DIM)

# Higher-order gradients (create_graph=True): the backward of indexing as ops, so their own gradient (indexing
# again) is recorded too; `_scatter` emits them when a VJP runs on tensors.
for _kind, _grad_fn in (("select", "SelectBackwardBackward0"), ("slice", "SliceBackwardBackward0"),
                        ("index", "IndexPutBackward0")):
    defop(_kind + "_backward", _grad_fn, _kind + "ᵀ", lambda g, shape, key, acc: _scatter(shape, g.dtype, key, g, acc),
          (lambda g, ans, a, shape, key, acc: g[key], "1"), saves=False, params=Params("hidden", ("size", "index", "accumulate")))
# `.grad` of a leaf after backward(create_graph=True): PyTorch's AccumulateGrad copies the incoming gradient
defop("grad_copy", "CopyBackwards", "copy", np.copy, (lambda g, ans, a: g, "1"), saves=False)

# Linear algebra
defop("mm", "MmBackward0", "matmul", np.matmul, (lambda g, ans, a, b: g @ b.T, r"\,\cdot B^{\top}"),
      (lambda g, ans, a, b: _mm_grad_b(g, a, b), r"A^{\top}\cdot"), needs=("b", "a"))
defop("mv", "MvBackward0", "matmul", np.matmul, (lambda g, ans, a, b: np.outer(g, b), r"\,\cdot v^{\top}"),
      (lambda g, ans, a, b: a.T @ g, r"A^{\top}\cdot"), needs=("b", "a"))
defop("dot", "DotBackward0", "dot", np.dot, (lambda g, ans, a, b: g * b, "b"), (lambda g, ans, a, b: g * a, "a"),
      needs=("b", "a"))
defop("bmm", "BmmBackward0", "matmul", np.matmul, (lambda g, ans, a, b: g @ _swap(b), r"\,\cdot B^{\top}"),
      (lambda g, ans, a, b: _swap(a) @ g, r"A^{\top}\cdot"), needs=("b", "a"))
# c (the bias) broadcasts against a @ b
defop("addmm", "AddmmBackward0", "addmm", _addmm, (lambda g, ans, c, a, b: g, "1"),
      (lambda g, ans, c, a, b: g @ b.T, r"\,\cdot B^{\top}"), (lambda g, ans, c, a, b: _mm_grad_b(g, a, b), r"A^{\top}\cdot"),
      needs=("", "c", "b"), broadcasts=True)

# Softmax and losses
defop("softmax", "SoftmaxBackward0", "softmax", _softmax,
      (lambda g, ans, a, dim: ans * (g - (g * ans).sum(axis=dim, keepdims=True)), r"\operatorname{diag}(s)-s\,s^{\top}"),
      needs=("r",), params=DIM)
defop("log_softmax", "LogSoftmaxBackward0", "log_softmax", _log_softmax,
      (lambda g, ans, a, dim: g - np.exp(ans) * g.sum(axis=dim, keepdims=True), r"I-\mathbf{1}\,s^{\top}"),
      needs=("r",), params=DIM)
defop("mse_loss", "MseLossBackward0", "mse", lambda a, b, r: _reduce(np.square(_mse_diff(a, b)), r),
      (lambda g, ans, a, b, r: _mse_vjp(g, a, b, r, 1), r"\frac{2}{n}(a-b)"),
      (lambda g, ans, a, b, r: _mse_vjp(g, a, b, r, -1), r"-\frac{2}{n}(a-b)"), needs=("ab", "ab"), broadcasts=True,
      params=REDUCTION)
defop("nll_loss", "NllLossBackward0", "nll", _nll, (_nll_vjp, r"-\frac{1}{n}\mathbb{1}[j=y_i]"), (None, ""), needs=("b", ""),
      params=REDUCTION)
# issue 10: NLL over (N, C, H, W) (PyTorch's nll_loss2d; other ranks are viewed as (N, C, 1, -1) first)
defop("nll_loss2d", "NllLoss2DBackward0", "nll", _nll, (_nn.nll2d_vjp, r"-\frac{1}{n}\mathbb{1}[j=y_i]"), (None, ""),
      needs=("b", ""), params=REDUCTION)
defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", "bce", _bce, (_bce_vjp_p, r"\frac{p-y}{n\,p(1-p)}"),
      (lambda g, ans, p, y, r, w=None: _weighted(_reduce_grad(g, p.shape, r) * (np.log1p(-p) - np.log(p)), w),
       r"\frac{1}{n}\ln\frac{1-p}{p}"),
      needs=("ab", "ab"), broadcasts=True, params=REDUCTION)
defop("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0", "bce_logits", _bce_logits,
      (_bce_logits_vjp_x, r"\frac{\sigma(x)-y}{n}"), (_bce_logits_vjp_y, r"-\frac{x}{n}"), needs=("ab", "ab"),
      broadcasts=True,
      params=REDUCTION)

# No derivative: the graph still shows them, and their outputs never require grad.
defop("eq", None, "==", np.equal, saves=False, broadcasts=True)
defop("ne", None, "≠", np.not_equal, saves=False, broadcasts=True)
defop("lt", None, "<", np.less, saves=False, broadcasts=True)
defop("le", None, "≤", np.less_equal, saves=False, broadcasts=True)
defop("gt", None, ">", np.greater, saves=False, broadcasts=True)
defop("ge", None, "≥", np.greater_equal, saves=False, broadcasts=True)
defop("argmax", None, "argmax", lambda a, dim=None, keep=False: np.argmax(a, axis=dim, keepdims=keep), saves=False,
      params=REDUCE)
defop("argmin", None, "argmin", lambda a, dim=None, keep=False: np.argmin(a, axis=dim, keepdims=keep), saves=False,
      params=REDUCE)
defop("sign", None, "sign", np.sign, saves=False)
defop("logical_and", None, "and", np.logical_and, saves=False, broadcasts=True)
defop("logical_or", None, "or", np.logical_or, saves=False, broadcasts=True)
defop("invert", None, "not", lambda a: np.logical_not(a) if a.dtype.kind == "b" else np.invert(a), saves=False)

# Layers (numpy in engine/ops_nn.py). Spatial params are 2-tuples, or 1-tuples for the 1-D forms.
defop("convolution", "ConvolutionBackward0", "conv", _nn.conv_forward, (_nn.conv_vjp_input, r"\star W^{\top}"),
      (_nn.conv_vjp_weight, r"x\star"), (_nn.conv_vjp_bias, r"\textstyle\sum"), needs=("b", "a", ""),
      params=Params("keywords", ("stride", "padding", "dilation", "groups"),
                    defaults=(("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1))))
defop("constant_pad_nd", "ConstantPadNdBackward0", "pad", _nn.pad_forward, (_nn.pad_vjp, "1"), saves=False,
      params=Params("args", ("pad", "value")))
# F.pad(mode="circular") (conv padding_mode): PyTorch builds it as a chain of slice copies (its output's node is
# CopySlices), one gather here. Reflect and replicate are the ReflectionPad/ReplicationPad entries further down.
defop("circular_pad", "CopySlices", "pad", _nn.mode_pad_forward, (_nn.mode_pad_vjp, "1"), saves=False,
      params=Params("args", ("pad", "mode")))
defop("max_pool2d", "MaxPool2DWithIndicesBackward0", "max_pool", _nn.max_pool_forward,
      (_nn.max_pool_vjp, r"\mathbb{1}[a=\max_{window}]"), needs=("ar",),
      params=Params("keywords", ("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
                    defaults=(("stride", SameAs("kernel_size")), ("padding", 0), ("dilation", 1),
                              ("ceil_mode", False))))
defop("avg_pool2d", "AvgPool2DBackward0", "avg_pool", _nn.avg_pool_forward, (_nn.avg_pool_vjp, r"\frac{1}{k}"),
      saves=False, params=Params("keywords", ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                              "divisor_override"),
                                 defaults=(("stride", SameAs("kernel_size")), ("padding", 0), ("ceil_mode", False),
                                           ("count_include_pad", True), ("divisor_override", None))))
defop("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", "adaptive_avg_pool", _nn.adaptive_avg_forward,
      (_nn.adaptive_avg_vjp, r"\frac{1}{k}"), saves=False, params=Params("keywords", ("output_size",)))
# weight and bias may be None (affine=False); the running statistics are inputs that get no gradient.
defop("batch_norm", "NativeBatchNormBackward0", "batch_norm", _nn.batch_norm_forward,
      (_nn.batch_norm_vjp_input, r"\frac{\gamma}{\sigma}(\ldots)"), (_nn.batch_norm_vjp_weight, r"\hat{x}"),
      (_nn.batch_norm_vjp_bias, "1"), (None, ""), (None, ""), needs=("ab", "a", "", "", ""),
      params=Params("args", ("training", "eps")))
defop("layer_norm", "NativeLayerNormBackward0", "layer_norm", _nn.layer_norm_forward,
      (_nn.layer_norm_vjp_input, r"\frac{\gamma}{\sigma}(\ldots)"), (_nn.layer_norm_vjp_weight, r"\hat{x}"),
      (_nn.layer_norm_vjp_bias, "1"), needs=("ab", "a", ""), params=Params("args", ("normalized_shape", "eps")))
defop("embedding", "EmbeddingBackward0", "embedding", lambda w, idx, padding_idx: w[idx], (_nn.embedding_vjp, "1"),
      (None, ""), needs=("b", ""), params=Params("hidden", ("padding_idx",)))

# Activations (the modules of engine/nn/activation.py)
defop("gelu", "GeluBackward0", "gelu", _nn.gelu, (_nn.gelu_vjp, r"\Phi(a)+a\,\varphi(a)"), needs=("a",),
      params=Params("args", ("approximate",)))
defop("leaky_relu", "LeakyReluBackward0", "leaky_relu", lambda a, s: np.where(a > 0, a, a * s).astype(a.dtype),
      (lambda g, ans, a, s: g * np.where(a > 0, 1, s), r"\mathbb{1}[a>0]+s\,\mathbb{1}[a\le 0]"), needs=("a",),
      params=Params("args", ("negative_slope",)))
defop("elu", "EluBackward0", "elu", _nn.elu, (_nn.elu_vjp, r"\mathbb{1}[a>0]+\alpha e^{a}\mathbb{1}[a\le 0]"),
      needs=("a",), params=Params("args", ("alpha", "scale", "input_scale")))
defop("celu", "CeluBackward0", "celu", lambda a, al: _nn.elu(a, al, 1.0, 1.0 / al),
      (lambda g, ans, a, al: _nn.elu_vjp(g, ans, a, al, 1.0, 1.0 / al), r"\mathbb{1}[a>0]+e^{a/\alpha}\mathbb{1}[a\le 0]"),
      needs=("a",), params=Params("args", ("alpha",)))
defop("silu", "SiluBackward0", "silu", lambda a: a * _nn.sigmoid(a),
      (lambda g, ans, a: g * _nn.sigmoid(a) * (1 + a * (1 - _nn.sigmoid(a))), r"\sigma(a)(1+a(1-\sigma(a)))"),
      needs=("a",))
defop("softplus", "SoftplusBackward0", "softplus", _nn.softplus, (_nn.softplus_vjp, r"\sigma(\beta a)"), needs=("a",),
      params=Params("args", ("beta", "threshold")))
defop("mish", "MishBackward0", "mish", _nn.mish, (_nn.mish_vjp, r"\tanh(\zeta(a))+a\,\operatorname{sech}^{2}\ldots"),
      needs=("a",))
defop("hardtanh", "HardtanhBackward0", "hardtanh", lambda a, lo, hi: np.clip(a, lo, hi),
      (lambda g, ans, a, lo, hi: g * ((a > lo) & (a < hi)), r"\mathbb{1}[lo<a<hi]"), needs=("a",),
      params=Params("args", ("min_val", "max_val")))
defop("logsigmoid", "LogSigmoidBackward0", "logsigmoid", _nn.logsigmoid,
      (lambda g, ans, a: g * _nn.sigmoid(-a), r"\sigma(-a)"), needs=("a",))
defop("hardswish", "HardswishBackward0", "hardswish", _nn.hardswish, (_nn.hardswish_vjp, r"\frac{2a+3}{6}"),
      needs=("a",))
defop("hardsigmoid", "HardsigmoidBackward0", "hardsigmoid", lambda a: np.clip(a / 6 + 0.5, 0, 1),
      (lambda g, ans, a: g * ((a > -3) & (a < 3)) / 6, r"\tfrac{1}{6}\mathbb{1}[|a|<3]"), needs=("a",))
defop("threshold", "ThresholdBackward0", "threshold", lambda a, th, v: np.where(a > th, a, v).astype(a.dtype),
      (lambda g, ans, a, th, v: g * (a > th), r"\mathbb{1}[a>t]"), needs=("a",), params=Params("args", ("threshold", "value")))

# What PyTorch's C++ losses compose with (Tensor-Scalar overloads), and the regression losses
defop("mul_scalar", "MulBackward1", "×", lambda a, c: a * c, (lambda g, ans, a, c: g * c, "c"), saves=False,
      params=Params("right", ("other",), "×"))
defop("div_scalar", "DivBackward1", "÷", lambda a, c: a / c, (lambda g, ans, a, c: g / c, r"\frac{1}{c}"), saves=False,
      params=Params("right", ("other",), "÷"))
defop("masked_fill", "MaskedFillBackward0", "masked_fill", lambda a, m, v: np.where(m, a.dtype.type(v), a),
      (lambda g, ans, a, m, v: np.where(m, 0, g), r"\mathbb{1}[\lnot m]"), (None, ""), needs=("b", ""),
      broadcasts=True, params=Params("args", ("value",)))
defop("smooth_l1_loss", "SmoothL1LossBackward0", "smooth_l1", _nn.smooth_l1,
      (_nn.smooth_l1_vjp, r"\operatorname{clip}(\frac{a-b}{\beta})"),
      (lambda g, *args: -_nn.smooth_l1_vjp(g, *args), r"-\operatorname{clip}(\frac{a-b}{\beta})"), needs=("ab", "ab"),
      broadcasts=True, params=Params("reduction", ("reduction", "beta")))
defop("huber_loss", "HuberLossBackward0", "huber", _nn.huber, (_nn.huber_vjp, r"\operatorname{clip}_{\delta}(a-b)"),
      (lambda g, *args: -_nn.huber_vjp(g, *args), r"-\operatorname{clip}_{\delta}(a-b)"), needs=("ab", "ab"),
      broadcasts=True, params=Params("reduction", ("reduction", "delta")))

# One chunk of PyTorch's unsafe_chunk (the recurrent cells' gates): PyTorch draws one UnsafeSplit node with
# several outputs; an op here has one output, so each chunk is its own node of that name.
defop("unsafe_chunk", "UnsafeSplitBackward0", "chunk", _nn.chunk_forward, (_nn.chunk_vjp, "1"), saves=False,
      params=Params("args", ("index", "chunks", "dim")))

# issue 10: one step of nn.RNN / nn.GRU's input projection, computed for the whole sequence and unbound over time
# (PyTorch's one UnbindBackward0 node has an output per step; here each step's slice is its own node of that name).
defop("unbind_step", "UnbindBackward0", "unbind", lambda a, i: a[i],
      (lambda g, ans, a, i: _scatter(a.shape, g.dtype, i, g), "1"), saves=False, view=True,
      params=Params("args", ("index",)))

# nn.LSTM's layer as PyTorch's CPU kernel runs it: one node for the whole sequence (inputs x, w_ih, w_hh, b_ih,
# b_hh, h0, c0; param reverse), backward through time in one pass. The layer's last cell state is a second op
# of the same node name (an op has one output).
_LSTM_LATEX = (r"\partial h/\partial x", r"\partial h/\partial W_{ih}", r"\partial h/\partial W_{hh}", "1", "1",
               r"\partial h/\partial h_0", r"\partial h/\partial c_0")
defop("lstm_layer", "MkldnnRnnLayerBackward0", "lstm", _nn.lstm_layer_forward,
      *[(_nn.lstm_vjp(k), _LSTM_LATEX[k]) for k in range(7)], needs=("abc",) * 7, params=Params("args", ("reverse",)))
defop("lstm_cell_state", "MkldnnRnnLayerBackward0", "lstm c", _nn.lstm_cell_state_forward,
      *[(_nn.lstm_vjp(k, last_c=True), _LSTM_LATEX[k]) for k in range(7)], needs=("abc",) * 7,
      params=Params("args", ("reverse",)))


# ================================================================ Tensor functions tutorials use (issue 9 §5)
# One section, appended: gather/scatter, cumulative ops, sort/topk, repeat/split, triangles and diagonals,
# flip/roll/index_select, more elementwise math, prod/std/var/p-norms and reflect/replicate padding.
# (Indices are inputs that get no gradient; `dim` is already wrapped to [0, ndim).)

def _along(index, dim):
    """The full numpy index that addresses `index`'s entries along `dim` (gather's / scatter's positions)."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _fit(src, shape):
    """src cut to shape in every dim (gather / scatter read only the index's extent of their other operands)."""
    return src[tuple(slice(0, n) for n in shape)]


def _gather(a, index, dim):
    return a[_along(index, dim)] if index.size else np.zeros(index.shape, a.dtype)


def _scatter_into(a, index, src, dim, accumulate):
    """a with src's entries written (or added) at index along dim; a itself is left as it was."""
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else _fit(src, index.shape)
    key = _along(index, dim)
    if accumulate:
        return a + _scatter(a.shape, a.dtype, key, src, accumulate=True)
    hit = _scatter(a.shape, bool, key, True)
    return np.where(hit, _scatter(a.shape, a.dtype, key, src), a)


def _scatter_grad_self(g, index, dim):
    """Written positions got their value from src: no gradient flows back to them in self."""
    return np.where(_scatter(g.shape, bool, _along(index, dim), True), 0, g)


def _scatter_grad_src(g, src, index, dim):
    """The gathered gradient, zero-padded to src's shape (src may be larger than index)."""
    picked = _gather(g, index, dim)
    return picked if picked.shape == src.shape else _scatter(src.shape, g.dtype, tuple(slice(0, n) for n in index.shape), picked)


def _logsumexp(a, dims, keep):
    # NOTE: shift by the max (0 where it is ±inf) so exp() neither overflows nor turns inf - inf into nan.
    m = a.max(axis=dims, keepdims=True) if a.size else np.zeros((1,) * a.ndim, a.dtype)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(a - m).sum(axis=dims, keepdims=True)) + m
    return out if keep else np.squeeze(out, axis=dims if dims is not None else None)


def _keep(x, shape, dims, keepdim):
    """A reduction's result broadcast back to the input's shape (for VJPs that read ans)."""
    return _expand_reduced(x, shape, dims, keepdim)


def _cumsum_vjp(g, ans, a, dim):
    return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)


def _cumprod_vjp(g, ans, a, dim):
    """PyTorch's gradient with zeros: before a slice's first zero sum_{j>=k} g_j ans_j / a_k; at that zero the
    product of the others (the cumprod with the zero read as 1); after it 0."""
    if type(g) is Graphed:  # those branches cut the dependence on a zero: create_graph differentiates the products
        return vjps_by_decomposition(lambda x: _cumprod_composed(x, dim), g, (a,))[0]
    zero = a == 0
    first = zero & (np.cumsum(zero, axis=dim) == 1)
    before = np.cumsum(zero, axis=dim) == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = _cumsum_vjp(g * ans, None, None, dim) / np.where(before, a, 1)
    others = _cumsum_vjp(g * np.cumprod(np.where(first, 1, a), axis=dim), None, None, dim)
    return np.where(before, plain, np.where(first, others, 0))


def _cumprod_composed(a, dim):
    """cumprod as running products of slices (mul ops): what create_graph differentiates."""
    lead = (slice(None),) * dim
    run = a[lead + (slice(0, 1),)]
    parts = [run]
    for i in range(1, a.shape[dim]):
        run = run * a[lead + (slice(i, i + 1),)]
        parts.append(run)
    return np.concatenate(parts, axis=dim)


def _others_product(a, dim):
    """Product of all other elements along dim, without dividing (exact with zeros): exclusive cumprods."""
    left = np.cumprod(np.concatenate([np.ones_like(np.take(a, [0], dim)), np.take(a, np.arange(a.shape[dim] - 1), dim)],
                                     axis=dim), axis=dim)
    right = np.flip(np.cumprod(np.flip(np.concatenate([np.take(a, np.arange(1, a.shape[dim]), dim),
                                                       np.ones_like(np.take(a, [0], dim))], axis=dim), dim), axis=dim), dim)
    return left * right


def _prod_all_vjp(g, ans, a):
    return g * np.reshape(_others_product(np.reshape(a, -1), 0), a.shape) if a.size else np.zeros_like(a)


def _prod_dim_vjp(g, ans, a, dim, keep):
    return _expand_reduced(g, a.shape, (dim,), keep) * _others_product(a, dim) if a.size else np.zeros_like(a)


def _sort_order(a, dim, descending):
    """Stable indices along dim; descending keeps equal elements in their original order (PyTorch's stable=True)
    and puts NaN first, ascending puts it last, as PyTorch does."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    key = a.astype(np.int64 if a.dtype.kind in "bu" else a.dtype, copy=False)
    if key.dtype.kind == "f":
        key = np.where(np.isnan(key), -np.inf, -key)  # NOTE: NaN sorts as the largest; -inf then ties with NaN
        return np.argsort(key, axis=dim, kind="stable")
    return np.argsort(-key, axis=dim, kind="stable")


def _topk_order(a, k, dim, largest):
    return np.take(_sort_order(a, dim, largest), np.arange(k), axis=dim) if a.ndim else np.zeros((), np.int64)


def _take_order(a, order, dim):
    return np.take_along_axis(a, order, axis=dim) if a.ndim else a.copy()


def _put_order(g, order, dim, shape):
    return _scatter(shape, g.dtype, _along(order, dim), g) if shape else g


def _repeat_vjp(g, ans, a, reps):
    """Sum the copies: g viewed as (r0, s0, r1, s1, ...) summed over every r (leading extra dims summed whole)."""
    lead = len(reps) - a.ndim
    g = np.sum(np.reshape(g, (-1,) + np.shape(g)[lead:]), axis=0) if lead else g
    split = [n for r, s in zip(reps[lead:], a.shape) for n in (r, s)]
    return np.sum(np.reshape(g, split), axis=tuple(range(0, 2 * a.ndim, 2))) if a.ndim else g


def _cut(dim, start, stop):
    return (slice(None),) * dim + (slice(start, stop),)


def _diag_key(n, k):
    """Positions of the k-th diagonal of length n in a matrix."""
    i = np.arange(n)
    return (i + max(-k, 0), i + max(k, 0))


def _diag_embed(a, k):
    n = a.shape[0] + abs(k)
    return _scatter((n, n), a.dtype, _diag_key(a.shape[0], k), a)


def _diagonal_vjp(g, ans, a, k, d1=0, d2=1):
    """g written on the k-th diagonal of dims (d1, d2) of zeros shaped like a."""
    moved = tuple(n for i, n in enumerate(a.shape) if i not in (d1, d2)) + (a.shape[d1], a.shape[d2])
    return np.moveaxis(_scatter(moved, g.dtype, (Ellipsis, *_diag_key(g.shape[-1], k)), g), (-2, -1), (d1, d2))


def _index_select_vjp(g, ans, a, index, dim):
    return _scatter(a.shape, g.dtype, _cut(dim, None, None)[:dim] + (index,), g, accumulate=True)


def _round(a, decimals):
    if a.dtype.kind in "iub":
        return a.copy()
    if decimals == 0:
        return np.round(a)
    with np.errstate(over="ignore", invalid="ignore"):  # NOTE: 10^d overflows to inf for a program's huge d
        scale = np.power(np.float64(10.0), decimals).astype(a.dtype)
        return np.round(a * scale) / scale  # PyTorch's: round(x * 10^d) / 10^d in the input's dtype


def _corrected(a, dims, correction):
    n = _count(a.shape, dims)
    return a.dtype.type(max(n - correction, 0)) if a.dtype.kind == "f" else max(n - correction, 0)


def _var(a, dims, correction, keep):
    centred = a - a.mean(axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (centred * centred).sum(axis=dims, keepdims=keep) / _corrected(a, dims, correction)


def _var_vjp(g, ans, a, dims, correction, keep):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _expand_reduced(g, a.shape, dims, keep) * (2 * (a - a.mean(axis=dims, keepdims=True))
                                                           / _corrected(a, dims, correction))


def _std_vjp(g, ans, a, dims, correction, keep):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _var_vjp(g / (2 * ans), None, a, dims, correction, keep)


def _vector_norm(a, p, dims, keep):
    x = np.abs(a)
    if p == 2:
        return np.sqrt((x * x).sum(axis=dims, keepdims=keep))
    if p == np.inf:
        return x.max(axis=dims, keepdims=keep) if x.size else np.zeros(_reduced_shape(x, dims, keep), x.dtype)
    if p == -np.inf:
        return x.min(axis=dims, keepdims=keep)
    if p == 0:
        return (x != 0).sum(axis=dims, keepdims=keep).astype(a.dtype)
    if p == 1:
        return x.sum(axis=dims, keepdims=keep)
    return (x ** p).sum(axis=dims, keepdims=keep) ** (1.0 / p)


def _reduced_shape(x, dims, keep):
    dims = range(x.ndim) if dims is None else dims
    return tuple(1 if i in dims else n for i, n in enumerate(x.shape) if keep or i not in dims)


def _vector_norm_vjp(g, ans, a, p, dims, keep):
    """PyTorch's: sign(a)|a|^(p-1) / ‖a‖^(p-1); at a zero norm 0; for ±inf the gradient is shared evenly among
    the tied extremes; for p = 0 it is zero."""
    g, n = _expand_reduced(g, a.shape, dims, keep), _expand_reduced(ans, a.shape, dims, keep)
    x = np.abs(a)
    if p == 0:
        return np.zeros_like(a)
    if p == 1:
        return g * np.sign(a)
    if p in (np.inf, -np.inf):
        tied = x == n
        return g * np.sign(a) * tied / tied.sum(axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = a / n if p == 2 else np.sign(a) * x ** (p - 1) / n ** (p - 1)
    return g * np.where(n == 0, 0, scale)


def _pad_index(n, left, right, mode):
    """Which input position each padded position reads along one dim (reflect: mirrored without the edge)."""
    index = np.pad(np.arange(n), (max(left, 0), max(right, 0)), mode="reflect" if mode == "reflect" else "edge")
    return index[max(-left, 0):len(index) - max(-right, 0)]  # a negative pad crops


def _pad_modes(a, pad, mode):
    for i in range(len(pad) // 2):
        a = np.take(a, _pad_index(a.shape[-1 - i], pad[2 * i], pad[2 * i + 1], mode), axis=a.ndim - 1 - i)
    return a


def _pad_modes_vjp(g, ans, a, pad, mode):
    for i in range(len(pad) // 2):
        axis = a.ndim - 1 - i
        index = _pad_index(a.shape[axis], pad[2 * i], pad[2 * i + 1], mode)
        shape = g.shape[:axis] + (a.shape[axis],) + g.shape[axis + 1:]
        g = _scatter(shape, g.dtype, (slice(None),) * axis + (index,), g, accumulate=True)
    return g


def _accumulated(a):
    """PyTorch sums and multiplies integers and bools in int64 (cumsum, prod), floats in their own dtype."""
    return a.dtype if a.dtype.kind == "f" else np.int64


_PAD = Params("args", ("pad",))
# PyTorch's calls, defaults left out: sort(dim=1, descending=True), topk(k=2, dim=1), ‖·‖(ord=1.0, dim=(0, 1))
_SORT = Params("keywords", ("dim", "descending"), defaults=(("descending", False),))
_TOPK = Params("keywords", ("k", "dim", "largest"), defaults=(("largest", True),))

defop("logsumexp", "LogsumexpBackward0", "logsumexp", _logsumexp,
      (lambda g, ans, a, dims, keep: _expand_reduced(g, a.shape, dims, keep) * np.exp(a - _keep(ans, a.shape, dims, keep)),
       r"\operatorname{softmax}(a)"), needs=("ar",), params=REDUCE)
defop("gather", "GatherBackward0", "gather", _gather,
      (lambda g, ans, a, index, dim: _scatter(a.shape, g.dtype, _along(index, dim), g, accumulate=True),
       r"\mathbb{1}[i=\mathrm{idx}]"),
      (None, ""), needs=("b", ""), params=DIM)
defop("scatter", "ScatterBackward0", "scatter", lambda a, index, src, dim: _scatter_into(a, index, src, dim, False),
      (lambda g, ans, a, index, src, dim: _scatter_grad_self(g, index, dim), r"\mathbb{1}[i\notin\mathrm{idx}]"), (None, ""),
      (lambda g, ans, a, index, src, dim: _scatter_grad_src(g, src, index, dim), r"\mathbb{1}[i=\mathrm{idx}]"),
      needs=("b", "", "b"), params=DIM)
defop("scatter_value", "ScatterBackward1", "scatter",
      lambda a, index, dim, value: _scatter_into(a, index, a.dtype.type(value), dim, False),
      (lambda g, ans, a, index, dim, value: _scatter_grad_self(g, index, dim), r"\mathbb{1}[i\notin\mathrm{idx}]"), (None, ""),
      needs=("b", ""), params=Params("args", ("dim", "value")))
defop("scatter_add", "ScatterAddBackward0", "scatter_add", lambda a, index, src, dim: _scatter_into(a, index, src, dim, True),
      (lambda g, ans, a, index, src, dim: g, "1"), (None, ""),
      (lambda g, ans, a, index, src, dim: _scatter_grad_src(g, src, index, dim), r"\mathbb{1}[i=\mathrm{idx}]"),
      needs=("", "", "b"), params=DIM)
defop("cumsum", "CumsumBackward0", "cumsum", lambda a, dim: np.cumsum(a, axis=dim, dtype=_accumulated(a)),
      (_cumsum_vjp, r"\mathbb{1}[i\le j]"), saves=False, params=DIM)
defop("cumprod", "CumprodBackward0", "cumprod", lambda a, dim: np.cumprod(a, axis=dim, dtype=_accumulated(a)),
      (_cumprod_vjp, r"\prod_{k\le j,\,k\ne i} a_k"), needs=("ar",), params=DIM)
defop("prod", "ProdBackward0", "prod", lambda a: np.prod(a, dtype=_accumulated(a)),
      (_prod_all_vjp, r"\prod_{k\ne i} a_k"), needs=("a",))
defop("prod_dim", "ProdBackward1", "prod", lambda a, dim, keep: np.prod(a, axis=dim, keepdims=keep, dtype=_accumulated(a)),
      (_prod_dim_vjp, r"\prod_{k\ne i} a_k"), needs=("a",), params=REDUCE)
defop("sort", "SortBackward0", "sort", lambda a, dim, desc: _take_order(a, _sort_order(a, dim, desc), dim),
      (lambda g, ans, a, dim, desc: _put_order(g, _sort_order(a, dim, desc), dim, a.shape), r"P^{\top}"), needs=("a",),
      params=_SORT)
# The overload with the stable= keyword (any value) is another node name.
defop("sort_stable", "SortBackward1", "sort", lambda a, dim, desc: _take_order(a, _sort_order(a, dim, desc), dim),
      (lambda g, ans, a, dim, desc: _put_order(g, _sort_order(a, dim, desc), dim, a.shape), r"P^{\top}"), needs=("a",),
      params=_SORT)
defop("topk", "TopkBackward0", "topk", lambda a, k, dim, largest: _take_order(a, _topk_order(a, k, dim, largest), dim),
      (lambda g, ans, a, k, dim, largest: _put_order(g, _topk_order(a, k, dim, largest), dim, a.shape), r"P^{\top}"),
      needs=("a",), params=_TOPK)
defop("repeat", "RepeatBackward0", "repeat", lambda a, reps: np.tile(a, reps), (_repeat_vjp, r"\textstyle\sum"), saves=False,
      params=Params("call", ("repeats",)))
defop("split", "SplitBackward0", "split", lambda a, dim, start, stop: a[_cut(dim, start, stop)],
      (lambda g, ans, a, dim, start, stop: _scatter(a.shape, g.dtype, _cut(dim, start, stop), g), "1"), saves=False,
      view=True, params=Params("args", ("dim", "start", "stop")))
defop("split_with_sizes", "SplitWithSizesBackward0", "split", lambda a, dim, start, stop: a[_cut(dim, start, stop)],
      (lambda g, ans, a, dim, start, stop: _scatter(a.shape, g.dtype, _cut(dim, start, stop), g), "1"), saves=False,
      view=True, params=Params("args", ("dim", "start", "stop")))
defop("tril", "TrilBackward0", "tril", lambda a, k: np.tril(a, k), (lambda g, ans, a, k: np.tril(g, k), r"\mathbb{1}[j\le i+k]"),
      saves=False, params=Params("args", ("diagonal",)))
defop("triu", "TriuBackward0", "triu", lambda a, k: np.triu(a, k), (lambda g, ans, a, k: np.triu(g, k), r"\mathbb{1}[j\ge i+k]"),
      saves=False, params=Params("args", ("diagonal",)))
defop("diag_embed", "DiagEmbedBackward0", "diag", _diag_embed, (lambda g, ans, a, k: np.diagonal(g, k), "1"),
      saves=False, params=Params("args", ("diagonal",)))
defop("diag", "DiagonalBackward0_copy", "diag", lambda a, k: np.diagonal(a, k).copy(), (_diagonal_vjp, "1"), saves=False,
      params=Params("args", ("diagonal",)))
defop("diagonal", "DiagonalBackward0", "diagonal", lambda a, k, d1, d2: np.diagonal(a, k, d1, d2), (_diagonal_vjp, "1"),
      saves=False, view=True, params=Params("args", ("offset", "dim1", "dim2")))
defop("flip", "FlipBackward0", "flip", lambda a, dims: np.flip(a, dims).copy(), (lambda g, ans, a, dims: np.flip(g, dims), "P"),
      saves=False, params=Params("call", ("dims",)))
defop("roll", "RollBackward0", "roll", lambda a, shifts, dims: np.roll(a, shifts, dims),
      (lambda g, ans, a, shifts, dims: np.roll(g, tuple(-s for s in shifts) if dims is not None else -shifts[0], dims), "P"),
      saves=False, params=Params("args", ("shifts", "dims")))
defop("index_select", "IndexSelectBackward0", "index_select", lambda a, index, dim: np.take(a, index, axis=dim),
      (_index_select_vjp, r"\mathbb{1}[i=\mathrm{idx}]"), (None, ""), needs=("b", ""), params=DIM)
# (format "call": the page's "clamp" format reads a lone parameter as the lower bound)
defop("clamp_min", "ClampMinBackward0", "clamp_min", lambda a, lo: np.maximum(a, lo),
      (lambda g, ans, a, lo: g * (a >= lo), r"\mathbb{1}[a\ge lo]"), needs=("a",), params=Params("call", ("min",)))
defop("clamp_max", "ClampMaxBackward0", "clamp_max", lambda a, hi: np.minimum(a, hi),
      (lambda g, ans, a, hi: g * (a <= hi), r"\mathbb{1}[a\le hi]"), needs=("a",), params=Params("call", ("max",)))
defop("erf", "ErfBackward0", "erf", _nn.erf,
      (lambda g, ans, a: g * (2 / np.sqrt(np.pi)) * np.exp(-a * a), r"\tfrac{2}{\sqrt{\pi}}e^{-a^{2}}"),
      needs=("a",))
defop("log1p", "Log1PBackward0", "log1p", np.log1p, (lambda g, ans, a: g / (1 + a), r"\frac{1}{1+a}"), needs=("a",))
defop("expm1", "Expm1Backward0", "expm1", np.expm1, (lambda g, ans, a: g * (ans + 1), r"e^{a}"), needs=("r",))
defop("atan2", "Atan2Backward0", "atan2", np.arctan2, (lambda g, ans, a, b: g * b / (a * a + b * b), r"\frac{b}{a^{2}+b^{2}}"),
      (lambda g, ans, a, b: -g * a / (a * a + b * b), r"-\frac{a}{a^{2}+b^{2}}"), needs=("ab", "ab"), broadcasts=True)
defop("floor", "FloorBackward0", "floor", lambda a: np.floor(a) if a.dtype.kind == "f" else a.copy(),
      (lambda g, ans, a: g * 0, "0"), saves=False)
defop("ceil", "CeilBackward0", "ceil", lambda a: np.ceil(a) if a.dtype.kind == "f" else a.copy(), (lambda g, ans, a: g * 0, "0"),
      saves=False)
defop("round", "RoundBackward0", "round", lambda a: _round(a, 0), (lambda g, ans, a: g * 0, "0"), saves=False)
defop("round_decimals", "RoundBackward1", "round", _round, (lambda g, ans, a, decimals: g * 0, "0"), saves=False,
      params=Params("keywords", ("decimals",)))
defop("var", "VarBackward0", "var", _var, (_var_vjp, r"\frac{2(a-\bar a)}{n-c}"), needs=("a",),
      params=Params("args", ("dim", "correction", "keepdim")))
defop("std", "StdBackward0", "std", lambda a, dims, c, keep: np.sqrt(_var(a, dims, c, keep)),
      (_std_vjp, r"\frac{a-\bar a}{(n-c)\,\sigma}"), needs=("ar",), params=Params("args", ("dim", "correction", "keepdim")))
defop("vector_norm", "LinalgVectorNormBackward0", "‖·‖", _vector_norm,
      (_vector_norm_vjp, r"\frac{\operatorname{sign}(a)\,|a|^{p-1}}{\lVert a\rVert_p^{p-1}}"), needs=("ar",),
      params=Params("keywords", ("ord", "dim", "keepdim"), defaults=(("dim", None), ("keepdim", False))))
defop("reflection_pad1d", "ReflectionPad1DBackward0", "pad", lambda a, pad: _pad_modes(a, pad, "reflect"),
      (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, "reflect"), r"\textstyle\sum"), saves=False, params=_PAD)
defop("reflection_pad2d", "ReflectionPad2DBackward0", "pad", lambda a, pad: _pad_modes(a, pad, "reflect"),
      (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, "reflect"), r"\textstyle\sum"), saves=False, params=_PAD)
defop("reflection_pad3d", "ReflectionPad3DBackward0", "pad", lambda a, pad: _pad_modes(a, pad, "reflect"),
      (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, "reflect"), r"\textstyle\sum"), saves=False, params=_PAD)
defop("replication_pad1d", "ReplicationPad1DBackward0", "pad", lambda a, pad: _pad_modes(a, pad, "replicate"),
      (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, "replicate"), r"\textstyle\sum"), saves=False, params=_PAD)
defop("replication_pad2d", "ReplicationPad2DBackward0", "pad", lambda a, pad: _pad_modes(a, pad, "replicate"),
      (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, "replicate"), r"\textstyle\sum"), saves=False, params=_PAD)
defop("replication_pad3d", "ReplicationPad3DBackward0", "pad", lambda a, pad: _pad_modes(a, pad, "replicate"),
      (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, "replicate"), r"\textstyle\sum"), saves=False, params=_PAD)
defop("masked_fill_tensor", "MaskedFillBackward1", "masked_fill", lambda a, m, v: np.where(m, np.asarray(v, a.dtype), a),
      (lambda g, ans, a, m, v: np.where(m, 0, g), r"\mathbb{1}[\lnot m]"), (None, ""),
      (lambda g, ans, a, m, v: np.where(m, g, 0), r"\mathbb{1}[m]"), needs=("b", "", "b"), broadcasts=True)
# No derivative
defop("argsort", None, "argsort", _sort_order, saves=False, params=_SORT)
defop("topk_indices", None, "topk", _topk_order, saves=False, params=_TOPK)
defop("nonzero", None, "nonzero", lambda a: np.argwhere(a).astype(np.int64), saves=False)
defop("isclose", None, "isclose", lambda a, b, rtol, atol, nan: np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=nan),
      saves=False, broadcasts=True,
      params=Params("keywords", ("rtol", "atol", "equal_nan"), defaults=(("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False))))

# Linear algebra (numpy in engine/linalg_ops.py): singular values for the nuclear and 2-norms (torch.linalg), their
# singular vectors only for higher-order gradients; amax/amin share a gradient evenly among ties
defop("svdvals", "LinalgSvdBackward0", "svdvals", _la.svdvals, (_la.svdvals_vjp, r"u_i v_i^{\top}"), needs=("a",))
defop("svd_u", "LinalgSvdBackward0", "svd.U", _la.svd_u, (_la.svd_u_vjp, r"\frac{\partial U}{\partial A}"), needs=("a",))
defop("svd_vh", "LinalgSvdBackward0", "svd.Vh", _la.svd_vh, (_la.svd_vh_vjp, r"\frac{\partial V^{\top}}{\partial A}"),
      needs=("a",))
defop("amax", "AmaxBackward0", "amax", _la.amax, (_la.extreme_vjp, r"\frac{\mathbb{1}[a=\max a]}{\#\max}"),
      needs=("ar",), params=REDUCE)
defop("amin", "AminBackward0", "amin", _la.amin, (_la.extreme_vjp, r"\frac{\mathbb{1}[a=\min a]}{\#\min}"),
      needs=("ar",), params=REDUCE)
