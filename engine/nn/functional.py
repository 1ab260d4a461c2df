"""torch.nn.functional: activations and losses, composed from op-table primitives as PyTorch composes them.

Every function checks that its tensor arguments are tensors before calling anything on them, with
PyTorch's message (`engine.boundary`).
"""
from __future__ import annotations

import numpy as np

from ..boundary import expect_attribute, expect_tensor, plain_text
from ..functional import log_softmax, softmax  # noqa: F401 — re-exported as F.softmax / F.log_softmax
from ..ops import OPS
from ..tensor import apply

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{plain_text(reduction)} is not a valid value for reduction")
    return reduction


def _same_size(input, target):  # noqa: A002
    """The losses PyTorch writes in Python first compare `target.size()` with `input.size()`."""
    expect_attribute(target, "size")
    expect_attribute(input, "size")


def relu(x, inplace=False):
    expect_tensor(x, "relu", "input", 1)
    return x.relu()


def sigmoid(x):
    expect_attribute(x, "sigmoid")
    return x.sigmoid()


def tanh(x):
    expect_attribute(x, "tanh")
    return x.tanh()


def linear(x, weight, bias=None):
    """PyTorch's at::linear: addmm on 2-D input; other ranks are viewed to 2-D and back."""
    expect_tensor(x, "linear", "input", 1)
    expect_tensor(weight, "linear", "weight", 2)
    if bias is not None:
        expect_tensor(bias, "linear", "bias", 3)
    wt = weight.t()
    if x.ndim == 2:
        return apply(OPS["addmm"], (bias, x, wt)) if bias is not None else apply(OPS["mm"], (x, wt))
    if x.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({int(np.prod(x.shape[:-1]))}x{x.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})")
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    out = apply(OPS["addmm"], (bias, flat, wt)) if bias is not None else apply(OPS["mm"], (flat, wt))
    return out.view(*lead, weight.shape[0])


def mse_loss(input, target, reduction="mean"):  # noqa: A002 — torch's argument names
    _same_size(input, target)
    return apply(OPS["mse_loss"], (input, target), (_reduction(reduction),))


def nll_loss(input, target, reduction="mean"):  # noqa: A002
    expect_tensor(input, "nll_loss_nd", "input", 1)
    expect_tensor(target, "nll_loss_nd", "target", 2)
    t = target._data
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.capitalize()}")
    classes = input.shape[-1] if input.ndim == 1 else input.shape[1]
    if t.size and (t.min() < 0 or t.max() >= classes):
        bad = int(t.max() if t.max() >= classes else t.min())
        raise IndexError(f"Target {bad} is out of bounds.")
    if input.ndim == 2 and t.shape != (input.shape[0],):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({t.shape[0] if t.ndim else 0}).")
    return apply(OPS["nll_loss"], (input, target), (_reduction(reduction),))


def cross_entropy(input, target, reduction="mean"):  # noqa: A002
    expect_tensor(input, "cross_entropy_loss", "input", 1)
    expect_tensor(target, "cross_entropy_loss", "target", 2)
    dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, dim)
    if target.is_floating_point():
        # Class probabilities: -sum(p * log q) per sample.
        per_sample = -(target * logp).sum(dim)
        return per_sample.mean() if reduction == "mean" else per_sample.sum() if reduction == "sum" else per_sample
    return nll_loss(logp, target, reduction)


def binary_cross_entropy(input, target, reduction="mean"):  # noqa: A002
    _same_size(input, target)
    p = input._data
    if p.size and (p.min() < 0 or p.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    return apply(OPS["binary_cross_entropy"], (input, target), (_reduction(reduction),))


def binary_cross_entropy_with_logits(input, target, reduction="mean"):  # noqa: A002
    _same_size(input, target)
    if input.shape != target.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return apply(OPS["binary_cross_entropy_with_logits"], (input, target), (_reduction(reduction),))


def one_hot(tensor, num_classes=-1):
    expect_tensor(tensor, "one_hot", "input", 1)
    from ..creation import _check, _leaf

    idx = np.asarray(tensor._data)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    n = int(idx.max()) + 1 if num_classes < 0 and idx.size else int(num_classes)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise RuntimeError("Class values must be smaller than num_classes.")
    _check(idx.shape + (n,))  # refuse before numpy builds it
    return _leaf((idx[..., None] == np.arange(n)).astype(np.int64), False)
