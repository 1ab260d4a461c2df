"""Op table rows: normalisation, embedding and the activations (the modules of engine/nn/activation.py)."""
from __future__ import annotations

import math

import numpy as np

from . import batch_norm_cpu, sleef
from .graphed import Graphed
from .graphed import op as _graphed_op
from .op_table import Params, defop
from .ops_math import erf
from .ops_shape import _scatter


# ---------------------------------------------------------------- normalisation
def _bn_axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _bc(v, x):
    """A per-channel vector shaped to broadcast against (N, C, ...)."""
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def bn_stats(x, rm, rv, training, eps):
    """(mean, invstd) per channel: the batch's (biased variance) in training, else the running ones."""
    if training:
        axes = _bn_axes(x)
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
    else:
        mean, var = rm.astype(x.dtype, copy=False), rv.astype(x.dtype, copy=False)
    return mean, (1.0 / np.sqrt(var + eps)).astype(x.dtype)


def batch_norm_forward(x, w, b, rm, rv, training, eps):
    if type(x) is np.ndarray and x.dtype == np.float32 and all(v is None or v.dtype == np.float32 for v in (w, b)):
        return batch_norm_cpu.forward(x, w, b, rm, rv, training, eps)  # PyTorch's float32 arithmetic, to the bit
    mean, invstd = bn_stats(x, rm, rv, training, eps)
    out = (x - _bc(mean, x)) * _bc(invstd if w is None else invstd * w, x)
    if b is not None:
        out += _bc(b, x)
    return out


def batch_norm_vjp_input(g, ans, x, w, b, rm, rv, training, eps):
    mean, invstd = bn_stats(x, rm, rv, training, eps)
    scale = invstd if w is None else invstd * w
    if not training:
        return g * _bc(scale, x)
    axes = _bn_axes(x)
    m = x.size // x.shape[1]
    xhat = (x - _bc(mean, x)) * _bc(invstd, x)
    gsum = g.sum(axis=axes)
    gx = (g * xhat).sum(axis=axes)
    return _bc(scale / m, x) * (m * g - _bc(gsum, x) - xhat * _bc(gx, x))


def batch_norm_vjp_weight(g, ans, x, w, b, rm, rv, training, eps):
    mean, invstd = bn_stats(x, rm, rv, training, eps)
    return (g * ((x - _bc(mean, x)) * _bc(invstd, x))).sum(axis=_bn_axes(x))


def batch_norm_vjp_bias(g, ans, x, w, b, rm, rv, training, eps):
    return g.sum(axis=_bn_axes(x))


def _ln_stats(x, k, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    invstd = (1.0 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)).astype(x.dtype)
    return axes, (x - mean) * invstd, invstd


def layer_norm_forward(x, w, b, shape, eps):
    _, xhat, _ = _ln_stats(x, len(shape), eps)
    if w is not None:
        xhat *= w
    if b is not None:
        xhat += b
    return xhat


def layer_norm_vjp_input(g, ans, x, w, b, shape, eps):
    axes, xhat, invstd = _ln_stats(x, len(shape), eps)
    gw = g if w is None else g * w
    m = math.prod(shape)
    return invstd / m * (m * gw - gw.sum(axis=axes, keepdims=True) - xhat * (gw * xhat).sum(axis=axes, keepdims=True))


def layer_norm_vjp_weight(g, ans, x, w, b, shape, eps):
    _, xhat, _ = _ln_stats(x, len(shape), eps)
    return (g * xhat).reshape((-1,) + tuple(shape)).sum(axis=0)


def layer_norm_vjp_bias(g, ans, x, w, b, shape, eps):
    return g.reshape((-1,) + tuple(shape)).sum(axis=0)


def embedding_vjp(g, ans, w, idx, padding_idx):
    if type(g) is Graphed:  # create_graph: one recorded scatter-add of the rows, the padding row masked out

        rows = g.reshape(-1, w.shape[1])
        if padding_idx is not None:
            rows = rows * (idx.reshape(-1, 1) != padding_idx)
        return _scatter(w.shape, g.dtype, idx.reshape(-1), rows, accumulate=True, kind="index")
    dw = np.zeros(w.shape, dtype=g.dtype)
    np.add.at(dw, idx.reshape(-1), g.reshape(-1, w.shape[1]))
    if padding_idx is not None:
        dw[padding_idx] = 0
    return dw


# ---------------------------------------------------------------- activations
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def gelu(a, approximate):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a ** 3)))
    return 0.5 * a * (1 + erf(a / math.sqrt(2.0)))


def gelu_vjp(g, ans, a, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_PI * (a + 0.044715 * a ** 3)
        t = np.tanh(inner)
        return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * a * a))
    cdf = 0.5 * (1 + erf(a / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    return g * (cdf + a * pdf)


def sigmoid(a):
    if type(a) is Graphed:  # create_graph: the sigmoid op (both where-branches would put inf * 0 into the graph)
        return _graphed_op("sigmoid", (a,))
    if a.dtype == np.float32:
        return sleef.sigmoid32(a)  # ATen's kernel, digit for digit
    with np.errstate(over="ignore"):
        return np.where(a >= 0, 1 / (1 + np.exp(-a)), np.exp(a) / (1 + np.exp(a))).astype(a.dtype)


def softplus(a, beta, threshold):
    """log(1 + e^(beta a)) / beta, linear above the threshold (PyTorch's)."""
    z = a * beta
    with np.errstate(over="ignore"):
        soft = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
    return np.where(z > threshold, a, soft).astype(a.dtype)


def softplus_vjp(g, ans, a, beta, threshold):
    z = a * beta
    return g * np.where(z > threshold, 1, sigmoid(z))


def elu(a, alpha, scale, input_scale):
    with np.errstate(over="ignore"):
        return np.where(a > 0, scale * a, scale * alpha * np.expm1(np.minimum(a, 0) * input_scale)).astype(a.dtype)


def elu_vjp(g, ans, a, alpha, scale, input_scale):
    return g * np.where(a > 0, scale, scale * alpha * input_scale * np.exp(np.minimum(a, 0) * input_scale))


def mish(a):
    return a * np.tanh(softplus(a, 1.0, 20.0))


def mish_vjp(g, ans, a):
    t = np.tanh(softplus(a, 1.0, 20.0))
    return g * (t + a * (1 - t * t) * sigmoid(a))


def logsigmoid(a):
    return -(np.maximum(-a, 0) + np.log1p(np.exp(-np.abs(a))))


def hardswish(a):
    return a * np.clip(a + 3, 0, 6) / 6


def hardswish_vjp(g, ans, a):
    return g * np.where(a < -3, 0, np.where(a <= 3, (2 * a + 3) / 6, 1))


def _embedding_sizes(arrays, params):
    return (np.shape(arrays[1]) + np.shape(arrays[0])[1:],)  # a row of the weight per index


# weight and bias may be None (affine=False); the running statistics are inputs that get no gradient.
defop("batch_norm", "NativeBatchNormBackward0", "batch_norm", batch_norm_forward,
      (batch_norm_vjp_input, r"\frac{\gamma}{\sigma}(\ldots)"), (batch_norm_vjp_weight, r"\hat{x}"),
      (batch_norm_vjp_bias, "1"), (None, ""), (None, ""), needs=("ab", "a", "", "", ""),
      params=Params("args", ("training", "eps")))


defop("layer_norm", "NativeLayerNormBackward0", "layer_norm", layer_norm_forward,
      (layer_norm_vjp_input, r"\frac{\gamma}{\sigma}(\ldots)"), (layer_norm_vjp_weight, r"\hat{x}"),
      (layer_norm_vjp_bias, "1"), needs=("ab", "a", ""), params=Params("args", ("normalized_shape", "eps")))


defop("embedding", "EmbeddingBackward0", "embedding", lambda w, idx, padding_idx: w[idx], (embedding_vjp, "1"),
      (None, ""), needs=("b", ""), params=Params("hidden", ("padding_idx",)), sizes=_embedding_sizes)


# Activations (the modules of engine/nn/activation.py)
defop("gelu", "GeluBackward0", "gelu", gelu, (gelu_vjp, r"\Phi(a)+a\,\varphi(a)"), needs=("a",),
      params=Params("args", ("approximate",)))


defop("leaky_relu", "LeakyReluBackward0", "leaky_relu", lambda a, s: np.where(a > 0, a, a * s).astype(a.dtype),
      (lambda g, ans, a, s: g * np.where(a > 0, 1, s), r"\mathbb{1}[a>0]+s\,\mathbb{1}[a\le 0]"), needs=("a",),
      params=Params("args", ("negative_slope",)))


defop("elu", "EluBackward0", "elu", elu, (elu_vjp, r"\mathbb{1}[a>0]+\alpha e^{a}\mathbb{1}[a\le 0]"),
      needs=("a",), params=Params("args", ("alpha", "scale", "input_scale")))


defop("celu", "CeluBackward0", "celu", lambda a, al: elu(a, al, 1.0, 1.0 / al),
      (lambda g, ans, a, al: elu_vjp(g, ans, a, al, 1.0, 1.0 / al), r"\mathbb{1}[a>0]+e^{a/\alpha}\mathbb{1}[a\le 0]"),
      needs=("a",), params=Params("args", ("alpha",)))


def _silu(a):
    if type(a) is np.ndarray and a.dtype == np.float32:
        return sleef.silu32(a)  # ATen's kernel, digit for digit
    return a * sigmoid(a)


def _silu_vjp(g, ans, a):
    out = sleef.silu_backward32(g, a) if type(a) is np.ndarray and a.dtype == np.float32 else None
    return g * sigmoid(a) * (1 + a * (1 - sigmoid(a))) if out is None else out


defop("silu", "SiluBackward0", "silu", _silu, (_silu_vjp, r"\sigma(a)(1+a(1-\sigma(a)))"), needs=("a",))


defop("softplus", "SoftplusBackward0", "softplus", softplus, (softplus_vjp, r"\sigma(\beta a)"), needs=("a",),
      params=Params("args", ("beta", "threshold")))


defop("mish", "MishBackward0", "mish", mish, (mish_vjp, r"\tanh(\zeta(a))+a\,\operatorname{sech}^{2}\ldots"),
      needs=("a",))


defop("hardtanh", "HardtanhBackward0", "hardtanh", lambda a, lo, hi: np.clip(a, lo, hi),
      (lambda g, ans, a, lo, hi: g * ((a > lo) & (a < hi)), r"\mathbb{1}[lo<a<hi]"), needs=("a",),
      params=Params("args", ("min_val", "max_val")))


defop("logsigmoid", "LogSigmoidBackward0", "logsigmoid", logsigmoid,
      (lambda g, ans, a: g * sigmoid(-a), r"\sigma(-a)"), needs=("a",))


defop("hardswish", "HardswishBackward0", "hardswish", hardswish, (hardswish_vjp, r"\frac{2a+3}{6}"),
      needs=("a",))


defop("hardsigmoid", "HardsigmoidBackward0", "hardsigmoid", lambda a: np.clip(a / 6 + 0.5, 0, 1),
      (lambda g, ans, a: g * ((a > -3) & (a < 3)) / 6, r"\tfrac{1}{6}\mathbb{1}[|a|<3]"), needs=("a",))


defop("threshold", "ThresholdBackward0", "threshold", lambda a, th, v: np.where(a > th, a, v).astype(a.dtype),
      (lambda g, ans, a, th, v: g * (a > th), r"\mathbb{1}[a>t]"), needs=("a",), params=Params("args", ("threshold", "value")))
