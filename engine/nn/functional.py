"""torch.nn.functional: activations and losses, composed from op-table primitives as PyTorch composes them."""
from __future__ import annotations

import operator

import numpy as np

from ..functional import log_softmax, matmul, softmax  # noqa: F401 — re-exported as F.softmax / F.log_softmax
from ..ops import OPS
from ..tensor import apply

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def relu(x, inplace=False):
    return x.relu()


def sigmoid(x):
    return x.sigmoid()


def tanh(x):
    return x.tanh()


def linear(x, weight, bias=None):
    """PyTorch's at::linear: addmm on 2-D input; other ranks are viewed to 2-D and back."""
    if x.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {x.ndim}D and {weight.ndim}D")
    if weight.ndim == 1:  # a weight vector: x @ w (+ bias), as torch computes it
        if bias is not None and x.ndim == 2:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        out = matmul(x, weight)
        return out + bias if bias is not None else out
    wt = weight.t()
    if x.shape[-1] != weight.shape[1]:  # before numpy, whose matmul error names its gufunc signature
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({int(np.prod(x.shape[:-1]))}x{x.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})")
    if x.ndim == 2:
        return apply(OPS["addmm"], (bias, x, wt)) if bias is not None else apply(OPS["mm"], (x, wt))
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    out = apply(OPS["addmm"], (bias, flat, wt)) if bias is not None else apply(OPS["mm"], (flat, wt))
    return out.view(*lead, weight.shape[0])


def mse_loss(input, target, reduction="mean"):  # noqa: A002 — torch's argument names
    return apply(OPS["mse_loss"], (input, target), (_reduction(reduction),))


def nll_loss(input, target, reduction="mean"):  # noqa: A002
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
    dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, dim)
    if target.is_floating_point():
        # Class probabilities: -sum(p * log q) per sample.
        per_sample = -(target * logp).sum(dim)
        return per_sample.mean() if reduction == "mean" else per_sample.sum() if reduction == "sum" else per_sample
    return nll_loss(logp, target, reduction)


def binary_cross_entropy(input, target, reduction="mean"):  # noqa: A002
    p = input._data
    if p.size and (p.min() < 0 or p.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    return apply(OPS["binary_cross_entropy"], (input, target), (_reduction(reduction),))


def binary_cross_entropy_with_logits(input, target, reduction="mean"):  # noqa: A002
    if input.shape != target.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return apply(OPS["binary_cross_entropy_with_logits"], (input, target), (_reduction(reduction),))


def one_hot(tensor, num_classes=-1):
    from ..creation import _check, _leaf

    idx = np.asarray(tensor._data)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = operator.index(num_classes)
    if num_classes == -1 and not idx.size:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    n = int(idx.max()) + 1 if num_classes == -1 else num_classes
    if idx.size and (idx.min() < 0 or idx.max() >= n) or n < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    _check(idx.shape + (n,))  # refuse before numpy builds it (an empty input still bounds n)
    out = np.zeros(idx.shape + (n,), dtype=np.int64)  # no (n,) temporary: its size is the output's only
    np.put_along_axis(out, idx[..., None], 1, axis=-1)
    return _leaf(out, False)
