"""torch.nn.functional losses with PyTorch's full signatures (weight, ignore_index, label_smoothing,
pos_weight, beta/delta, KL divergence), composed as PyTorch's C++ composes them so graphs match."""
from __future__ import annotations

import warnings

import numpy as np

from ..boundary import expect_attribute, expect_tensor, plain_text
from ..dispatch import apply
from ..dtypes import scalar_type_name
from ..ops import OPS
from ..tensor_core import Tensor

_REDUCTIONS = ("mean", "sum", "none")


def _legacy(size_average, reduce, reduction):
    """PyTorch's _Reduction.legacy_get_string for the deprecated size_average/reduce arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


def _reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{plain_text(reduction)} is not a valid value for reduction")
    return reduction


def _same_size(input, target):  # noqa: A002
    """The losses PyTorch writes in Python first compare `target.size()` with `input.size()`."""
    expect_attribute(target, "size")
    expect_attribute(input, "size")


def _arr(t):
    return None if t is None else np.asarray(t._data if isinstance(t, Tensor) else t)


def _size_warning(input, target):  # noqa: A002
    if target._data.shape != input._data.shape:  # both tensors (_same_size): their arrays' shapes, no Size objects
        warnings.warn(f"Using a target size (torch.Size({list(target.shape)})) that is different to the input size "
                      f"(torch.Size({list(input.shape)})). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=3)


def _reduce(x, reduction):
    return x.mean() if reduction == "mean" else x.sum() if reduction == "sum" else x


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):  # noqa: A002
    _same_size(input, target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    _size_warning(input, target)
    return apply(OPS["mse_loss"], (input, target), (reduction,))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):  # noqa: A002
    _same_size(input, target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    _size_warning(input, target)
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):  # noqa: A002
    _same_size(input, target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    _size_warning(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return apply(OPS["smooth_l1_loss"], (input, target), (reduction, float(beta)))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    _same_size(input, target)
    reduction = _reduction(reduction)
    _size_warning(input, target)
    return apply(OPS["huber_loss"], (input, target), (reduction, float(delta)))


def _check_targets(input, target, weight):  # noqa: A002
    t = target._data
    classes = input.shape[-1] if input.ndim == 1 else input.shape[1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {scalar_type_name(target._data.dtype)}")
    if input.ndim == 2 and t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim == 2 and t.shape != (input.shape[0],):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    if input.ndim > 2:  # (N, C, d1, ...): one class per position, PyTorch's checks (nll_loss_nd / nll_loss2d)
        if t.ndim == 0 or input.shape[0] != t.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({t.shape[0] if t.ndim else 0}).")
        if input.ndim == 4 and t.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                               f"{t.ndim}")
        expected = (input.shape[0],) + tuple(input.shape[2:])
        if input.ndim == 4 and t.shape != expected:  # nll_loss2d's own message
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(t.shape)}")
        if t.shape != expected:
            raise RuntimeError(f"Expected target size {list(expected)}, got {list(t.shape)}")
    return t, classes


def _nll_nd(input, target, reduction, weight, ignore_index):  # noqa: A002
    """PyTorch's nll_loss_nd: (N, C, H, W) straight to nll_loss2d; other ranks viewed as (N, C, 1, -1) (and
    the per-position losses viewed back for reduction='none')."""
    params = (reduction, _arr(weight), int(ignore_index))
    if input.ndim == 4:
        return apply(OPS["nll_loss2d"], (input, target), params)
    n, c = input.shape[:2]
    out = apply(OPS["nll_loss2d"], (input.reshape(n, c, 1, -1), target.reshape(n, 1, -1)), params)
    return out.view(*target.shape) if reduction == "none" else out


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
             reduction="mean"):
    expect_tensor(input, "nll_loss_nd", "input", 1)
    expect_tensor(target, "nll_loss_nd", "target", 2)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    t, classes = _check_targets(input, target, weight)
    valid = t[t != ignore_index]
    if valid.size and (valid.min() < 0 or valid.max() >= classes):
        bad = int(valid.max() if valid.max() >= classes else valid.min())
        raise IndexError(f"Target {bad} is out of bounds.")
    if input.ndim > 2:
        return _nll_nd(input, target, reduction, weight, ignore_index)
    return apply(OPS["nll_loss"], (input, target), (reduction, _arr(weight), int(ignore_index)))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
                  reduction="mean", label_smoothing=0.0):
    expect_tensor(input, "cross_entropy_loss", "input", 1)
    expect_tensor(target, "cross_entropy_loss", "target", 2)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    dim = 0 if input.ndim == 1 else 1
    classes = input.shape[dim]
    logp = input.log_softmax(dim)
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):
        # Class probabilities, as PyTorch's cross_entropy_loss_prob_target.
        if weight is not None and weight.numel() != classes:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
        if label_smoothing > 0:
            target = apply(OPS["mul_scalar"], (target,), (1 - label_smoothing,)) + label_smoothing / classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.view(*[classes if d == dim else 1 for d in range(input.ndim)])
        if reduction == "none":
            return -prod.sum(dim)
        total = -prod.sum()
        if reduction == "sum":
            return total
        return apply(OPS["div_scalar"], (total,), (input.numel() / classes if input.ndim > 1 else 1,))
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    # PyTorch's cross_entropy_loss_label_smoothing: mix the NLL with the mean -log p over the classes.
    ignore = target == ignore_index
    lp = logp if weight is None else logp * weight.view(*[classes if d == dim else 1 for d in range(input.ndim)])
    smooth = apply(OPS["masked_fill"], (-lp.sum(dim), ignore), (0.0,))
    if reduction == "mean":
        if weight is None:
            ret = smooth.sum() / (~ignore).sum()
        else:
            t = target._data
            ret = smooth.sum() / Tensor._wrap(np.asarray(weight._data[t[t != ignore_index]].sum()))
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return apply(OPS["mul_scalar"], (nll,), (1 - label_smoothing,)) + \
        apply(OPS["mul_scalar"], (ret,), (label_smoothing / classes,))


def _check_weight(weight, input, index=1):  # noqa: A002
    if weight is None:
        return None
    try:
        np.broadcast_shapes(tuple(weight.shape), tuple(input.shape))
    except ValueError:
        raise RuntimeError(f"Attempting to broadcast a dimension of length {weight.shape[-1]} at -1! Mismatching "
                           f"argument at index {index} had torch.Size({list(weight.shape)}); but expected shape "
                           f"should be broadcastable to {list(input.shape)}") from None
    return _arr(weight)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    _same_size(input, target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    p = input._data
    if p.size and (p.min() < 0 or p.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    return apply(OPS["binary_cross_entropy"], (input, target), (reduction, _check_weight(weight, input)))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                                     reduction="mean", pos_weight=None):
    _same_size(input, target)
    reduction = _reduction(_legacy(size_average, reduce, reduction))
    if input.shape != target.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    pw = None
    if pos_weight is not None:
        try:
            np.broadcast_shapes(tuple(pos_weight.shape), tuple(input.shape))
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({pos_weight.shape[-1]}) must match the size of tensor b "
                               f"({input.shape[-1]}) at non-singleton dimension {input.ndim - 1}") from None
        pw = _arr(pos_weight)
    return apply(OPS["binary_cross_entropy_with_logits"], (input, target), (reduction, _check_weight(weight, input), pw))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):  # noqa: A002
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    reduction = _legacy(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        t = target._data
        with np.errstate(divide="ignore", invalid="ignore"):
            xlogy = np.where(t == 0, 0, t * np.log(np.where(t == 0, 1, t))).astype(t.dtype)
        loss = Tensor._wrap(xlogy) - target * input  # xlogy(target, target): a constant unless target needs grad
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)
