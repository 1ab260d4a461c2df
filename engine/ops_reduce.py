"""Op table rows: reductions (sum, mean, max/min, prod, var/std, norms, logsumexp), cumulative ops and sorting."""
from __future__ import annotations

import numpy as np

from . import linalg_ops as _la
from .aten_norm import last_dim_norm2_32, norm2_32
from .cascade_sum import torch_sum
from .graphed import Graphed, vjps_by_decomposition
from .graphed import raw as _raw
from .op_table import DIM, OPS, REDUCE, Params, _count, _expand_reduced, defop, reduce_sizes
from .ops_shape import _along, _scatter


def _reduce_arg(a, ans, dim, keepdim, g, pick):
    """Gradient of max/min along dim: all of g goes to the first extreme element (PyTorch's indices)."""
    idx = pick(_raw(a), axis=dim, keepdims=True)
    if type(g) is Graphed:  # a constant one-hot mask times g: differentiable in g
        mask = np.zeros(a.shape, dtype=bool)
        np.put_along_axis(mask, idx, True, axis=dim)
        return mask * (g if keepdim else np.expand_dims(g, dim))
    z = np.zeros(a.shape, dtype=g.dtype)
    np.put_along_axis(z, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return z


def _evenly(a, ans, g):
    """Gradient of a full max/min: PyTorch shares it evenly among tied extremes."""
    mask = a == ans
    return mask * (g / mask.sum())





# Reductions
def _sum(a, dims=None, keep=False):
    """float32 sums in ATen's order (engine/cascade_sum.py), others numpy's."""
    if type(a) is not np.ndarray:
        if not np.ndim(a):  # a numpy scalar (a 0-d op's result): its dim 0 is itself, which numpy has no axis for
            return a.sum()
        return a.sum(axis=dims, keepdims=keep)
    return torch_sum(a, dims, keep)


def _mean(a, dims=None, keep=False):
    """ATen's CPU mean: the sum, then divided by the count in the result's dtype."""
    if type(a) is not np.ndarray or a.dtype != np.float32:
        return a.mean(axis=dims, keepdims=keep)
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is nan, as torch's
        return _sum(a, dims, keep) / a.dtype.type(_count(a.shape, dims) if dims is not None else a.size)


defop("sum", "SumBackward0", "sum", _sum, (lambda g, ans, a: np.broadcast_to(g, a.shape), "1"), saves=False)


defop("sum_dim", "SumBackward1", "sum", _sum,
      (lambda g, ans, a, dims, keep: _expand_reduced(g, a.shape, dims, keep), "1"), saves=False, params=REDUCE,
      sizes=reduce_sizes(0, 1))


defop("mean", "MeanBackward0", "mean", _mean, (lambda g, ans, a: np.broadcast_to(g / a.size, a.shape), r"\frac{1}{n}"),
      saves=False)


defop("mean_dim", "MeanBackward1", "mean", _mean,
      (lambda g, ans, a, dims, keep: _expand_reduced(g / _count(a.shape, dims), a.shape, dims, keep), r"\frac{1}{n}"),
      saves=False, params=REDUCE, sizes=reduce_sizes(0, 1))


def _norm(a):
    out = norm2_32(a)  # ATen's float32 summation order (engine/aten_norm.py)
    return np.sqrt((a * a).sum()) if out is None else out


defop("norm", "LinalgVectorNormBackward0", "‖·‖", _norm,
      (lambda g, ans, a: g * a / ans if ans != 0 else g * 0 * a, r"\frac{a}{\lVert a\rVert}"), needs=("ar",))


defop("max", "MaxBackward1", "max", lambda a: a.max(), (lambda g, ans, a: _evenly(a, ans, g), r"\mathbb{1}[a=\max a]"),
      needs=("ar",))


defop("min", "MinBackward1", "min", lambda a: a.min(), (lambda g, ans, a: _evenly(a, ans, g), r"\mathbb{1}[a=\min a]"),
      needs=("ar",))


defop("max_dim", "MaxBackward0", "max", lambda a, dim, keep: a.max(axis=dim, keepdims=keep),
      (lambda g, ans, a, dim, keep: _reduce_arg(a, ans, dim, keep, g, np.argmax), r"\mathbb{1}[i=\arg\max a]"),
      needs=("a",), params=REDUCE, sizes=reduce_sizes(0, 1))


defop("min_dim", "MinBackward0", "min", lambda a, dim, keep: a.min(axis=dim, keepdims=keep),
      (lambda g, ans, a, dim, keep: _reduce_arg(a, ans, dim, keep, g, np.argmin), r"\mathbb{1}[i=\arg\min a]"),
      needs=("a",), params=REDUCE, sizes=reduce_sizes(0, 1))


defop("argmax", None, "argmax", lambda a, dim=None, keep=False: np.argmax(a, axis=dim, keepdims=keep), saves=False,
      params=REDUCE, sizes=reduce_sizes(0, 1))


defop("argmin", None, "argmin", lambda a, dim=None, keep=False: np.argmin(a, axis=dim, keepdims=keep), saves=False,
      params=REDUCE, sizes=reduce_sizes(0, 1))


def _logsumexp(a, dims, keep):
    # NOTE: shift by the max (0 where it is ±inf) so exp() neither overflows nor turns inf - inf into nan.
    m = a.max(axis=dims, keepdims=True) if a.size else np.zeros((1,) * a.ndim, a.dtype)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(a - m).sum(axis=dims, keepdims=True)) + m
    return out if keep else np.squeeze(out, axis=dims if dims is not None else None)


def _keep(x, shape, dims, keepdim):
    """A reduction's result broadcast back to the input's shape (for VJPs that read ans)."""
    return _expand_reduced(x, shape, dims, keepdim)


def _cumsum_vjp(g, ans, a, dim):
    return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)


def _cumprod_vjp(g, ans, a, dim):
    """PyTorch's gradient with zeros: before a slice's first zero sum_{j>=k} g_j ans_j / a_k; at that zero the
    product of the others (the cumprod with the zero read as 1); after it 0."""
    if type(g) is Graphed:  # those branches cut the dependence on a zero: create_graph differentiates the products
        return vjps_by_decomposition(lambda x: _cumprod_composed(x, dim), g, (a,))[0]
    zero = a == 0
    first = zero & (np.cumsum(zero, axis=dim) == 1)
    before = np.cumsum(zero, axis=dim) == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = _cumsum_vjp(g * ans, None, None, dim) / np.where(before, a, 1)
    others = _cumsum_vjp(g * np.cumprod(np.where(first, 1, a), axis=dim), None, None, dim)
    return np.where(before, plain, np.where(first, others, 0))


def _cumprod_composed(a, dim):
    """cumprod as running products of slices (mul ops): what create_graph differentiates."""
    lead = (slice(None),) * dim
    run = a[lead + (slice(0, 1),)]
    parts = [run]
    for i in range(1, a.shape[dim]):
        run = run * a[lead + (slice(i, i + 1),)]
        parts.append(run)
    return np.concatenate(parts, axis=dim)


def _others_product(a, dim):
    """Product of all other elements along dim, without dividing (exact with zeros): exclusive cumprods."""
    left = np.cumprod(np.concatenate([np.ones_like(np.take(a, [0], dim)), np.take(a, np.arange(a.shape[dim] - 1), dim)],
                                     axis=dim), axis=dim)
    right = np.flip(np.cumprod(np.flip(np.concatenate([np.take(a, np.arange(1, a.shape[dim]), dim),
                                                       np.ones_like(np.take(a, [0], dim))], axis=dim), dim), axis=dim), dim)
    return left * right


def _prod_all_vjp(g, ans, a):
    return g * np.reshape(_others_product(np.reshape(a, -1), 0), a.shape) if a.size else np.zeros_like(a)


def _prod_dim_vjp(g, ans, a, dim, keep):
    return _expand_reduced(g, a.shape, (dim,), keep) * _others_product(a, dim) if a.size else np.zeros_like(a)


def _sort_order(a, dim, descending):
    """Stable indices along dim; descending keeps equal elements in their original order (PyTorch's stable=True)
    and puts NaN first, ascending puts it last, as PyTorch does."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    key = a.astype(np.int64 if a.dtype.kind in "bu" else a.dtype, copy=False)
    if key.dtype.kind == "f":
        key = np.where(np.isnan(key), -np.inf, -key)  # NOTE: NaN sorts as the largest; -inf then ties with NaN
        return np.argsort(key, axis=dim, kind="stable")
    return np.argsort(-key, axis=dim, kind="stable")


def _topk_order(a, k, dim, largest):
    return np.take(_sort_order(a, dim, largest), np.arange(k), axis=dim) if a.ndim else np.zeros((), np.int64)


def _take_order(a, order, dim):
    return np.take_along_axis(a, order, axis=dim) if a.ndim else a.copy()


def _put_order(g, order, dim, shape):
    return _scatter(shape, g.dtype, _along(order, dim), g) if shape else g


def _corrected(a, dims, correction):
    n = _count(a.shape, dims)
    return a.dtype.type(max(n - correction, 0)) if a.dtype.kind == "f" else max(n - correction, 0)


def _var_of_all(a, correction, take_sqrt):
    """ATen's std_var_all_cpu (a float tensor's var or std over all of it): torch's mean, then the squared
    deviations added one after another in float64, divided and rooted in float64, rounded to the dtype once.
    NOTE: numpy's float32 sum of float32 squares differs from it in the last bit (makemore's printed stds)."""
    mean = float(_mean(a))
    deviations = a.reshape(-1).astype(np.float64) - mean
    squares = deviations * deviations
    total = np.add.accumulate(squares)[-1]  # sequential, as the kernel's loop (np.sum would pair them)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.float64(total) / max(0.0, a.size - correction)
        return a.dtype.type(np.sqrt(var) if take_sqrt else var)


def _whole(a, dims):
    return (type(a) is np.ndarray and a.dtype.kind == "f" and a.dtype.itemsize >= 4 and a.size > 0
            and (dims is None or len({d % max(a.ndim, 1) for d in dims}) == max(a.ndim, 1)))


WELFORD_MAX_STEPS = 100_000  # past this many reduced elements per output numpy's two-pass var (a Python loop each)


def _welford(a, dims, correction, keep, take_sqrt):
    """ATen's std_var_kernel over some dims: Welford's update in float64 for each output, its reduced elements in
    memory order, then var = m2 / (n - correction) (and its root) rounded to the dtype once.
    NOTE: numpy's two-pass float32 var differs from it in the last bit (makemore's manual BatchNorm)."""
    axes = sorted({d % a.ndim for d in dims})
    rest = [d for d in range(a.ndim) if d not in axes]
    steps = _count(a.shape, axes)
    x = np.transpose(a, axes + rest).reshape(steps, -1)
    mean = np.zeros(x.shape[1])
    m2 = np.zeros(x.shape[1])
    for i, row in enumerate(x.astype(np.float64)):
        delta = row - mean
        mean = mean + delta / (i + 1)
        m2 = m2 + delta * (row - mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = m2 / (steps - correction if steps > correction else 0)
    out = (np.sqrt(var) if take_sqrt else var).astype(a.dtype).reshape([a.shape[d] for d in rest])
    return np.expand_dims(out, tuple(axes)) if keep else out


def _var(a, dims, correction, keep, take_sqrt=False):
    if _whole(a, dims):
        out = _var_of_all(a, correction, take_sqrt)
        return np.full(_reduced_shape(a, dims, keep), out, a.dtype) if keep else out
    if (type(a) is np.ndarray and a.dtype.kind == "f" and a.dtype.itemsize >= 4 and a.size > 0 and a.ndim
            and dims is not None and _count(a.shape, dims) <= WELFORD_MAX_STEPS):
        return _welford(a, dims, correction, keep, take_sqrt)
    centred = a - a.mean(axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (centred * centred).sum(axis=dims, keepdims=keep) / _corrected(a, dims, correction)
    return np.sqrt(var) if take_sqrt else var


def _var_vjp(g, ans, a, dims, correction, keep):
    """ATen's var_backward: (2 / (n - correction)) * grad * (a - mean), in that order, torch's mean."""
    dof = _count(a.shape, dims) - correction
    if type(a) is np.ndarray and a.dtype == np.float32:
        mean = _mean(a) if dims is None else _mean(a, dims, True)  # torch's self.mean() / mean(dim, keepdim)
    else:
        mean = a.mean(axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 2.0 / dof if dof > 0 else np.nan
        return scale * _expand_reduced(g, a.shape, dims, keep) * (a - mean)


def _std_vjp(g, ans, a, dims, correction, keep):
    with np.errstate(divide="ignore", invalid="ignore"):
        grad_var = g / (ans * 2)
        if type(grad_var) is np.ndarray or np.isscalar(grad_var):  # ATen: masked_fill_(result == 0, 0)
            grad_var = np.where(np.asarray(ans) == 0, 0, grad_var).astype(np.result_type(grad_var))
        return _var_vjp(grad_var, None, a, dims, correction, keep)


def _vector_norm(a, p, dims, keep):
    x = np.abs(a)
    if p == 2:
        whole = dims is None or len({d % max(a.ndim, 1) for d in dims}) == a.ndim
        out = norm2_32(a) if whole else None
        if out is not None:
            return np.full(_reduced_shape(x, dims, keep), out, a.dtype) if keep else out
        if dims is not None and len(dims) == 1 and dims[0] % max(a.ndim, 1) == a.ndim - 1:
            out = last_dim_norm2_32(a, keep)  # (cosine_similarity's norms, along a row)
            if out is not None:
                return out
        return np.sqrt((x * x).sum(axis=dims, keepdims=keep))
    if p == np.inf:
        return x.max(axis=dims, keepdims=keep) if x.size else np.zeros(_reduced_shape(x, dims, keep), x.dtype)
    if p == -np.inf:
        return x.min(axis=dims, keepdims=keep)
    if p == 0:
        return (x != 0).sum(axis=dims, keepdims=keep).astype(a.dtype)
    if p == 1:
        return x.sum(axis=dims, keepdims=keep)
    return (x ** p).sum(axis=dims, keepdims=keep) ** (1.0 / p)


def _reduced_shape(x, dims, keep):
    dims = range(x.ndim) if dims is None else dims
    return tuple(1 if i in dims else n for i, n in enumerate(x.shape) if keep or i not in dims)


def _vector_norm_vjp(g, ans, a, p, dims, keep):
    """PyTorch's: sign(a)|a|^(p-1) / ‖a‖^(p-1); at a zero norm 0; for ±inf the gradient is shared evenly among
    the tied extremes; for p = 0 it is zero."""
    g, n = _expand_reduced(g, a.shape, dims, keep), _expand_reduced(ans, a.shape, dims, keep)
    x = np.abs(a)
    if p == 0:
        return np.zeros_like(a)
    if p == 1:
        return g * np.sign(a)
    if p in (np.inf, -np.inf):
        tied = x == n
        return g * np.sign(a) * tied / tied.sum(axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = a / n if p == 2 else np.sign(a) * x ** (p - 1) / n ** (p - 1)
    return g * np.where(n == 0, 0, scale)


def _accumulated(a):
    """PyTorch sums and multiplies integers and bools in int64 (cumsum, prod), floats in their own dtype."""
    return a.dtype if a.dtype.kind == "f" else np.int64


# PyTorch's calls, defaults left out: sort(dim=1, descending=True), topk(k=2, dim=1), ‖·‖(ord=1.0, dim=(0, 1))
_SORT = Params("keywords", ("dim", "descending"), defaults=(("descending", False),))


_TOPK = Params("keywords", ("k", "dim", "largest"), defaults=(("largest", True),))


defop("logsumexp", "LogsumexpBackward0", "logsumexp", _logsumexp,
      (lambda g, ans, a, dims, keep: _expand_reduced(g, a.shape, dims, keep) * np.exp(a - _keep(ans, a.shape, dims, keep)),
       r"\operatorname{softmax}(a)"), needs=("ar",), params=REDUCE, sizes=reduce_sizes(0, 1))


defop("cumsum", "CumsumBackward0", "cumsum", lambda a, dim: np.cumsum(a, axis=dim, dtype=_accumulated(a)),
      (_cumsum_vjp, r"\mathbb{1}[i\le j]"), saves=False, params=DIM)


defop("cumprod", "CumprodBackward0", "cumprod", lambda a, dim: np.cumprod(a, axis=dim, dtype=_accumulated(a)),
      (_cumprod_vjp, r"\prod_{k\le j,\,k\ne i} a_k"), needs=("ar",), params=DIM)


defop("prod", "ProdBackward0", "prod", lambda a: np.prod(a, dtype=_accumulated(a)),
      (_prod_all_vjp, r"\prod_{k\ne i} a_k"), needs=("a",))


defop("prod_dim", "ProdBackward1", "prod", lambda a, dim, keep: np.prod(a, axis=dim, keepdims=keep, dtype=_accumulated(a)),
      (_prod_dim_vjp, r"\prod_{k\ne i} a_k"), needs=("a",), params=REDUCE, sizes=reduce_sizes(0, 1))


defop("sort", "SortBackward0", "sort", lambda a, dim, desc: _take_order(a, _sort_order(a, dim, desc), dim),
      (lambda g, ans, a, dim, desc: _put_order(g, _sort_order(a, dim, desc), dim, a.shape), r"P^{\top}"), needs=("a",),
      params=_SORT)


# The overload with the stable= keyword (any value) is another node name.
defop("sort_stable", "SortBackward1", "sort", lambda a, dim, desc: _take_order(a, _sort_order(a, dim, desc), dim),
      (lambda g, ans, a, dim, desc: _put_order(g, _sort_order(a, dim, desc), dim, a.shape), r"P^{\top}"), needs=("a",),
      params=_SORT)


defop("topk", "TopkBackward0", "topk", lambda a, k, dim, largest: _take_order(a, _topk_order(a, k, dim, largest), dim),
      (lambda g, ans, a, k, dim, largest: _put_order(g, _topk_order(a, k, dim, largest), dim, a.shape), r"P^{\top}"),
      needs=("a",), params=_TOPK)


defop("var", "VarBackward0", "var", _var, (_var_vjp, r"\frac{2(a-\bar a)}{n-c}"), needs=("a",),
      params=Params("args", ("dim", "correction", "keepdim")), sizes=reduce_sizes(0, 2))


defop("std", "StdBackward0", "std", lambda a, dims, c, keep: _var(a, dims, c, keep, take_sqrt=True),
      (_std_vjp, r"\frac{a-\bar a}{(n-c)\,\sigma}"), needs=("ar",), params=Params("args", ("dim", "correction", "keepdim")),
      sizes=reduce_sizes(0, 2))


# torch.std_mean / var_mean: one node in PyTorch (StdMeanBackward0) with two outputs; here a row per output, both
# named as PyTorch names the node, so a loss of the spread and the mean together sends both gradients back.
_SPREAD = Params("args", ("dim", "correction", "keepdim"))
for _op, _name in (("std_mean", "StdMeanBackward0"), ("var_mean", "VarMeanBackward0")):
    _spread = OPS[_op[:3]]
    defop(f"{_op}_{_op[:3]}", _name, _op[:3], _spread.forward, (_spread.vjps[0], _spread.latex[0]),
          needs=_spread.needs, params=_SPREAD, sizes=reduce_sizes(0, 2))
    defop(f"{_op}_mean", _name, "mean", lambda a, dims, c, keep: _mean(a, dims, keep),
          (lambda g, ans, a, dims, c, keep: _expand_reduced(g / _count(a.shape, dims), a.shape, dims, keep),
           r"\frac{1}{n}"), saves=False, params=_SPREAD, sizes=reduce_sizes(0, 2))


defop("vector_norm", "LinalgVectorNormBackward0", "‖·‖", _vector_norm,
      (_vector_norm_vjp, r"\frac{\operatorname{sign}(a)\,|a|^{p-1}}{\lVert a\rVert_p^{p-1}}"), needs=("ar",),
      params=Params("keywords", ("ord", "dim", "keepdim"), defaults=(("dim", None), ("keepdim", False))), sizes=reduce_sizes(1, 2))


# at::norm(x, p, dim, keepdim) (F.pairwise_distance's): linalg_vector_norm's values and gradient, PyTorch's other node
defop("norm_dim", "NormBackward1", "‖·‖", _vector_norm,
      (_vector_norm_vjp, r"\frac{\operatorname{sign}(a)\,|a|^{p-1}}{\lVert a\rVert_p^{p-1}}"), needs=("ar",),
      params=Params("keywords", ("p", "dim", "keepdim")), sizes=reduce_sizes(1, 2))


# No derivative
defop("argsort", None, "argsort", _sort_order, saves=False, params=_SORT)


defop("topk_indices", None, "topk", _topk_order, saves=False, params=_TOPK)


defop("amax", "AmaxBackward0", "amax", _la.amax, (_la.extreme_vjp, r"\frac{\mathbb{1}[a=\max a]}{\#\max}"),
      needs=("ar",), params=REDUCE)


defop("amin", "AminBackward0", "amin", _la.amin, (_la.extreme_vjp, r"\frac{\mathbb{1}[a=\min a]}{\#\min}"),
      needs=("ar",), params=REDUCE)


def _truth_reduction(numpy_fn):
    """all/any over dims (None: every element): bool, except uint8 in, uint8 out (PyTorch's legacy rule)."""
    def forward(a, dims, keepdim):
        out = numpy_fn(a, axis=dims, keepdims=keepdim)
        return np.asarray(out, np.uint8 if a.dtype == np.uint8 else np.bool_)
    return forward


defop("all", None, "all", _truth_reduction(np.all), saves=False, params=REDUCE, sizes=reduce_sizes(0, 1))


defop("any", None, "any", _truth_reduction(np.any), saves=False, params=REDUCE, sizes=reduce_sizes(0, 1))
