"""Op-table rows for the statistics and fused products programs bring (issue 21, names past §3): median (of all
elements, and per dim with its indices), nansum, dist, addcmul, addcdiv and bincount, each VJP beside its forward
as PyTorch's derivatives.yaml writes it."""
from __future__ import annotations

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op
from .op_table import ARGS, OPS, Params, defop
from .ops_shape import _along, _scatter


def _median_all(a):
    """The lower of the two middle values of all elements (PyTorch's median); NaN when any element is NaN."""
    flat = a.reshape(-1)
    if a.dtype.kind == "f" and np.isnan(flat).any():
        return a.dtype.type(np.nan)
    return np.sort(flat, kind="stable")[(flat.size - 1) // 2]


def _evenly_distributed(g, ans, a):
    """PyTorch's evenly_distribute_backward: the gradient shared among every element equal to the median (NaN: the
    NaN elements)."""
    hit = (np.isnan(a) if np.isnan(ans) else a == ans) if a.dtype.kind == "f" else a == ans
    return np.where(hit, g / max(int(hit.sum()), 1), 0).astype(g.dtype, copy=False)


def _median_order(a, dim):
    """The index along `dim` of each row's lower median: a stable sort's middle element, as PyTorch's CPU kernel
    picks among ties, or the first NaN of a row that has one."""
    order = np.argsort(a, axis=dim, kind="stable")  # NaN sorts last
    pick = np.take(order, [(a.shape[dim] - 1) // 2], axis=dim)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        first_nan = np.argmax(nan, axis=dim, keepdims=True)
        pick = np.where(nan.any(axis=dim, keepdims=True), first_nan, pick)
    return pick


def _median_values(a, dim, keep):
    out = np.take_along_axis(a, _median_order(a, dim), axis=dim)
    return out if keep else np.squeeze(out, axis=dim)


def _median_indices(a, dim, keep):
    out = _median_order(a, dim).astype(np.int64)
    return out if keep else np.squeeze(out, axis=dim)


def _median_dim_vjp(g, ans, a, dim, keep):
    """value_selecting_reduction_backward: the gradient goes to the element each row selected."""
    index = _median_order(a, dim)
    if not keep:
        g = np.expand_dims(g, dim)
    return _scatter(a.shape, g.dtype, _along(index, dim), g)


_MEDIAN = Params("reduce", ("dim", "keepdim"))


defop("median", "MedianBackward0", "median", _median_all, (_evenly_distributed, r"\frac{\mathbb{1}[a=m]}{\#m}"),
      needs=("ar",))


defop("median_dim", "MedianBackward1", "median", _median_values, (_median_dim_vjp, r"\mathbb{1}[i=\operatorname{argmed}]"),
      needs=("a",), params=_MEDIAN)


defop("median_indices", None, "median", _median_indices, saves=False, params=_MEDIAN)


def _nansum(a, dims, keep):
    return np.nansum(a, axis=dims, keepdims=keep, dtype=a.dtype if a.dtype.kind == "f" else np.int64)


def _nansum_vjp(g, ans, a, dims, keep):
    if not keep and dims is not None:
        g = np.expand_dims(g, dims)
    return np.where(np.isnan(a), 0, np.broadcast_to(g, a.shape)).astype(g.dtype, copy=False)


defop("nansum", "NansumBackward0", "nansum", _nansum, (_nansum_vjp, r"\mathbb{1}[a\ne\mathrm{NaN}]"), needs=("a",),
      params=Params("reduce", ("dim", "keepdim")))


def _dist(a, b, p):
    d = np.abs(a - b)
    if p == 2:
        return np.sqrt((d * d).sum())
    if p == np.inf:
        return d.max() if d.size else d.dtype.type(0)
    if p == -np.inf:
        return d.min() if d.size else d.dtype.type(np.inf)
    if p == 0:
        return d.dtype.type((d != 0).sum())
    if p == 1:
        return d.sum()
    return (d ** p).sum() ** (1.0 / p)


def _dist_vjp_a(g, ans, a, b, p):
    """PyTorch's norm_backward of a - b: sign(d)|d|^(p-1) / dist^(p-1) (0 where the distance is 0); for ±inf the
    gradient shared among the tied extremes; 0 for p = 0."""
    d = a - b
    x = np.abs(d)
    if p == 0:
        return np.zeros_like(d)
    if p == 1:
        return g * np.sign(d)
    if p in (np.inf, -np.inf):
        tied = x == ans
        return g * np.sign(d) * tied / max(int(tied.sum()), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = d / ans if p == 2 else np.sign(d) * x ** (p - 1) / ans ** (p - 1)
    return g * np.where(ans == 0, 0, scale)


defop("dist", "DistBackward0", "dist", _dist, (_dist_vjp_a, r"\frac{\operatorname{sign}(d)|d|^{p-1}}{\lVert d\rVert_p^{p-1}}"),
      (lambda g, ans, a, b, p: -_dist_vjp_a(g, ans, a, b, p), r"-\frac{\operatorname{sign}(d)|d|^{p-1}}{\lVert d\rVert_p^{p-1}}"),
      needs=("abr", "abr"), broadcasts=True, params=Params("keywords", ("p",), defaults=(("p", 2.0),)))


# NOTE: ATen's CPU kernels compute self + value * t1 * t2 and self + value * t1 / t2 left to right in the dtype:
# (value * t1) * t2, (value * t1) / t2, as here. On its vectorised body (not the tail) ATen fuses addcmul's last
# multiply-add, so a large float32 addcmul differs from this one in the last bit at ~0.2% of its elements.
def _addcmul(a, t1, t2, value):
    return a + (t1.dtype.type(value) * t1 if isinstance(t1, np.ndarray) else value * t1) * t2


def _addcdiv(a, t1, t2, value):
    with np.errstate(divide="ignore", invalid="ignore"):
        return a + (t1.dtype.type(value) * t1 if isinstance(t1, np.ndarray) else value * t1) / t2


_VALUE = Params("keywords", ("value",), defaults=(("value", 1),))

defop("addcmul", "AddcmulBackward0", "addcmul", _addcmul, (lambda g, ans, a, t1, t2, v: g, "1"),
      (lambda g, ans, a, t1, t2, v: g * (v * t2), r"v\,t_2"), (lambda g, ans, a, t1, t2, v: g * (v * t1), r"v\,t_1"),
      needs=("", "c", "b"), broadcasts=True, params=_VALUE)


def _addcdiv_t2_vjp(g, ans, a, t1, t2, v):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -g * (v * t1) / (t2 * t2)


def _addcdiv_t1_vjp(g, ans, a, t1, t2, v):
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * v / t2


defop("addcdiv", "AddcdivBackward0", "addcdiv", _addcdiv, (lambda g, ans, a, t1, t2, v: g, "1"),
      (_addcdiv_t1_vjp, r"\frac{v}{t_2}"), (_addcdiv_t2_vjp, r"-\frac{v\,t_1}{t_2^{2}}"), needs=("", "c", "bc"),
      broadcasts=True, params=_VALUE)


def _scaled_sum(a, b, alpha, sign):
    """a + sign * alpha * b as ATen's add / sub with alpha compute it: one fused multiply-add in the dtype.
    NOTE: float32 and float16 go through float64, where alpha * b is exact, rounded once; float64 rounds twice
    (numpy has no fused multiply-add), which differs from ATen's in the last bit at most, rarely."""
    dt = np.result_type(a, b)
    if dt.kind == "f" and dt.itemsize < 8:
        wide = np.add(np.asarray(a, np.float64), sign * float(dt.type(alpha)) * np.asarray(b, np.float64))
        with np.errstate(over="ignore"):
            return wide.astype(dt)
    return np.add(a, (sign * alpha) * np.asarray(b)).astype(dt, copy=False) if dt.kind != "b" else np.logical_or(a, b)


_ALPHA = Params("keywords", ("alpha",))

defop("add_scaled", "AddBackward0", "+", lambda a, b, alpha: _scaled_sum(a, b, alpha, 1),
      (lambda g, ans, a, b, alpha: g, "1"), (lambda g, ans, a, b, alpha: g * alpha, r"\alpha"), saves=False,
      broadcasts=True, params=_ALPHA)


defop("sub_scaled", "SubBackward0", "−", lambda a, b, alpha: _scaled_sum(a, b, alpha, -1),
      (lambda g, ans, a, b, alpha: g, "1"), (lambda g, ans, a, b, alpha: -g * alpha, r"-\alpha"), saves=False,
      broadcasts=True, params=_ALPHA)


def _windows(n, size, step):
    return (np.arange((n - size) // step + 1) * step)[:, None] + np.arange(size)[None, :]  # (windows, size)


def _unfold(a, dim, size, step):
    """Tensor.unfold: every `size`-long window of dim `dim`, `step` apart, as a new last dim (a copy here)."""
    if type(a) is Graphed:
        return _graphed_op("unfold", (a,), (dim, size, step))
    if a.ndim == 0:
        return np.broadcast_to(a, (size,)).copy()
    index = _windows(a.shape[dim], size, step)
    return np.moveaxis(np.take(a, index, axis=dim), dim + 1, -1).copy()


def _unfold_vjp(g, ans, a, dim, size, step):
    return _unfold_backward(g, tuple(a.shape), dim, size, step)


def _unfold_backward(g, shape, dim, size, step):
    """Each window's gradient added back where it was taken from (windows overlap when step < size): ATen's
    unfold_backward, itself a recorded op under create_graph (its derivative is unfold again)."""
    if type(g) is Graphed:
        return _graphed_op("unfold_backward", (g,), (shape, dim, size, step))
    if not shape:
        return g.sum().reshape(())
    index = _windows(shape[dim], size, step)
    out = np.zeros(shape, g.dtype)
    moved = np.moveaxis(out, dim, -1)  # a view: (..., n)
    np.add.at(moved, (Ellipsis, index), np.moveaxis(g, dim, -2))
    return out


def _unfold_sizes(arrays, params):
    shape = np.shape(arrays[0])
    dim, size, step = params
    if not shape:
        return ((size,),)
    windows = (shape[dim] - size) // step + 1
    return (tuple(shape[:dim]) + (max(windows, 0),) + tuple(shape[dim + 1:]) + (size,),)


defop("unfold", "UnfoldBackward0", "unfold", _unfold, (_unfold_vjp, r"\sum_{\text{windows}}"), saves=False,
      params=Params("keywords", ("dimension", "size", "step")), sizes=_unfold_sizes)


defop("unfold_backward", "UnfoldBackwardBackward0", "unfold_backward", _unfold_backward,
      (lambda g, ans, x, shape, dim, size, step: _unfold(g, dim, size, step), r"\operatorname{unfold}"), saves=False,
      params=Params("keywords", ("input_sizes", "dim", "size", "step")),
      sizes=lambda arrays, params: (tuple(params[0]),))


def _nearest_index(n_in, n_out, scale):
    """ATen's nearest_idx: the source of each output index (float32 arithmetic, as its kernel computes it)."""
    i = np.arange(n_out)
    if n_out == n_in:
        return i
    if n_out == 2 * n_in:
        return i >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    return np.minimum(np.floor(i.astype(np.float32) * s).astype(np.int64), n_in - 1)


MAX_ONE_HOT = 1 << 22  # entries of the one-hot matrix a nearest resize's double backward multiplies by


def _one_hot_rows(n_in, n_out, scale):
    """(n_out, n_in): row k picks the source of output k, so the forward is M x and the backward Mᵀ g (matmuls:
    recorded as they are under create_graph)."""
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), _nearest_index(n_in, n_out, scale)] = 1
    return m


def _upsample_nearest(a, size, scales):
    """Nearest-neighbour resize of the last len(size) dims of (N, C, *spatial)."""
    out = a
    for k, (n_out, scale) in enumerate(zip(size, scales)):
        axis = a.ndim - len(size) + k
        out = np.take(out, _nearest_index(a.shape[axis], n_out, scale), axis=axis)
    return out


def _upsample_nearest_vjp(g, ans, a, size, scales):
    if type(g) is not Graphed:
        return _upsample_nearest_scatter(g, a, size, scales)
    out = g
    for k, (n_out, scale) in enumerate(zip(size, scales)):  # create_graph: matmuls, recorded (bounded below)
        axis = a.ndim - len(size) + k
        if n_out * a.shape[axis] > MAX_ONE_HOT:
            raise RuntimeError(f"the gradient of a nearest resize from {a.shape[axis]} to {n_out} is too large to "
                               "differentiate again in flowgrad")
        m = _one_hot_rows(a.shape[axis], n_out, scale).astype(a.dtype)
        out = np.swapaxes(np.swapaxes(out, axis, -1) @ m, axis, -1)
    return out


def _upsample_nearest_scatter(g, a, size, scales):
    """Each output's gradient added into its source, outputs in order (ATen's loop), no n_out x n_in matrix."""
    spatial = len(size)
    target = np.zeros((), np.int64)
    for k, (n_out, scale) in enumerate(zip(size, scales)):  # flat source index of each output, C order
        target = target[..., None] * a.shape[a.ndim - spatial + k] + _nearest_index(a.shape[a.ndim - spatial + k],
                                                                                     n_out, scale)
    lead = a.shape[:a.ndim - spatial]
    out = np.zeros(lead + (int(np.prod(a.shape[a.ndim - spatial:], dtype=np.int64)),), g.dtype)
    np.add.at(out, (Ellipsis, target.reshape(-1)), g.reshape(lead + (-1,)))
    return out.reshape(a.shape)


def _upsample_sizes(arrays, params):
    shape = np.shape(arrays[0])
    return (tuple(shape[:len(shape) - len(params[0])]) + tuple(params[0]),)


_UPSAMPLE = Params("keywords", ("output_size", "scales"))
defop("upsample_nearest1d", "UpsampleNearest1DBackward0", "upsample", _upsample_nearest,
      (_upsample_nearest_vjp, r"\sum_{\text{copies}}"), saves=False, params=_UPSAMPLE, sizes=_upsample_sizes)
defop("upsample_nearest2d", "UpsampleNearest2DBackward0", "upsample", _upsample_nearest,
      (_upsample_nearest_vjp, r"\sum_{\text{copies}}"), saves=False, params=_UPSAMPLE, sizes=_upsample_sizes)


def _bincount(a, weights, minlength):
    if weights is None:
        return np.bincount(a, minlength=minlength).astype(np.int64)
    # PyTorch: float32 weights count in float32, every other weight dtype in float64
    dtype = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(a, weights=weights.astype(np.float64), minlength=minlength).astype(dtype)


def _bincount_sizes(arrays, params):
    """One bin per value up to the largest (read from the data: the only op whose size is its input's values)."""
    a = arrays[0]
    return ((max(int(a.max()) + 1 if a.size else 0, params[0]),),)


defop("bincount", None, "bincount", lambda a, minlength: _bincount(a, None, minlength), saves=False,
      params=Params("keywords", ("minlength",), defaults=(("minlength", 0),)), sizes=_bincount_sizes)


defop("bincount_weighted", None, "bincount", _bincount, saves=False,
      params=Params("keywords", ("minlength",), defaults=(("minlength", 0),)), sizes=_bincount_sizes)


__all__ = ["OPS", "ARGS"]
