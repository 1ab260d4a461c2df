"""torch.nn.functional: activations and losses, composed from op-table primitives as PyTorch composes them.

Every function checks that its tensor arguments are tensors before calling anything on them, with
PyTorch's message (`engine.boundary`).
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import dtypes
from ..boundary import expect_attribute, expect_tensor
from ..creation import _check, _leaf
from ..dispatch import refused
from ..functional import log_softmax, matmul, softmax  # noqa: F401 — re-exported as F.softmax / F.log_softmax
from ..grad_mode import no_grad as _no_grad
from ..ops import OPS
from ..product_errors import check_addmm_dtypes as _check_addmm_dtypes
from ..product_errors import check_product_dtypes as _check_product_dtypes
from ..tensor_core import Tensor, apply
from ..tensor_tutorial_names import broadcast_tensors as _broadcast_tensors  # (torch's F has neither name)
from . import functional_extra as _extra
from . import functional_layers as _layers
from . import functional_loss as _loss
from . import functional_more as _more

_T, _ADDMM, _MM = OPS["t"], OPS["addmm"], OPS["mm"]
LINEAR_FAST_PATH = True  # False: every call takes the checks (bench/engine.py --without linear_fast_path)


def relu(x, inplace=False):
    expect_tensor(x, "relu", "input", 1)
    return x.relu_() if inplace else x.relu()  # (in place: the same tensor back, ReluBackward0 on it, as torch)


def sigmoid(x):
    expect_attribute(x, "sigmoid")
    return x.sigmoid()


def tanh(x):
    expect_attribute(x, "tanh")
    return x.tanh()


def linear(x, weight, bias=None):
    """PyTorch's at::linear: addmm on 2-D input; other ranks are viewed to 2-D and back."""
    if LINEAR_FAST_PATH and isinstance(x, Tensor) and isinstance(weight, Tensor) and (bias is None or isinstance(bias, Tensor)):
        xd, wd = x._data, weight._data
        if (xd.ndim == 2 and wd.ndim == 2 and xd.shape[1] == wd.shape[1] and xd.dtype is wd.dtype
                and (bias is None or bias._data.dtype is wd.dtype)):  # the checks below all pass: skip them
            wt = apply(_T, (weight,))
            return apply(_ADDMM, (bias, x, wt)) if bias is not None else apply(_MM, (x, wt))
    return _linear_checked(x, weight, bias)


def _linear_checked(x, weight, bias):
    expect_tensor(x, "linear", "input", 1)
    expect_tensor(weight, "linear", "weight", 2)
    if bias is not None:
        expect_tensor(bias, "linear", "bias", 3)
    if x.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {x.ndim}D and {weight.ndim}D")
    if weight.ndim == 1:  # a weight vector: x @ w (+ bias), as torch computes it
        if bias is not None and x.ndim == 2:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        out = matmul(x, weight)
        return out + bias if bias is not None else out
    wt = weight.t()
    if x.shape[-1] == weight.shape[1]:  # PyTorch never promotes the operands: addmm's message, or mm's
        if bias is not None:
            _check_addmm_dtypes(bias._data.dtype, x._data.dtype, weight._data.dtype)
        else:
            _check_product_dtypes("mm", x._data.dtype, weight._data.dtype)
    if x.shape[-1] != weight.shape[1]:  # before numpy, whose matmul error names its gufunc signature
        raise refused(OPS["addmm"] if bias is not None else OPS["mm"], (bias, x, wt) if bias is not None else (x, wt),
                      RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                                   f"({int(np.prod(x.shape[:-1]))}x{x.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})"))
    if x.ndim == 2:
        return apply(OPS["addmm"], (bias, x, wt)) if bias is not None else apply(OPS["mm"], (x, wt))
    if bias is None:  # at::linear without a bias is matmul (Squeeze or UnsafeView on top, not View)
        return matmul(x, wt)
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    out = apply(OPS["addmm"], (bias, flat, wt)) if bias is not None else apply(OPS["mm"], (flat, wt))
    return out.view(*lead, weight.shape[0])


def one_hot(tensor, num_classes=-1):
    expect_tensor(tensor, "one_hot", "input", 1)

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


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):  # noqa: A002
    """PyTorch's: input / norm(input, p, dim, keepdim).clamp_min(eps).expand_as(input)."""
    expect_tensor(input, "normalize", "input", 1)
    if out is not None:
        raise NotImplementedError("flowgrad's normalize does not write into out=")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps)
    return input / denom.expand_as(input)


def _float_argument(value, fn: str, arg: str, position: int) -> float:
    if not isinstance(value, numbers.Real):  # (a bool is a Real: PyTorch takes eps=True as 1.0)
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be float, not {type(value).__name__}")
    return float(value)


def _int_argument(value, fn: str, arg: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(value).__name__}")
    return int(value)


def _floating_pair(x1, x2, fn: str):
    """ATen's result_type check for two tensors: integer (or bool) inputs are cast to the common floating dtype,
    two integer inputs are refused."""
    k1, k2 = x1._data.dtype, x2._data.dtype
    if k1.kind != "f" and k2.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dtypes.scalar_type_name(np.promote_types(k1, k2))}")
    if k1.kind != "f":
        x1 = x1.to(x2.dtype)
    if k2.kind != "f":
        x2 = x2.to(x1.dtype)
    return x1, x2


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """PyTorch's (ATen's Distance.cpp): each input over its 2-norm along dim, then the product summed over dim
    (SumBackward1). The norms are clones clamped below at eps under no_grad, so a gradient flows through them as
    if unclamped (at a zero vector the input's own term, 1/eps, is what remains, as in PyTorch)."""
    expect_tensor(x1, "cosine_similarity", "x1", 1)
    expect_tensor(x2, "cosine_similarity", "x2", 2)
    dim = _int_argument(dim, "cosine_similarity", "dim")
    eps = _float_argument(eps, "cosine_similarity", "eps", 4)
    x1, x2 = _floating_pair(x1, x2, "cosine_similarity")
    if x1.shape != x2.shape:
        x1, x2 = _broadcast_tensors(x1, x2)
    norm1 = x1.norm(2, dim, keepdim=True).clone()
    norm2 = x2.norm(2, dim, keepdim=True).clone()
    with _no_grad():
        norm1.clamp_(min=eps)  # ATen's clamp_min_
        norm2.clamp_(min=eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """PyTorch's: at::norm(x1 - x2 + eps, p, last dim of the broadcast, keepdim), a NormBackward1 node."""
    expect_tensor(x1, "pairwise_distance", "x1", 1)
    expect_tensor(x2, "pairwise_distance", "x2", 2)
    p = _float_argument(p, "pairwise_distance", "p", 3)
    eps = _float_argument(eps, "pairwise_distance", "eps", 4)
    if not isinstance(keepdim, bool):
        raise TypeError(f"pairwise_distance(): argument 'keepdim' (position 5) must be bool, not {type(keepdim).__name__}")
    diff = x1 - x2 + eps  # floating whatever the inputs (two bool tensors are refused by the subtraction)
    last = max(x1.ndim, x2.ndim) - 1
    dims = (_canonical_dim(last, diff.ndim),) if diff.ndim else None  # a 0-d difference is its own norm's input
    return apply(OPS["norm_dim"], (diff,), (p, dims, keepdim))


def _canonical_dim(dim: int, ndim: int) -> int:
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


# Layers (convolution, pooling, padding, normalisation...): engine/nn/functional_layers.py

conv1d, conv2d, pad = _layers.conv1d, _layers.conv2d, _layers.pad
max_pool1d, max_pool2d, avg_pool1d, avg_pool2d = _layers.max_pool1d, _layers.max_pool2d, _layers.avg_pool1d, _layers.avg_pool2d
adaptive_avg_pool2d = _layers.adaptive_avg_pool2d
adaptive_avg_pool1d = _layers.adaptive_avg_pool1d
interpolate = _layers.interpolate
batch_norm, layer_norm, embedding = _layers.batch_norm, _layers.layer_norm, _layers.embedding
rms_norm, instance_norm = _layers.rms_norm, _layers.instance_norm
dropout, dropout1d, dropout2d = _layers.dropout, _layers.dropout1d, _layers.dropout2d
gelu, leaky_relu, elu, selu, celu, silu = _layers.gelu, _layers.leaky_relu, _layers.elu, _layers.selu, _layers.celu, _layers.silu
softplus, mish, hardtanh, relu6, logsigmoid = _layers.softplus, _layers.mish, _layers.hardtanh, _layers.relu6, _layers.logsigmoid
hardswish, hardsigmoid, threshold = _layers.hardswish, _layers.hardsigmoid, _layers.threshold
softsign, tanhshrink, softmin = _layers.softsign, _layers.tanhshrink, _layers.softmin
prelu, glu, group_norm = _extra.prelu, _extra.glu, _extra.group_norm
scaled_dot_product_attention = _extra.scaled_dot_product_attention
embedding_bag = _extra.embedding_bag


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):  # noqa: A002
    return _layers.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):  # noqa: A002
    return _layers.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)

# Losses: engine/nn/functional_loss.py
mse_loss, nll_loss, cross_entropy = _loss.mse_loss, _loss.nll_loss, _loss.cross_entropy
binary_cross_entropy, binary_cross_entropy_with_logits = _loss.binary_cross_entropy, _loss.binary_cross_entropy_with_logits
l1_loss, smooth_l1_loss, huber_loss, kl_div = _loss.l1_loss, _loss.smooth_l1_loss, _loss.huber_loss, _loss.kl_div

# PixelShuffle, AdaptiveMaxPool, the ranking / triplet / Gaussian losses, Bilinear, RReLU: engine/nn/functional_more.py
pixel_shuffle, pixel_unshuffle = _more.pixel_shuffle, _more.pixel_unshuffle
adaptive_max_pool1d, adaptive_max_pool2d = _more.adaptive_max_pool1d, _more.adaptive_max_pool2d
margin_ranking_loss, triplet_margin_loss = _more.margin_ranking_loss, _more.triplet_margin_loss
gaussian_nll_loss, bilinear, rrelu, rrelu_ = _more.gaussian_nll_loss, _more.bilinear, _more.rrelu, _more.rrelu_
