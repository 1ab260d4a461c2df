"""F.prelu, F.glu and F.group_norm, composed from op-table primitives with PyTorch 2.13's formulas (so its
numbers; the graph's node names are those of the primitives). F.cosine_similarity / pairwise_distance: functional.py."""
from __future__ import annotations

import math

import numpy as np

from ..boundary import expect_tensor
from ..creation import ones, zeros
from ..dispatch import apply
from ..dtypes import bool_, legacy_tensor_type
from ..ops import OPS
from ..ops_embedding_bag import MODES
from ..tensor_core import Tensor
from .functional_layers import check_indices, dropout


def prelu(input, weight):  # noqa: A002 — torch's names
    """max(0, x) + weight * min(0, x), one weight per channel (dim 1) or one for all."""
    expect_tensor(input, "prelu", "input", 1)
    expect_tensor(weight, "prelu", "weight", 2)
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
        if weight.ndim != 1:
            raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
        if input.ndim >= 2:
            weight = weight.reshape(n, *([1] * (input.ndim - 2)))
    else:
        weight = weight.reshape(())
    return input.where(input > 0, weight * input)


def glu(input, dim=-1):  # noqa: A002
    """a * sigmoid(b) for the two halves a, b of `dim`."""
    expect_tensor(input, "glu", "input", 1)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.ndim if dim < 0 else dim
    if not 0 <= d < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    a, b = input.chunk(2, d)
    return a * b.sigmoid()


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):  # noqa: A002
    """(x - mean) / sqrt(var + eps) over each group of channels (biased variance), then the per-channel affine."""
    expect_tensor(input, "group_norm", "input", 1)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    grouped = input.reshape(n, num_groups, -1)
    mean = grouped.mean(-1, keepdim=True)
    var = grouped.var(-1, unbiased=False, keepdim=True)
    out = ((grouped - mean) / (var + eps).sqrt()).reshape(*input.shape)
    channel = (c,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(*channel)
    if bias is not None:
        out = out + bias.reshape(*channel)
    return out


__all__ = ["prelu", "glu", "group_norm"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q kᵀ · scale + mask) v as ATen's math path computes it (`_scaled_dot_product_attention_math`): q and kᵀ
    each scaled by √scale, a boolean mask (or is_causal's lower triangle) turned into -inf where it is False, rows that
    are all masked giving 0 (`_safe_softmax`), dropout on the weights. NOTE: PyTorch runs its fused CPU flash kernel
    for inputs that need no gradient; its sums are blocked, so those outputs may differ in the last bits."""
    for i, (name, t) in enumerate((("query", query), ("key", key), ("value", value)), 1):
        expect_tensor(t, "scaled_dot_product_attention", name, i)
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must be at least 2-dimensional")
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention(enable_gqa=True) is not available in flowgrad yet")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {list(query.shape)}, key {list(key.shape)} and value "
                           f"{list(value.shape)} do not fit: query and key need the same last size, key and value the "
                           "same sequence length")
    length, source = query.shape[-2], key.shape[-2]
    factor = math.sqrt(1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale))
    attn = (query * factor) @ (key.transpose(-2, -1) * factor)
    if is_causal:
        attn_mask = ones(length, source, dtype=bool_).tril()
    if attn_mask is not None:
        if attn_mask.dtype == bool_:  # True: take part in attention
            attn_mask = zeros(attn_mask.shape, dtype=query.dtype).masked_fill(attn_mask.logical_not(), float("-inf"))
        attn = attn + attn_mask
    all_masked = (attn == float("-inf")).all(dim=-1, keepdim=True)
    # NOTE: a row masked whole is softmax(-inf, ...) = nan, and nan's gradient poisons the rest: it is replaced first
    weights = attn.masked_fill(all_masked, 0.0).softmax(dim=-1).masked_fill(all_masked, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,  # noqa: A002
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows (engine/ops_embedding_bag.py): a 2-D input is one bag per row,
    a 1-D input is cut into bags at `offsets`. PyTorch's checks and words, in its order."""
    expect_tensor(input, "embedding_bag", "input", 1)
    expect_tensor(weight, "embedding_bag", "weight", 2)
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                             f"length sequences. However, found offsets of type {_type_text(offsets)}")
        # PyTorch's own offsets for a 2-D input: a bag per row (rows of no index are empty bags)
        offsets = Tensor._wrap(np.arange(input.shape[0], dtype=np.int64) * input.shape[1])
        include_last_offset = False
        flat = input.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        expect_tensor(offsets, "embedding_bag", "offsets", 3)
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        flat = input
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if max_norm is not None or scale_grad_by_freq or sparse or per_sample_weights is not None:
        raise NotImplementedError("embedding_bag's max_norm, scale_grad_by_freq, sparse and per_sample_weights are "
                                  "not supported by flowgrad")
    idx = _index_array(flat)
    if weight._data.dtype.kind != "f":
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"BFloat16, Float, Double; but got torch.{legacy_tensor_type(weight._data.dtype)} instead "
                           "(while checking arguments for embedding_bag)")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows} through {rows - 1}, but "
                               f"got {padding_idx}")
        padding_idx %= rows
    _check_offsets(_index_array(offsets), idx.size, offsets._data.dtype)
    bad = np.nonzero((idx < 0) | (idx >= rows))[0]
    if bad.size:
        i = int(bad[0])
        raise RuntimeError(f"Index {i} of input takes value {int(idx[i])} which is not in the valid range [0, {rows})")
    # the program's indices and offsets are the op's inputs, drawn as themselves
    return apply(OPS["embedding_bag"], (weight, flat, offsets), (mode, padding_idx, bool(include_last_offset)))


def _type_text(x):
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else f"<class '{type(x).__name__}'>"


def _index_array(t):
    return check_indices(np.asarray(t._data), "embedding_bag").astype(np.int64, copy=False).reshape(-1)


def _check_offsets(offsets, n, dtype):
    """PyTorch's checks of the offsets (one thread), and flowgrad's refusal of decreasing ones."""
    if offsets.size and offsets[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offsets[0])}\n[ torch.{legacy_tensor_type(dtype)}{{}} ]")
    if offsets.size and offsets[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(offsets[-1])}")
    drops = np.nonzero(np.diff(offsets) < 0)[0]
    if drops.size:  # a bag that ends before it starts: PyTorch's kernels read such bags each their own way
        i = int(drops[0])
        raise RuntimeError(f"embedding_bag: offsets must not decrease, but offsets[{i}] = {int(offsets[i])} comes before "
                           f"offsets[{i + 1}] = {int(offsets[i + 1])} (flowgrad refuses what PyTorch leaves undefined)")
