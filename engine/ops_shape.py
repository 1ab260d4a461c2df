"""Op table rows: shape and indexing (views, select/slice/index and their create_graph backward ops, cat/stack,
gather/scatter, repeat/split, triangles and diagonals, flip/roll, reflect/replicate padding).

(Indices are inputs that get no gradient; `dim` is already wrapped to [0, ndim).)
"""
from __future__ import annotations

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op
from .op_table import DIM, Params, defop, first_param_shape, index_result_shape, padded_shape, unbroadcast
from .views import restride


def _scatter(shape, dtype, key, g, accumulate=False, kind="slice"):
    """g placed at `key` in zeros of `shape` (summed where an index repeats): the backward of indexing.
    Under create_graph it is the op `<kind>_backward`, whose own VJP indexes again."""
    if type(g) is Graphed:
        return _graphed_op(kind + "_backward", (g,), (tuple(shape), key, accumulate))
    z = np.zeros(shape, dtype=dtype)
    if accumulate:
        np.add.at(z, key, g)
    else:
        z[key] = g
    return z


# ---------------------------------------------------------------- size rules (the shapes an op allocates)
def _joined_sizes(arrays, params):
    return ((sum(int(np.size(a)) for a in arrays),),)  # cat, stack: every input's elements


def _index_sizes(arrays, params):
    return (index_result_shape(np.shape(arrays[0]), params[0]),)


def _repeat_sizes(arrays, params):
    reps = params[0]
    return (tuple(int(r) * int(n) for r, n in zip(reps, (1,) * (len(reps) - np.ndim(arrays[0])) + np.shape(arrays[0]))),)


def _diag_embed_sizes(arrays, params):
    return ((np.shape(arrays[0])[0] + abs(int(params[0])),) * 2,)


def _index_select_sizes(arrays, params):
    shape, dim = np.shape(arrays[0]), params[0]
    return (shape[:dim] + np.shape(arrays[1]) + shape[dim + 1:],)


def _nonzero_sizes(arrays, params):
    a = arrays[0]
    return ((int(np.count_nonzero(a)), np.ndim(a)),)  # counts without a temporary the size of the answer


# Shape and indexing (views: no saved tensors)
defop("view", "ViewBackward0", "view", lambda a, shape: np.reshape(a, shape), (lambda g, ans, a, shape: g.reshape(a.shape), "1"),
      saves=False, view=True, params=Params("call", ("shape",)))


defop("unsafe_view", "UnsafeViewBackward0", "view", lambda a, shape: np.reshape(a, shape),
      (lambda g, ans, a, shape: g.reshape(a.shape), "1"), saves=False, params=Params("call", ("shape",)))


defop("to_copy", "ToCopyBackward0", "to", lambda a, dt: a.astype(dt), (lambda g, ans, a, dt: g.astype(a.dtype), "1"), saves=False,
      params=Params("call", ("dtype",)))


defop("clone", "CloneBackward0", "clone", np.copy, (lambda g, ans, a: g, "1"), saves=False)


defop("t", "TBackward0", "ᵀ", lambda a: a.T, (lambda g, ans, a: g.T, r"(\cdot)^{\top}"), saves=False, view=True)


defop("transpose", "TransposeBackward0", "transpose", lambda a, d0, d1: np.swapaxes(a, d0, d1),
      (lambda g, ans, a, d0, d1: np.swapaxes(g, d0, d1), r"(\cdot)^{\top}"), saves=False, view=True,
      params=Params("args", ("dim0", "dim1")))


defop("permute", "PermuteBackward0", "permute", lambda a, dims: np.transpose(a, dims),
      (lambda g, ans, a, dims: np.transpose(g, np.argsort(dims)), r"(\cdot)^{\top}"), saves=False, view=True,
      params=Params("call", ("dims",)))


defop("squeeze", "SqueezeBackward0", "squeeze", np.squeeze, (lambda g, ans, a: g.reshape(a.shape), "1"), saves=False, view=True)


defop("squeeze_dim", "SqueezeBackward1", "squeeze", lambda a, dim: np.squeeze(a, dim) if a.shape[dim] == 1 else a,
      (lambda g, ans, a, dim: g.reshape(a.shape), "1"), saves=False, view=True, params=DIM)


defop("squeeze_dims", "SqueezeBackward2", "squeeze", lambda a, dims: np.squeeze(a, dims),
      (lambda g, ans, a, dims: g.reshape(a.shape), "1"), saves=False, view=True, params=Params("call", ("dims",)))


# The same squeeze as PyTorch's matmul emits it for a vector on the left (another overload, another name).
defop("matmul_squeeze", "SqueezeBackward4", "squeeze", lambda a, dims: np.squeeze(a, dims),
      (lambda g, ans, a, dims: g.reshape(a.shape), "1"), saves=False, view=True, params=Params("call", ("dims",)))


defop("unsqueeze", "UnsqueezeBackward0", "unsqueeze", np.expand_dims, (lambda g, ans, a, dim: g.reshape(a.shape), "1"),
      saves=False, view=True, params=DIM)


defop("expand", "ExpandBackward0", "expand", np.broadcast_to, (lambda g, ans, a, shape: unbroadcast(g, a.shape), r"\textstyle\sum"),
      saves=False, view=True, params=Params("call", ("size",)), sizes=first_param_shape)


defop("select", "SelectBackward0", "[i]", lambda a, key: a[key],
      (lambda g, ans, a, key: _scatter(a.shape, g.dtype, key, g, kind="select"), "1"), saves=False, view=True,
      params=Params("subscript", ("index",)))


defop("slice", "SliceBackward0", "[a:b]", lambda a, key: a[key],
      (lambda g, ans, a, key: _scatter(a.shape, g.dtype, key, g), "1"), saves=False, view=True,
      params=Params("subscript", ("index",)))


defop("index", "IndexBackward0", "[idx]", lambda a, key: a[key],
      (lambda g, ans, a, key: _scatter(a.shape, g.dtype, key, g, accumulate=True, kind="index"), "1"), needs=("",),
      params=Params("hidden", ("index",)), sizes=_index_sizes)


defop("cat", "CatBackward0", "cat", lambda arrays, dim: np.concatenate(arrays, axis=dim),
      (lambda g, ans, i, arrays, dim: np.split(g, np.cumsum([x.shape[dim] for x in arrays])[:-1], axis=dim)[i], "1"),
      saves=False, variadic=True, params=DIM, sizes=_joined_sizes)


defop("stack", "StackBackward0", "stack", lambda arrays, dim: np.stack(arrays, axis=dim),
      (lambda g, ans, i, arrays, dim: np.take(g, i, axis=dim), "1"), saves=False, variadic=True, params=DIM, sizes=_joined_sizes)


# t[key] = v on a tensor that requires grad (or with a v that does): PyTorch records IndexPutBackward0 for an
# advanced key (tensors, lists, masks), CopySlices for a view's key (ints, slices) and CopyBackwards for `...` and
# copy_, each saving the key only.
def _put(a, v, key):
    out = a.copy()
    out[key] = v
    return out


def _put_grad_self(g, ans, a, v, key):
    return np.where(_scatter(g.shape, bool, key, True), 0, g)  # the overwritten entries had no say in the result


def _put_grad_value(g, ans, a, v, key):
    picked = g[key]
    return picked if picked.dtype == v.dtype else picked.astype(v.dtype)  # copy_ casts back to the value's dtype


for _name, _grad_fn, _label in (("index_put", "IndexPutBackward0", "[idx]="), ("copy_slices", "CopySlices", "[i]="),
                                ("copy_into", "CopyBackwards", "copy_")):
    defop(_name, _grad_fn, _label, _put, (_put_grad_self, r"\mathbb{1}[i\notin\mathrm{idx}]"),
          (_put_grad_value, r"\mathbb{1}[i=\mathrm{idx}]"), needs=("", ""), params=Params("hidden", ("index",)))


# A view taken again from the tensor an in-place op on it wrote through (PyTorch regenerates the view as
# as_strided of its base); key: the view's elements in the base, strides: a numpy view's where one fits.
defop("as_strided_view", "AsStridedBackward0", "as_strided", restride,
      (lambda g, ans, a, key, strides: _scatter(a.shape, g.dtype, key, g), "1"), saves=False, view=True,
      params=Params("hidden", ("index", "strides")))


# zero_ / fill_ / normal_ / uniform_ on a tensor with history: the old values have no say in the new ones (each
# op's parameter is the values written); fill_ with a 0-d tensor passes the whole gradient's sum to that tensor.
for _name, _grad_fn, _label in (("overwrite_zero", "ZeroBackward0", "zero_"), ("overwrite_fill", "FillBackward2", "fill_"),
                                ("overwrite_normal", "NormalBackward0", "normal_"),
                                ("overwrite_uniform", "UniformBackward0", "uniform_"),
                                ("overwrite_bernoulli", "BernoulliBackward2", "bernoulli_"),
                                ("overwrite_random_full", "RandomBackward2", "random_"),
                                ("overwrite_random_to", "RandomBackward1", "random_"),
                                ("overwrite_random_from_to", "RandomBackward0", "random_")):
    defop(_name, _grad_fn, _label, lambda a, values: np.array(values, dtype=a.dtype),
          (lambda g, ans, a, values: np.zeros_like(g), "0"), saves=False, params=Params("hidden", ("values",)))


defop("overwrite_fill_tensor", "FillBackward3", "fill_", lambda a, v: np.full(a.shape, v, dtype=a.dtype),
      (lambda g, ans, a, v: np.zeros_like(g), "0"), (lambda g, ans, a, v: g.sum(), r"\textstyle\sum"), saves=False)


# Higher-order gradients (create_graph=True): the backward of indexing as ops, so their own gradient (indexing
# again) is recorded too; `_scatter` emits them when a VJP runs on tensors.
for _kind, _grad_fn in (("select", "SelectBackwardBackward0"), ("slice", "SliceBackwardBackward0"),
                        ("index", "IndexPutBackward0")):
    defop(_kind + "_backward", _grad_fn, _kind + "ᵀ", lambda g, shape, key, acc: _scatter(shape, g.dtype, key, g, acc),
          (lambda g, ans, a, shape, key, acc: g[key], "1"), saves=False, params=Params("hidden", ("size", "index", "accumulate")),
          sizes=first_param_shape)


# `.grad` of a leaf after backward(create_graph=True): PyTorch's AccumulateGrad copies the incoming gradient
defop("grad_copy", "CopyBackwards", "copy", np.copy, (lambda g, ans, a: g, "1"), saves=False)


# issue 10: one step of nn.RNN / nn.GRU's input projection, computed for the whole sequence and unbound over time
# (PyTorch's one UnbindBackward0 node has an output per step; here each step's slice is its own node of that name).
defop("unbind_step", "UnbindBackward0", "unbind", lambda a, i: a[i],
      (lambda g, ans, a, i: _scatter(a.shape, g.dtype, i, g), "1"), saves=False, view=True,
      params=Params("args", ("index",)))


def _along(index, dim):
    """The full numpy index that addresses `index`'s entries along `dim` (gather's / scatter's positions)."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _fit(src, shape):
    """src cut to shape in every dim (gather / scatter read only the index's extent of their other operands)."""
    return src[tuple(slice(0, n) for n in shape)]


def _gather(a, index, dim):
    return a[_along(index, dim)] if index.size else np.zeros(index.shape, a.dtype)


def _scatter_into(a, index, src, dim, accumulate):
    """a with src's entries written (or added) at index along dim; a itself is left as it was."""
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else _fit(src, index.shape)
    key = _along(index, dim)
    if accumulate:
        return a + _scatter(a.shape, a.dtype, key, src, accumulate=True)
    hit = _scatter(a.shape, bool, key, True)
    return np.where(hit, _scatter(a.shape, a.dtype, key, src), a)


def _scatter_grad_self(g, index, dim):
    """Written positions got their value from src: no gradient flows back to them in self."""
    return np.where(_scatter(g.shape, bool, _along(index, dim), True), 0, g)


def _scatter_grad_src(g, src, index, dim):
    """The gathered gradient, zero-padded to src's shape (src may be larger than index)."""
    picked = _gather(g, index, dim)
    return picked if picked.shape == src.shape else _scatter(src.shape, g.dtype, tuple(slice(0, n) for n in index.shape), picked)


def _repeat_vjp(g, ans, a, reps):
    """Sum the copies: g viewed as (r0, s0, r1, s1, ...) summed over every r (leading extra dims summed whole)."""
    lead = len(reps) - a.ndim
    g = np.sum(np.reshape(g, (-1,) + np.shape(g)[lead:]), axis=0) if lead else g
    split = [n for r, s in zip(reps[lead:], a.shape) for n in (r, s)]
    return np.sum(np.reshape(g, split), axis=tuple(range(0, 2 * a.ndim, 2))) if a.ndim else g


def _cut(dim, start, stop):
    return (slice(None),) * dim + (slice(start, stop),)


def _diag_key(n, k):
    """Positions of the k-th diagonal of length n in a matrix."""
    i = np.arange(n)
    return (i + max(-k, 0), i + max(k, 0))


def _diag_embed(a, k):
    n = a.shape[0] + abs(k)
    return _scatter((n, n), a.dtype, _diag_key(a.shape[0], k), a)


def _diagonal_vjp(g, ans, a, k, d1=0, d2=1):
    """g written on the k-th diagonal of dims (d1, d2) of zeros shaped like a."""
    moved = tuple(n for i, n in enumerate(a.shape) if i not in (d1, d2)) + (a.shape[d1], a.shape[d2])
    return np.moveaxis(_scatter(moved, g.dtype, (Ellipsis, *_diag_key(g.shape[-1], k)), g), (-2, -1), (d1, d2))


def _index_select_vjp(g, ans, a, index, dim):
    return _scatter(a.shape, g.dtype, _cut(dim, None, None)[:dim] + (index,), g, accumulate=True)


def _pad_index(n, left, right, mode):
    """Which input position each padded position reads along one dim (reflect: mirrored without the edge)."""
    index = np.pad(np.arange(n), (max(left, 0), max(right, 0)), mode="reflect" if mode == "reflect" else "edge")
    return index[max(-left, 0):len(index) - max(-right, 0)]  # a negative pad crops


def _pad_modes(a, pad, mode):
    for i in range(len(pad) // 2):
        a = np.take(a, _pad_index(a.shape[-1 - i], pad[2 * i], pad[2 * i + 1], mode), axis=a.ndim - 1 - i)
    return a


def _pad_modes_vjp(g, ans, a, pad, mode):
    for i in range(len(pad) // 2):
        axis = a.ndim - 1 - i
        index = _pad_index(a.shape[axis], pad[2 * i], pad[2 * i + 1], mode)
        shape = g.shape[:axis] + (a.shape[axis],) + g.shape[axis + 1:]
        g = _scatter(shape, g.dtype, (slice(None),) * axis + (index,), g, accumulate=True)
    return g


_PAD = Params("args", ("pad",))


defop("gather", "GatherBackward0", "gather", _gather,
      (lambda g, ans, a, index, dim: _scatter(a.shape, g.dtype, _along(index, dim), g, accumulate=True),
       r"\mathbb{1}[i=\mathrm{idx}]"),
      (None, ""), needs=("b", ""), params=DIM)


defop("scatter", "ScatterBackward0", "scatter", lambda a, index, src, dim: _scatter_into(a, index, src, dim, False),
      (lambda g, ans, a, index, src, dim: _scatter_grad_self(g, index, dim), r"\mathbb{1}[i\notin\mathrm{idx}]"), (None, ""),
      (lambda g, ans, a, index, src, dim: _scatter_grad_src(g, src, index, dim), r"\mathbb{1}[i=\mathrm{idx}]"),
      needs=("b", "", "b"), params=DIM)


defop("scatter_value", "ScatterBackward1", "scatter",
      lambda a, index, dim, value: _scatter_into(a, index, a.dtype.type(value), dim, False),
      (lambda g, ans, a, index, dim, value: _scatter_grad_self(g, index, dim), r"\mathbb{1}[i\notin\mathrm{idx}]"), (None, ""),
      needs=("b", ""), params=Params("args", ("dim", "value")))


defop("scatter_add", "ScatterAddBackward0", "scatter_add", lambda a, index, src, dim: _scatter_into(a, index, src, dim, True),
      (lambda g, ans, a, index, src, dim: g, "1"), (None, ""),
      (lambda g, ans, a, index, src, dim: _scatter_grad_src(g, src, index, dim), r"\mathbb{1}[i=\mathrm{idx}]"),
      needs=("", "", "b"), params=DIM)


defop("repeat", "RepeatBackward0", "repeat", lambda a, reps: np.tile(a, reps), (_repeat_vjp, r"\textstyle\sum"), saves=False,
      params=Params("call", ("repeats",)), sizes=_repeat_sizes)


defop("split", "SplitBackward0", "split", lambda a, dim, start, stop: a[_cut(dim, start, stop)],
      (lambda g, ans, a, dim, start, stop: _scatter(a.shape, g.dtype, _cut(dim, start, stop), g), "1"), saves=False,
      view=True, params=Params("args", ("dim", "start", "stop")))


defop("split_with_sizes", "SplitWithSizesBackward0", "split", lambda a, dim, start, stop: a[_cut(dim, start, stop)],
      (lambda g, ans, a, dim, start, stop: _scatter(a.shape, g.dtype, _cut(dim, start, stop), g), "1"), saves=False,
      view=True, params=Params("args", ("dim", "start", "stop")))


defop("tril", "TrilBackward0", "tril", lambda a, k: np.tril(a, k), (lambda g, ans, a, k: np.tril(g, k), r"\mathbb{1}[j\le i+k]"),
      saves=False, params=Params("args", ("diagonal",)))


defop("triu", "TriuBackward0", "triu", lambda a, k: np.triu(a, k), (lambda g, ans, a, k: np.triu(g, k), r"\mathbb{1}[j\ge i+k]"),
      saves=False, params=Params("args", ("diagonal",)))


defop("diag_embed", "DiagEmbedBackward0", "diag", _diag_embed, (lambda g, ans, a, k: np.diagonal(g, k), "1"),
      saves=False, params=Params("args", ("diagonal",)), sizes=_diag_embed_sizes)


defop("diag", "DiagonalBackward0_copy", "diag", lambda a, k: np.diagonal(a, k).copy(), (_diagonal_vjp, "1"), saves=False,
      params=Params("args", ("diagonal",)))


defop("diagonal", "DiagonalBackward0", "diagonal", lambda a, k, d1, d2: np.diagonal(a, k, d1, d2), (_diagonal_vjp, "1"),
      saves=False, view=True, params=Params("args", ("offset", "dim1", "dim2")))


defop("flip", "FlipBackward0", "flip", lambda a, dims: np.flip(a, dims).copy(), (lambda g, ans, a, dims: np.flip(g, dims), "P"),
      saves=False, params=Params("call", ("dims",)))


defop("roll", "RollBackward0", "roll", lambda a, shifts, dims: np.roll(a, shifts, dims),
      (lambda g, ans, a, shifts, dims: np.roll(g, tuple(-s for s in shifts) if dims is not None else -shifts[0], dims), "P"),
      saves=False, params=Params("args", ("shifts", "dims")))


defop("index_select", "IndexSelectBackward0", "index_select", lambda a, index, dim: np.take(a, index, axis=dim),
      (_index_select_vjp, r"\mathbb{1}[i=\mathrm{idx}]"), (None, ""), needs=("b", ""), params=DIM, sizes=_index_select_sizes)


def _defpad(name: str, grad_fn: str, mode: str) -> None:
    defop(name, grad_fn, "pad", lambda a, pad: _pad_modes(a, pad, mode),
          (lambda g, ans, a, pad: _pad_modes_vjp(g, ans, a, pad, mode), r"\textstyle\sum"), saves=False, params=_PAD,
          sizes=padded_shape)


for _mode, _torch_name in (("reflect", "Reflection"), ("replicate", "Replication")):
    for _dims in (1, 2, 3):
        _defpad(f"{_torch_name.lower()}_pad{_dims}d", f"{_torch_name}Pad{_dims}DBackward0", _mode)


defop("nonzero", None, "nonzero", lambda a: np.argwhere(a).astype(np.int64), saves=False, sizes=_nonzero_sizes)


# bernoulli is not differentiable in p: PyTorch still records a node (BernoulliBackward0 for torch.bernoulli(p),
# BernoulliBackward1 for bernoulli_(p_tensor), edges to self and p) whose gradient is zeros; the values drawn are
# the op's parameter.
defop("bernoulli_draw", "BernoulliBackward0", "bernoulli", lambda p, values: np.array(values, dtype=p.dtype),
      (lambda g, ans, p, values: np.zeros_like(p), "0"), saves=False, params=Params("hidden", ("values",)))


defop("overwrite_bernoulli_tensor", "BernoulliBackward1", "bernoulli_", lambda a, p, values: np.array(values, dtype=a.dtype),
      (lambda g, ans, a, p, values: np.zeros_like(g), "0"), (lambda g, ans, a, p, values: np.zeros_like(p), "0"),
      saves=False, params=Params("hidden", ("values",)))


# squeeze_ / unsqueeze_ under autograd: the tensor itself takes the new shape, under PyTorch's in-place node names
defop("squeeze_inplace", "SqueezeBackward3", "squeeze_", np.squeeze, (lambda g, ans, a: g.reshape(a.shape), "1"),
      saves=False, view=True)
defop("squeeze_dim_inplace", "SqueezeBackward4", "squeeze_",
      lambda a, dim: np.squeeze(a, dim) if a.shape[dim] == 1 else a, (lambda g, ans, a, dim: g.reshape(a.shape), "1"),
      saves=False, view=True, params=DIM)
defop("squeeze_dims_inplace", "SqueezeBackward5", "squeeze_", lambda a, dims: np.squeeze(a, dims),
      (lambda g, ans, a, dims: g.reshape(a.shape), "1"), saves=False, view=True, params=Params("call", ("dims",)))
defop("unsqueeze_inplace", "UnsqueezeBackward1", "unsqueeze_", np.expand_dims,
      (lambda g, ans, a, dim: g.reshape(a.shape), "1"), saves=False, view=True, params=DIM)


# index_add: source's slices added at `index` along dim (repeats accumulate, in index order as PyTorch's CPU loop)
def _index_add(a, index, source, dim, alpha):
    out = np.array(a, copy=True)
    np.add.at(out, (slice(None),) * dim + (index,), source if alpha == 1 else source * a.dtype.type(alpha))
    return out


def _index_add_source_grad(g, ans, a, index, source, dim, alpha):
    picked = g[(slice(None),) * dim + (index,)]
    picked = picked if alpha == 1 else picked * alpha
    return picked.reshape(np.shape(source))


defop("index_add", "IndexAddBackward0", "index_add", _index_add, (lambda g, ans, a, index, source, dim, alpha: g, "1"),
      (None, ""), (_index_add_source_grad, r"\alpha\,\mathbb{1}[i=\mathrm{idx}]"), needs=("", "", "b"),
      params=Params("args", ("dim", "alpha")))


# masked_select: the elements where the (broadcast) mask is true, as one vector; the gradient goes back to them
def _masked_select(a, mask):
    shape = np.broadcast_shapes(np.shape(a), np.shape(mask))
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


def _masked_select_grad(g, ans, a, mask):
    shape = np.broadcast_shapes(np.shape(a), np.shape(mask))
    return _scatter(shape, g.dtype, np.broadcast_to(mask, shape), g, kind="index")


defop("masked_select", "MaskedSelectBackward0", "masked_select", _masked_select,
      (_masked_select_grad, r"\mathbb{1}[m]"), (None, ""), needs=("", "b"), broadcasts=True)


# contiguous() of a transposed, sliced or expanded tensor: PyTorch's clone into row-major memory (CloneBackward0)
defop("clone_contiguous", "CloneBackward0", "contiguous", np.ascontiguousarray, (lambda g, ans, a: g, "1"), saves=False)
