"""F.prelu, F.glu, F.cosine_similarity, F.pairwise_distance and F.group_norm, composed from op-table primitives
with PyTorch 2.13's formulas (so its numbers; the graph's node names are those of the primitives)."""
from __future__ import annotations

import numpy as np

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


def _clamped_norm(x, dim, eps):
    """PyTorch's `linalg_vector_norm(x, 2, dim, keepdim=True).clone()` clamped to eps under no_grad: the value
    is clamped, the gradient is the norm's."""
    n = x.norm(2, dim, keepdim=True).clone()
    n._data = np.maximum(n._data, np.asarray(eps, dtype=n._data.dtype))
    return n


def _broadcast_shape(a, b):
    """The broadcast shape, or PyTorch's error naming the first mismatched dimension from the right."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for d in range(n - 1, -1, -1):
        if a[d] != b[d] and a[d] != 1 and b[d] != 1:
            raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at "
                               f"non-singleton dimension {d}")
    return tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum((x1 / max(‖x1‖, eps)) * (x2 / max(‖x2‖, eps)), dim), each divided by its own norm first (PyTorch's
    order, which keeps the result in [-1, 1])."""
    expect_tensor(x1, "cosine_similarity", "x1", 1)
    expect_tensor(x2, "cosine_similarity", "x2", 2)
    shape = _broadcast_shape(tuple(x1.shape), tuple(x2.shape))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(*shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(*shape)
    return ((x1 / _clamped_norm(x1, dim, eps)) * (x2 / _clamped_norm(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 - x2 + eps‖_p over the last dimension (of the broadcast shape)."""
    expect_tensor(x1, "pairwise_distance", "x1", 1)
    expect_tensor(x2, "pairwise_distance", "x2", 2)
    innermost = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, innermost, keepdim=keepdim)


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


__all__ = ["prelu", "glu", "cosine_similarity", "pairwise_distance", "group_norm"]
