"""Op table rows: softmax and the classification and regression losses PyTorch runs as one kernel."""
from __future__ import annotations

import numpy as np

from . import sleef
from .cascade_sum import torch_sum
from .graphed import Graphed
from .graphed import raw as _raw
from .libm import log1pf_libm, logf_libm
from .nll_sum import cascade_sum, nll_sums
from .op_table import DIM, REDUCTION, Params, _count, defop
from .ops_math import _is_bool, _no_bool, _sigmoid
from .ops_shape import _scatter


# ---------------------------------------------------------------- spatial NLL (N, C, H, W)
def nll2d_vjp(g, ans, logp, target, reduction, weight=None, ignore_index=-100):
    """NllLoss2DBackward0: -g * w[target] at each pixel's target class (over the weight sum for 'mean')."""
    t = np.asarray(target)
    ignored = t == ignore_index
    w = np.ones(t.shape, logp.dtype) if weight is None else np.asarray(weight, logp.dtype)[np.where(ignored, 0, t)]
    w = np.where(ignored, 0, w).astype(logp.dtype)
    scale = g / w.sum() if reduction == "mean" else g  # 'none': g is per pixel, like w
    if type(g) is Graphed:  # create_graph: one recorded scatter to each pixel's target class

        grids = np.indices(t.shape, sparse=True)
        key = (grids[0], np.where(ignored, 0, t), *grids[1:])
        return _scatter(logp.shape, logp.dtype, key, -scale * w, kind="index")
    z = np.zeros_like(logp)
    np.put_along_axis(z, np.expand_dims(np.where(ignored, 0, t), 1), np.expand_dims(-scale * w, 1), axis=1)
    return z


def _lastdim32(a, dim):
    """Whether ATen's last-dim float32 kernel (engine/sleef.py, digit for digit) computes this softmax."""
    return (type(a) is np.ndarray and a.dtype == np.float32 and a.ndim >= 1 and a.size > 0
            and dim in (-1, a.ndim - 1))


def _softmax(a, dim):
    _no_bool(a, "softmax_lastdim_kernel_impl" if dim in (-1, a.ndim - 1) or a.ndim == 0 else "softmax_kernel_impl")
    if _lastdim32(a, dim):
        return sleef.softmax_lastdim(a)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(a, dim):
    _no_bool(a, "log_softmax_lastdim_kernel_impl" if dim in (-1, a.ndim - 1) or a.ndim == 0 else "log_softmax_kernel_impl")
    if _lastdim32(a, dim):
        return sleef.log_softmax_lastdim(a)
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _sum(x):
    return torch_sum(x) if type(x) is np.ndarray else x.sum()


def _reduce(x, reduction):
    if reduction == "mean":
        return _sum(x) / x.dtype.type(x.size)
    if reduction == "sum":
        return _sum(x)
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
        if reduction == "none":
            return picked
        total = cascade_sum(picked)
        return total / logp.dtype.type(picked.size) if reduction == "mean" else total
    t = np.where(target == ignore_index, 0, target)
    w = _nll_weights(logp, target, weight, ignore_index)
    picked = -np.take_along_axis(logp, np.expand_dims(t, 1), axis=1).squeeze(1) * w
    if reduction == "none":
        return picked
    if logp.ndim == 2:  # ATen's loop over the batch, skipping the ignored samples
        total, weight_sum = nll_sums(picked, None if weight is None else w, target != ignore_index)
    else:
        total, weight_sum = picked.sum(), w.sum()
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / weight_sum  # PyTorch: NaN when every target is ignored
    return total


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
    # NOTE: PyTorch clamps each log at -100 so p = 0 or 1 gives a finite loss. ATen's loop takes a float32 loss's logs
    # from glibc (engine/libm.py), whose last bits numpy's float32 log and log1p do not give
    with np.errstate(divide="ignore"):
        if p.dtype == np.float32:
            log_p, log_q = logf_libm(p), log1pf_libm(-p)
        else:
            log_p, log_q = np.log(p), np.log1p(-p)
        loss = (y - 1) * np.maximum(log_q, -100) - y * np.maximum(log_p, -100)
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


def _mse_diff(a, b):
    if _is_bool(a) and _is_bool(b):
        raise NotImplementedError("\"mse_cpu\" not implemented for 'Bool'")
    if _is_bool(a):
        a = np.asarray(a, dtype=np.result_type(b))
    if _is_bool(b):
        b = np.asarray(b, dtype=np.result_type(a))
    return np.subtract(a, b)


def _mse_vjp(g, a, b, reduction, sign):
    # ATen's mse_backward: norm * (a - b) * g with norm = 2 / numel rounded to the dtype first (the target's
    # gradient is its negation)
    norm = 2.0 / a.size if reduction == "mean" else 2.0
    diff = a - b
    grad = (np.result_type(_raw(diff)).type(norm) * diff) * g
    return grad if sign > 0 else -grad


# Softmax and losses
defop("softmax", "SoftmaxBackward0", "softmax", _softmax,
      (lambda g, ans, a, dim: sleef.softmax_backward_lastdim(g, ans) if _lastdim32(g, dim) and type(ans) is np.ndarray
       else ans * (g - (g * ans).sum(axis=dim, keepdims=True)), r"\operatorname{diag}(s)-s\,s^{\top}"),
      needs=("r",), params=DIM)


defop("log_softmax", "LogSoftmaxBackward0", "log_softmax", _log_softmax,
      (lambda g, ans, a, dim: sleef.log_softmax_backward_lastdim(g, ans) if _lastdim32(g, dim) and type(ans) is np.ndarray
       else g - np.exp(ans) * g.sum(axis=dim, keepdims=True), r"I-\mathbf{1}\,s^{\top}"),
      needs=("r",), params=DIM)


defop("mse_loss", "MseLossBackward0", "mse", lambda a, b, r: _reduce(np.square(_mse_diff(a, b)), r),
      (lambda g, ans, a, b, r: _mse_vjp(g, a, b, r, 1), r"\frac{2}{n}(a-b)"),
      (lambda g, ans, a, b, r: _mse_vjp(g, a, b, r, -1), r"-\frac{2}{n}(a-b)"), needs=("ab", "ab"), broadcasts=True,
      params=REDUCTION)


defop("nll_loss", "NllLossBackward0", "nll", _nll, (_nll_vjp, r"-\frac{1}{n}\mathbb{1}[j=y_i]"), (None, ""), needs=("b", ""),
      params=REDUCTION)


# issue 10: NLL over (N, C, H, W) (PyTorch's nll_loss2d; other ranks are viewed as (N, C, 1, -1) first)
defop("nll_loss2d", "NllLoss2DBackward0", "nll", _nll, (nll2d_vjp, r"-\frac{1}{n}\mathbb{1}[j=y_i]"), (None, ""),
      needs=("b", ""), params=REDUCTION)


defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", "bce", _bce, (_bce_vjp_p, r"\frac{p-y}{n\,p(1-p)}"),
      (lambda g, ans, p, y, r, w=None: _weighted(_reduce_grad(g, p.shape, r) * (np.log1p(-p) - np.log(p)), w),
       r"\frac{1}{n}\ln\frac{1-p}{p}"),
      needs=("ab", "ab"), broadcasts=True, params=REDUCTION)


defop("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0", "bce_logits", _bce_logits,
      (_bce_logits_vjp_x, r"\frac{\sigma(x)-y}{n}"), (_bce_logits_vjp_y, r"-\frac{x}{n}"), needs=("ab", "ab"),
      broadcasts=True,
      params=REDUCTION)


# ---------------------------------------------------------------- regression losses
def smooth_l1(a, b, reduction, beta):
    d = np.abs(a - b)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss.astype(np.result_type(a, b), copy=False), reduction)


def smooth_l1_vjp(g, ans, a, b, reduction, beta):
    diff = a - b
    local = np.sign(diff) if beta == 0 else np.where(np.abs(diff) < beta, diff / beta, np.sign(diff))
    return _reduce_grad(g, diff.shape, reduction) * local


def huber(a, b, reduction, delta):
    d = np.abs(a - b)
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss.astype(np.result_type(a, b), copy=False), reduction)


def huber_vjp(g, ans, a, b, reduction, delta):
    diff = a - b
    return _reduce_grad(g, diff.shape, reduction) * np.clip(diff, -delta, delta)


defop("smooth_l1_loss", "SmoothL1LossBackward0", "smooth_l1", smooth_l1,
      (smooth_l1_vjp, r"\operatorname{clip}(\frac{a-b}{\beta})"),
      (lambda g, *args: -smooth_l1_vjp(g, *args), r"-\operatorname{clip}(\frac{a-b}{\beta})"), needs=("ab", "ab"),
      broadcasts=True, params=Params("reduction", ("reduction", "beta")))


defop("huber_loss", "HuberLossBackward0", "huber", huber, (huber_vjp, r"\operatorname{clip}_{\delta}(a-b)"),
      (lambda g, *args: -huber_vjp(g, *args), r"-\operatorname{clip}_{\delta}(a-b)"), needs=("ab", "ab"),
      broadcasts=True, params=Params("reduction", ("reduction", "delta")))
