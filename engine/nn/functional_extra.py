"""F.prelu, F.glu and F.group_norm, composed from op-table primitives with PyTorch 2.13's formulas (so its
numbers; the graph's node names are those of the primitives). F.cosine_similarity / pairwise_distance: functional.py."""
from __future__ import annotations

from ..boundary import expect_tensor


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
