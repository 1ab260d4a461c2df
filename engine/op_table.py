"""The op table's row type and its one registry: every differentiable primitive is one `Op` in `OPS`.

An entry carries the forward (numpy), one vector-Jacobian product per input, PyTorch's `grad_fn`
name, the label the page draws, the LaTeX of each local derivative, whether backward needs saved
tensors (PyTorch frees those after backward, so only such nodes raise on a second backward) and
which ones each VJP reads, whether the output is a view, whether the inputs broadcast, how the
op's scalar parameters are written on the page, and the sizes it allocates (for the run's limits).
The rows are added by the ops_* modules and linalg_ops (one per kind of op, each VJP beside its forward)
through `defop`; engine/ops.py imports them all and is where the table is looked up. Adding an op is a
`defop` line in the module of its kind plus its case in tests/engine/test_gradcheck.py (and, when its
output can outgrow its inputs, a `sizes=` rule: tests/engine/test_op_sizes.py).
VJPs take `(g, ans, *inputs, *params)` and return the gradient at the broadcast shape; the engine
undoes broadcasting with `unbroadcast`. This module is the leaf of the engine: it imports nothing of it.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .cascade_sum import torch_sum

PARAM_FORMATS = ("args", "call", "reduce", "reduction", "clamp", "subscript", "hidden", "right", "left", "keywords")


@dataclass(frozen=True, slots=True)
class SameAs:
    """A "keywords" default that is another parameter's value (pooling's stride: its kernel_size)."""
    name: str


@dataclass(frozen=True, slots=True)
class Params:
    """How an op's scalar parameters are written on the page; app/trace/labels.py and
    static/js/oplabels.js implement each format, the page reads it from the API's `ops` table.

    format: "args" `label(p0, p1…)` · "call" `label(p0)` (one dim, shape or dtype) · "reduce"
    `label(dims[, keepdim])` · "reduction" `label` for the default "mean", else `label(reduction)` ·
    "clamp" `clamp(lo, hi)` / `clamp(min=lo)` / `clamp(max=hi)` · "subscript" `[p0…]` · "hidden"
    `label` · "right" `symbol p0` (`** 2`) · "left" `p0 symbol` (`2 **`) · "keywords" PyTorch's call
    `label<N>d(name=p, …)` (`conv2d(stride=2, padding=1)`): N is the length of the first (spatial)
    parameter, a parameter equal to its default is left out, a tuple of equal items is written as one.
    names: what each parameter is called in the inspector.
    defaults ("keywords"): {name: default}; a default {"same_as": other} is another parameter's value
    (max_pool2d's stride is its kernel_size); a name without a default is always written.
    """
    format: str = "args"
    names: tuple = ()
    symbol: str | None = None  # the operator of "left" and "right"
    defaults: tuple = ()  # ("keywords") (name, default) pairs: a tuple so the dataclass stays hashable

    def __post_init__(self):
        if self.format not in PARAM_FORMATS or (self.symbol is None) == (self.format in ("left", "right")):
            raise ValueError(f"bad parameter format {self.format!r} (symbol {self.symbol!r})")  # a typo fails at import
        if any(name not in self.names for name, _ in self.defaults) or (self.defaults and self.format != "keywords"):
            raise ValueError(f"defaults {self.defaults!r} name no parameter of {self.names!r}")

    def table(self) -> dict:
        out = {"format": self.format, "names": list(self.names), "symbol": self.symbol}
        if self.format == "keywords":
            out["defaults"] = {name: {"same_as": d.name} if isinstance(d, SameAs) else d for name, d in self.defaults}
        return out


ARGS = Params()
DIM = Params("call", ("dim",))
REDUCE = Params("reduce", ("dim", "keepdim"))
REDUCTION = Params("reduction", ("reduction",))


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    grad_fn: str | None  # PyTorch's node name; None for ops without a derivative (comparisons)
    label: str
    forward: Callable
    vjps: tuple  # one per input; None where the input never gets a gradient
    latex: tuple  # LaTeX of d(out)/d(input) per input, in the names a, b, c of the inputs
    saves: bool  # backward reads saved tensors: a second backward without retain_graph raises
    variadic: bool  # inputs come as one list (cat, stack); vjps[0](g, ans, i, arrays, *p)
    needs: tuple  # per input: the tensors its VJP reads ("a", "b", "c" = inputs, "r" = result)
    view: bool  # the output shares the input's memory (and so its version counter)
    broadcasts: bool  # the inputs broadcast against each other: limits predict the output, gradients are summed back
    params: Params  # how the op's scalar parameters are written on the page
    # (arrays, params) -> shapes of the big arrays the forward allocates, from shapes alone (engine/limits.py
    # checks them before numpy runs); None where the output is never bigger than the largest input
    sizes: Callable | None = None
    flops: Callable | None = None  # (arrays, params) -> multiply-adds of a matrix product (its time is unbounded)


OPS: dict[str, Op] = {}


def defop(name, grad_fn, label, forward, *rules, saves=True, variadic=False, needs=(), view=False, broadcasts=False,
          params=ARGS, sizes=None, flops=None):
    """rules: (vjp, latex) per input; none for an op without a derivative.

    needs: what each input's VJP reads, as PyTorch saves it: a tensor is saved only when an input
    that needs it requires grad, and modifying a saved tensor in place before backward is PyTorch's
    version-counter error.
    sizes: the shapes the forward allocates (see Op.sizes); a broadcasting op's default is the broadcast shape."""
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice")  # two split modules adding one row fails at import
    vjps = tuple(r[0] for r in rules)
    latex = tuple(r[1] for r in rules)
    if sizes is None and broadcasts:
        sizes = broadcast_sizes
    OPS[name] = Op(name, grad_fn, label, forward, vjps, latex, saves, variadic, needs, view, broadcasts, params,
                   sizes, flops)


def broadcast_sizes(arrays, params):
    """The broadcast output of inputs whose shapes differ; none when they match or clash (the op reports that)."""
    shapes = [np.shape(a) for a in arrays]
    if all(s == shapes[0] for s in shapes):
        return ()
    try:
        return (np.broadcast_shapes(*shapes),)
    except ValueError:
        return ()


_add_reduce = np.add.reduce


def unbroadcast(g, shape):
    """Sum a gradient back to an input's shape: the backward of broadcasting."""
    if g.shape == shape:
        return g
    if type(g) is np.ndarray and g.dtype == np.float32:
        # torch's sum_to: one sum over the leading and the size-1 dims, in ATen's order (engine/cascade_sum.py)
        if not shape:  # a scalar's gradient (a, b, c, d in the tutorial's polynomials): the sum of all
            return torch_sum(g, None, True).reshape(shape)
        extra = g.ndim - len(shape)
        axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and g.shape[extra + i] != 1)
        return torch_sum(g, axes, True).reshape(shape) if axes else g.reshape(shape)
    # np.add.reduce is what ndarray.sum runs, without its Python wrapper (a double-backward gradient has its own .sum)
    total = _add_reduce if type(g) is np.ndarray else _sum_method
    extra = g.ndim - len(shape)
    if extra:
        g = total(g, axis=0 if extra == 1 else tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = total(g, axis=axes, keepdims=True)
    return g


def _sum_method(g, axis, keepdims=False):
    return g.sum(axis=axis, keepdims=keepdims)


def _expand_reduced(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not keepdim and dims is not None and shape:  # (a 0-d input's dim 0 is itself: nothing to expand)
        g = np.expand_dims(g, tuple(d % len(shape) for d in dims))
    return np.broadcast_to(g, shape)


def _count(shape, dims):
    if dims is None:
        return int(np.prod(shape)) if shape else 1
    return int(np.prod([shape[d] for d in dims]))


# ---------------------------------------------------------------- size rules (Op.sizes): shapes from shapes, no data
def index_result_shape(shape, key):
    """An upper bound on the shape advanced indexing gives, from the index shapes alone (no allocation):
    the broadcast index shape, then every dimension no index array consumes."""
    key = key if isinstance(key, tuple) else (key,)
    used = sum(np.ndim(k) if np.asarray(k).dtype.kind == "b" else 1 for k in key
               if k is not None and k is not Ellipsis)
    index_shapes, kept, pos = [], [], 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            span = len(shape) - used
            kept.extend(shape[pos:pos + span])
            pos += span
            continue
        if isinstance(k, (slice, int, np.integer)):
            if isinstance(k, slice):
                kept.append(shape[pos] if pos < len(shape) else 1)
            pos += 1
            continue
        a = np.asarray(k)
        if a.dtype.kind == "b":
            index_shapes.append((int(a.sum()),))
            pos += a.ndim
        else:
            index_shapes.append(a.shape)
            pos += 1
    kept.extend(shape[pos:])
    return tuple(np.broadcast_shapes(*index_shapes)) + tuple(kept) if index_shapes else tuple(kept)


def reduced_shape(shape, dims, keepdim):
    """The shape a reduction over `dims` (an int, a tuple of ints or None for all) gives, without computing it.
    For an empty input it can be far bigger than the input: zeros(0, 10**5, 10**5).sum(0) has 10**10 elements."""
    if not shape:
        return ()
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    n = len(shape)
    reduced = {int(d) % n for d in (dims if isinstance(dims, (tuple, list)) else (dims,))}
    return tuple(1 if i in reduced else s for i, s in enumerate(shape) if keepdim or i not in reduced)


def reduce_sizes(dims_at, keep_at):
    """The size rule of a reduction whose dims and keepdim are params[dims_at] and params[keep_at]."""
    return lambda arrays, params: (reduced_shape(np.shape(arrays[0]), params[dims_at], params[keep_at]),)


def first_param_shape(arrays, params):
    """The size rule of an op whose output has the shape its first parameter gives (expand, the indexing backwards)."""
    return (params[0],)


def padded_shape(arrays, params):
    """The size rule of padding by params[0] = (last dim's left, right, the one before's left, right, ...)."""
    shape, pad = list(np.shape(arrays[0])), params[0]
    for i in range(len(pad) // 2):
        shape[-1 - i] += int(pad[2 * i]) + int(pad[2 * i + 1])
    return (tuple(max(n, 0) for n in shape),)


# math.erf as a numpy ufunc (the erf/gelu rules); engine/graphed.py maps it onto the recorded erf op
ERF_UFUNC = np.frompyfunc(math.erf, 1, 1)
