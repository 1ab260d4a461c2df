"""torch.quantile / nanquantile (and the Tensor methods) as ATen's quantile_impl computes them: sort (all elements, or
along `dim` moved last), ranks = q * (count - 1) (a row with a NaN ranks last for quantile; nanquantile counts only
the other values), then the values at the ranks below and above, lerp'ed by the rank's fraction ('linear'), by 0.5
('midpoint'), or the value at the floor / ceil / rounded rank. Composed from sort, gather and lerp, so its gradient
flows back through them as PyTorch's does."""
from __future__ import annotations

import numbers

from . import creation, dtypes
from .boundary import expect_tensor, type_name
from .tensor_core import Tensor
from .tensor_tutorial_names import lerp

MODES = ("linear", "lower", "higher", "midpoint", "nearest")
MAX_SORTED = 1 << 24  # ATen: "quantile() input tensor is too large" past 2**24 values in one row


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):  # noqa: A002 — torch's names
    expect_tensor(input, name, "input", 1)
    if interpolation not in MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got "
                           f"{interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, numbers.Real) and not isinstance(q, bool):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {float(q)}")
        q = creation.tensor(float(q), dtype=input.dtype)
    elif not isinstance(q, Tensor):
        raise TypeError(f"{name}(): argument 'q' must be Tensor or float, not {type_name(q)}")
    if q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if q.dtype != input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    ndim = input.dim()
    if dim is not None:
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
            raise TypeError(f"{name}(): argument 'dim' must be int, not {type_name(dim)}")
        if not -max(ndim, 1) <= dim < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {dim})")
        dim = dim % max(ndim, 1)
    # the output's shape: the q values first, then the reduced shape
    if dim is not None and ndim > 0:
        out_shape = [1 if (i == dim and keepdim) else n for i, n in enumerate(input.shape) if i != dim or keepdim]
    else:
        out_shape = [1] * ndim if keepdim else []
    if dim is None:
        sorted_ = input.flatten().sort().values
    elif dim == ndim - 1 or ndim == 0:
        sorted_ = input.reshape(-1).sort().values if ndim == 0 else input.sort().values
    else:
        sorted_ = input.unsqueeze(-1).transpose(dim, -1).sort().values
    if sorted_.shape[-1] > MAX_SORTED:
        raise RuntimeError(f"{name}() input tensor is too large")
    qs = q.reshape(-1)
    in_shape = [*out_shape, sorted_.shape[-1]]
    sorted_ = sorted_.reshape(in_shape) if in_shape else sorted_
    nans = sorted_.isnan()
    last = sorted_.shape[-1] - 1
    q_view = qs.reshape([qs.shape[0]] + [1] * len(in_shape))  # (Q, 1, ..., 1): one row of ranks per q value
    if ignore_nan:
        ranks = q_view * (nans.logical_not().sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        ranks = (q_view * last).masked_fill(nans.any(-1, keepdim=True), last)
    rows = sorted_.unsqueeze(0).expand([qs.shape[0], *in_shape])
    ranks = ranks.expand([qs.shape[0], *in_shape[:-1], 1])
    if interpolation in ("linear", "midpoint"):
        below = ranks.long()
        values_below = rows.gather(-1, below)
        weights = creation.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        values_above = rows.gather(-1, ranks.ceil().long())
        result = lerp(values_below, values_above, weights)
    else:
        ranks = ranks.floor() if interpolation == "lower" else ranks.ceil() if interpolation == "higher" \
            else ranks.round()
        result = rows.gather(-1, ranks.long())
    result = result.squeeze(-1)
    return result.squeeze(0) if q.dim() == 0 else result


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    if out is not None:
        raise TypeError("quantile(): out= is not available in flowgrad")
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    if out is not None:
        raise TypeError("nanquantile(): out= is not available in flowgrad")
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


Tensor.quantile = lambda self, q, dim=None, keepdim=False, *, interpolation="linear": quantile(
    self, q, dim, keepdim, interpolation=interpolation)
Tensor.nanquantile = lambda self, q, dim=None, keepdim=False, *, interpolation="linear": nanquantile(
    self, q, dim, keepdim, interpolation=interpolation)

__all__ = ["nanquantile", "quantile"]
