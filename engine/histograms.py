"""torch.histc and torch.histogram: counts of a tensor's values in bins, as PyTorch's CPU kernel bins them.

Equal-width bins are found as PyTorch finds them: the edges are torch.linspace's, an element's bin is
int((x - left) * bins / (right - left)), then (torch.histogram only) moved to the edge pair that holds it; the last
bin includes its right edge and values outside the edges or NaN are not counted. Neither is differentiable.
"""
from __future__ import annotations

import math

import numpy as np

from .boundary import expect_tensor
from .creation import torch_linspace
from .outparam import write_out
from .tensor_core import Tensor, _check
from .tensor_funcs import return_type

histogram_result = return_type("histogram", ("hist", "bin_edges"))


def _float_input(input, fn, kernel):  # noqa: A002
    expect_tensor(input, fn, "input", 1)
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.type()[6:-6]}\'')
    return np.ravel(input._data)


def _bin_count(bins, fn):
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'bins' must be int, not {type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _check((int(bins) + 1,))  # the edges and the counts: refused before numpy allocates them
    return int(bins)


def _linear_bins(x, edges, local_search):
    """Each counted element's bin index (PyTorch's LINEAR_INTERPOLATION[_WITH_LOCAL_SEARCH])."""
    dt = edges.dtype
    left, right = edges[0], edges[-1]
    with np.errstate(invalid="ignore"):
        x = x[(x >= left) & (x <= right)]
    n = len(edges) - 1
    pos = ((x - left) * dt.type(n) / (right - left)).astype(np.int64)
    if local_search:  # std::upper_bound(edges + max(pos - 1, 0), edges + min(pos + 2, n + 1), x) - edges - 1
        low, high = np.maximum(pos - 1, 0), np.minimum(pos + 2, n + 1)
        count = sum(((low + k < high) & (edges[np.minimum(low + k, n)] <= x)).astype(np.int64) for k in range(3))
        pos = low + count - 1
    return np.minimum(pos, n - 1), x


def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002 — torch's names
    x = _float_input(input, "histc", "histogram_cpu")
    bins = _bin_count(bins, "histc")
    left, right = float(min), float(max)
    if left == right and x.size:
        left, right = float(np.min(x)), float(np.max(x))
    if left == right:
        left, right = left - 1, right + 1
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(f"torch.histc: range of [{_number(left)}, {_number(right)}] is not finite")
    if not left < right:
        raise RuntimeError("torch.histc: max must be larger than min")
    edges = torch_linspace(left, right, bins + 1, x.dtype)
    pos, _ = _linear_bins(x, edges, local_search=False)
    hist = np.bincount(pos, minlength=bins).astype(x.dtype)
    return _result(hist, out)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    x = _float_input(input, "histogram", "histogramdd")
    w = None
    if weight is not None:
        expect_tensor(weight, "histogram", "weight", 3)
        if weight.shape != input.shape:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               f"input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(input.shape)} and weight with shape {list(weight.shape)}")
        w = np.ravel(weight._data)
    if isinstance(bins, Tensor):
        if bins._data.dtype != x.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_c_name(x.dtype)} and bins for dimension 0 with dtype "
                               f"{_c_name(bins._data.dtype)}")
        edges = np.ravel(bins._data)
        _check(edges.shape)
        with np.errstate(invalid="ignore"):
            keep = (x >= edges[0]) & (x <= edges[-1])
        pos = np.searchsorted(edges, x[keep], side="right") - 1
        pos = np.minimum(pos, len(edges) - 2)
        n = max(len(edges) - 1, 0)
    else:
        n = _bin_count(bins, "histogram")
        if range is not None:
            left, right = float(range[0]), float(range[1])
        elif x.size:
            left, right = float(np.min(x)), float(np.max(x))
        else:
            left, right = 0.0, 1.0
        if not (math.isfinite(left) and math.isfinite(right)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_number(left)}, {_number(right)}] is not "
                               "finite")
        if left > right:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_number(left)} max "
                               f"{_number(right)} for dimension 0")
        if left == right:
            left, right = left - 0.5, right + 0.5
        edges = torch_linspace(left, right, n + 1, x.dtype)
        with np.errstate(invalid="ignore"):
            keep = (x >= edges[0]) & (x <= edges[-1])
        pos, _ = _linear_bins(x, edges, local_search=True)
    weights = None if w is None else w[keep]
    hist = np.bincount(pos, weights=weights, minlength=n)[:n].astype(x.dtype)
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = (hist / (hist.sum() * np.diff(edges))).astype(x.dtype)
    if out is not None:
        return histogram_result(_result(hist, out[0]), _result(edges, out[1]))
    return histogram_result(Tensor._wrap(hist), Tensor._wrap(np.array(edges)))


def _c_name(np_dtype):
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(np_dtype.name, np_dtype.name)


def _number(v):
    return int(v) if float(v).is_integer() else v


def _result(values, out):
    if out is None:
        return Tensor._wrap(values)
    return write_out(out, values)


__all__ = ["histc", "histogram", "histogram_result"]


# Tensor.histc / Tensor.histogram are these functions (this module builds on tensor_funcs, which cannot import it)
Tensor.histc = histc
Tensor.histogram = histogram
