"""Op table rows for torch.fmax / fmin / copysign / sinc / logaddexp / take / baddbmm / rot90 / logit: PyTorch's
nodes (FmaxBackward0, ..., LogitBackward0), each rule as derivatives.yaml writes it."""
from __future__ import annotations

import math

import numpy as np

from . import vml
from .graphed import Graphed
from .graphed import op as _graphed_op
from .op_table import Params, defop, unbroadcast

_F64 = np.dtype(np.float64)


def _fmax_keeps_a(a, b):
    return (a >= b) | np.isnan(b)  # NOTE: where b is nan the result is a (nan only when both are)


def _fmin_keeps_a(a, b):
    return (a <= b) | np.isnan(b)


defop("fmax", "FmaxBackward0", "fmax", np.fmax,
      (lambda g, ans, a, b: g * _fmax_keeps_a(a, b), r"\mathbb{1}[a\ge b]"),
      (lambda g, ans, a, b: g * ~_fmax_keeps_a(a, b), r"\mathbb{1}[b>a]"), needs=("ab", "ab"), broadcasts=True)
defop("fmin", "FminBackward0", "fmin", np.fmin,
      (lambda g, ans, a, b: g * _fmin_keeps_a(a, b), r"\mathbb{1}[a\le b]"),
      (lambda g, ans, a, b: g * ~_fmin_keeps_a(a, b), r"\mathbb{1}[b<a]"), needs=("ab", "ab"), broadcasts=True)


def _copysign_grad(g, ans, a, b):
    """ATen's copysign_tensor_self_backward: grad * result / self, 0 where self is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ans / a
    return g * np.where(a == 0, np.zeros((), ratio.dtype), ratio)


defop("copysign", "CopysignBackward0", "copysign", np.copysign, (_copysign_grad, r"\frac{\operatorname{copysign}(a,b)}{a}"),
      (lambda g, ans, a, b: g * 0, "0"), needs=("ar", ""), broadcasts=True)

_PI32 = np.float32(math.pi)


def _sinc(a):
    """ATen's sinc kernel: 1 at 0, else sin(pi x) / (pi x), pi x rounded to the dtype first (sin rounded once from
    float64: what glibc's sinf returns on all but rare inputs)."""
    pi = _PI32 if a.dtype == np.float32 else a.dtype.type(math.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = pi * a
        out = np.sin(x.astype(_F64)).astype(a.dtype) / x
    return np.where(a == 0, np.ones((), a.dtype), out).astype(a.dtype, copy=False)


def _sinc_grad(g, ans, a):
    """derivatives.yaml: ((pi x cos(pi x) - sin(pi x)) / (pi x^2)), 0 at 0."""
    pi = a.dtype.type(math.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = pi * a
        d = (x * np.cos(x) - np.sin(x)) / (pi * a * a)
    return g * np.where(a == 0, np.zeros((), d.dtype), d)


defop("sinc", "SincBackward0", "sinc", _sinc, (_sinc_grad, r"\frac{\pi a\cos\pi a-\sin\pi a}{\pi a^{2}}"), needs=("a",))


def _logaddexp(a, b):
    """ATen's: max(a, b) + log1p(exp(-|a - b|)), and a where both are the same infinity."""
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.maximum(a, b) + np.log1p(np.exp(-np.abs(a - b)))
    return np.where(np.isinf(a) & (a == b), a, out).astype(out.dtype, copy=False)


def _logaddexp_grad(which):
    def vjp(g, ans, a, b):
        with np.errstate(over="ignore"):
            return g / (1 + np.exp(b - a)) if which == 0 else g / (1 + np.exp(a - b))
    return vjp


defop("logaddexp", "LogaddexpBackward0", "logaddexp", _logaddexp,
      (_logaddexp_grad(0), r"\frac{e^{a}}{e^{a}+e^{b}}"), (_logaddexp_grad(1), r"\frac{e^{b}}{e^{a}+e^{b}}"),
      needs=("ab", "ab"), broadcasts=True)


def _take(a, index):
    if type(a) is Graphed:  # (the gradient of take_backward, under create_graph)
        return _graphed_op("take", (a, index), ())
    return np.asarray(a).reshape(-1)[index]


def _take_backward(g, shape, index):
    """Each taken element's gradient added back where it was read (an index read twice gets both)."""
    if type(g) is Graphed:
        return _graphed_op("take_backward", (g,), (shape, index))
    out = np.zeros(int(np.prod(shape)), g.dtype)
    np.add.at(out, np.asarray(index).reshape(-1), np.asarray(g).reshape(-1))
    return out.reshape(shape)


defop("take", "TakeBackward0", "take", _take, (lambda g, ans, a, index: _take_backward(g, a.shape, index),
                                              r"\mathbb{1}[\text{taken}]"), (None, ""), needs=("b", ""),
      sizes=lambda arrays, params: (np.shape(arrays[1]),))
# PyTorch computes take's gradient as zeros.put_(index, grad, accumulate=True): its node under create_graph is PutBackward0
defop("take_backward", "PutBackward0", "take_backward", _take_backward,
      (lambda g, ans, x, shape, index: _take(g, index), r"\operatorname{take}"), saves=False,
      params=Params("keywords", ("input_sizes", "index")), sizes=lambda arrays, params: (tuple(params[0]),))


def _baddbmm(c, a, b, beta, alpha):
    """beta * input + alpha * (batch1 @ batch2); beta 0 ignores input (nan and inf in it too), as ATen."""
    product = np.matmul(a, b)
    if alpha != 1:
        product = product * product.dtype.type(alpha)
    if beta == 0:
        return np.ascontiguousarray(np.broadcast_to(product, product.shape))
    return (c if beta == 1 else c * c.dtype.type(beta)) + product


def _baddbmm_sizes(arrays, params):
    a, b = np.shape(arrays[1]), np.shape(arrays[2])
    return ((a[0], a[1], b[2]),) if len(a) == 3 and len(b) == 3 else ()


def _baddbmm_flops(arrays, params):
    a, b = np.shape(arrays[1]), np.shape(arrays[2])
    return a[0] * a[1] * a[2] * b[2] if len(a) == 3 and len(b) == 3 else 0


defop("baddbmm", "BaddbmmBackward0", "baddbmm", _baddbmm,
      (lambda g, ans, c, a, b, beta, alpha: unbroadcast(g * beta, np.shape(c)), r"\beta"),
      (lambda g, ans, c, a, b, beta, alpha: np.matmul(g, np.swapaxes(b, 1, 2)) * alpha, r"\alpha\,B_2^{\top}"),
      (lambda g, ans, c, a, b, beta, alpha: np.matmul(np.swapaxes(a, 1, 2), g) * alpha, r"\alpha\,B_1^{\top}"),
      needs=("", "c", "b"), params=Params("keywords", ("beta", "alpha")), sizes=_baddbmm_sizes,
      flops=_baddbmm_flops)


defop("copysign_scalar", "CopysignBackward1", "copysign", lambda a, c: np.copysign(a, a.dtype.type(c)),
      (lambda g, ans, a, c: _copysign_grad(g, ans, a, None), r"\frac{\operatorname{copysign}(a,c)}{a}"),
      needs=("ar",), params=Params("call", ("other",)))
def _rot90(a, k, dims):
    if type(a) is Graphed:  # (a gradient under create_graph: turned back by the op itself)
        return _graphed_op("rot90", (a,), (k, dims))
    return np.rot90(a, k, dims).copy()


defop("rot90", "Rot90Backward0", "rot90", _rot90, (lambda g, ans, a, k, dims: _rot90(g, (-k) % 4, dims),
                                                  r"\operatorname{rot90}^{-1}"), saves=False,
      params=Params("keywords", ("k", "dims")))


def _logit(a, eps):
    """ATen's logit kernel: log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given; the log is the one
    torch.log takes (MKL's, engine/vml.py): the last bit matches torch on every input tried, SLEEF's on ~93 %."""
    x = a
    if eps is not None:
        lo = a.dtype.type(eps)
        x = np.clip(a, lo, a.dtype.type(1) - lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = x / (a.dtype.type(1) - x)
        return vml.log(ratio)


def _logit_grad(g, ans, a, eps):
    """ATen's logit_backward: grad / (x (1 - x)), 0 outside [eps, 1 - eps] when eps is given."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = g / (a * (1 - a))
    if eps is None:
        return d
    lo = a.dtype.type(eps)
    return np.where((a < lo) | (a > a.dtype.type(1) - lo), np.zeros((), d.dtype), d)


defop("logit", "LogitBackward0", "logit", _logit, (_logit_grad, r"\frac{1}{a(1-a)}"), needs=("a",),
      params=Params("keywords", ("eps",), defaults=(("eps", None),)))
