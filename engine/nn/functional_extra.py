"""F.prelu, F.glu and F.group_norm, composed from op-table primitives with PyTorch 2.13's formulas (so its
numbers; the graph's node names are those of the primitives). F.cosine_similarity / pairwise_distance: functional.py."""
from __future__ import annotations

import math

from ..boundary import expect_tensor
from ..creation import ones, zeros
from ..dtypes import bool_
from .functional_layers import dropout


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
