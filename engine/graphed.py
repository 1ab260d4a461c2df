"""Graphed: a Tensor dressed as a numpy array, so the op table's VJP rules run on tensors (create_graph=True).

The rules in the op table (engine/ops_*.py) are written with numpy functions, operators and ndarray
methods. Handed Graphed values instead of arrays, every numpy call they make lands here (NEP 13
`__array_ufunc__`, NEP 18 `__array_function__`) and becomes an op-table primitive through `apply`: a real,
recorded graph node, so the gradient a rule returns can itself be differentiated. The rules stay the only copy
of each derivative. Comparisons and other derivative-free results come back as plain arrays (masks are
constants of the backward graph); a numpy call with no differentiable mapping raises TypeError instead of
silently dropping the graph (no `__array__`).
"""
from __future__ import annotations

import numpy as np

from . import registry
from .op_table import ERF_UFUNC, OPS


def map_table_ufuncs(table):
    """Every table op whose forward is a numpy ufunc is that ufunc's differentiable form (atan2, log1p, ...),
    unless mapped below (pow's scalar forms) or derivative-free (masks stay plain arrays). engine/ops.py calls
    this once the table is complete."""
    for o in table.values():
        f = o.forward
        if isinstance(f, np.ufunc) and o.grad_fn and f.nin == len(o.vjps) and (f not in _UFUNCS or f in _COMPOSED):
            _UFUNCS[f] = lambda *xs, name=o.name: op(name, xs)


def raw(x):
    """The array behind a Graphed value (masks and indices are computed on values, outside the graph)."""
    return x.t._data if type(x) is Graphed else x


def is_graphed(x) -> bool:
    return type(x) is Graphed


def _unwrap(x):
    return x.t if type(x) is Graphed else x


def op(name, inputs, params=()):
    """One op-table primitive on Graphed / array operands; the result is Graphed."""
    return Graphed(registry.apply(OPS[name], tuple(_unwrap(x) for x in inputs), params))


def _axes(axis, ndim):
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(int(a) % max(ndim, 1) for a in axes)


def _sum(x, axis=None, keepdims=False, dtype=None, out=None):
    if out is not None:
        raise TypeError("Graphed: out= cannot be recorded")
    axes = _axes(axis, x.ndim)
    if axes is None and not keepdims:
        return op("sum", (x,))
    return op("sum_dim", (x,), (axes, bool(keepdims)))


def _mean(x, axis=None, keepdims=False, dtype=None, out=None):
    axes = _axes(axis, x.ndim)
    if axes is None and not keepdims:
        return op("mean", (x,))
    return op("mean_dim", (x,), (axes, bool(keepdims)))


def _var(x, axis=None, keepdims=False):
    d = x - _mean(x, axis, keepdims=True)
    return _mean(d * d, axis, keepdims)


def _reshape(x, shape):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if shape == x.shape:
        return x
    return op("view", (x,), (shape,))


def _matmul(a, b):
    na, nb = np.ndim(raw(a)), np.ndim(raw(b))
    if na == 2 and nb == 2:
        return op("mm", (a, b))
    if na == 2 and nb == 1:
        return op("mv", (a, b))
    if na == 1 and nb == 1:
        return op("dot", (a, b))
    if na == 1:  # a vector on the left: as a row
        return _reshape(_matmul(_reshape(as_graphed(a), (1, -1)), b), np.shape(raw(b))[:-2] + np.shape(raw(b))[-1:])
    if nb == 1:
        return _reshape(_matmul(a, _reshape(as_graphed(b), (-1, 1))), np.shape(raw(a))[:-1])
    return op("bmm", (a, b))


def as_graphed(x):
    """A constant array as a Graphed value (no gradient flows into it)."""
    if type(x) is Graphed:
        return x
    return Graphed(registry.Tensor._wrap(np.asarray(x)))


def _power(a, b):
    if type(b) is not Graphed and np.ndim(b) == 0 and type(a) is Graphed:
        return op("pow_scalar", (a,), (b.item() if isinstance(b, np.generic) else b,))
    if type(a) is not Graphed and np.ndim(a) == 0:
        return op("rpow", (b,), (a.item() if isinstance(a, np.generic) else a,))
    return op("pow", (a, b))


def _log1p(a):
    # NOTE: log(1 + a) loses log1p's precision for |a| < 1e-8; the op table has no log1p primitive.
    return op("log", (op("add", (1, a)),))


def _expm1(a):
    return op("sub", (op("exp", (a,)), 1))


def _no_grad(fn):
    """A derivative-free function (comparisons, indices): computed on the values, a plain array."""
    return lambda *args, **kwargs: fn(*(raw(x) for x in args), **kwargs)


_UFUNCS = {
    np.add: lambda a, b: op("add", (a, b)),
    np.subtract: lambda a, b: op("sub", (a, b)),
    np.multiply: lambda a, b: op("mul", (a, b)),
    np.true_divide: lambda a, b: op("div", (a, b)),
    np.power: _power,
    np.maximum: lambda a, b: op("maximum", (a, b)),
    np.minimum: lambda a, b: op("minimum", (a, b)),
    np.negative: lambda a: op("neg", (a,)),
    np.exp: lambda a: op("exp", (a,)),
    np.log: lambda a: op("log", (a,)),
    np.sin: lambda a: op("sin", (a,)),
    np.cos: lambda a: op("cos", (a,)),
    np.tanh: lambda a: op("tanh", (a,)),
    np.sqrt: lambda a: op("sqrt", (a,)),
    np.reciprocal: lambda a: op("reciprocal", (a,)),
    np.absolute: lambda a: op("abs", (a,)),
    np.square: lambda a: op("mul", (a, a)),
    np.log1p: _log1p,
    np.expm1: _expm1,
    np.matmul: _matmul,
}
_COMPOSED = {np.log1p, np.expm1}  # built from other ops only while the table has no primitive of its own
for _f in (np.sign, np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal, np.logical_and,
           np.logical_or, np.logical_not, np.invert, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.isnan,
           np.isfinite):
    _UFUNCS[_f] = _no_grad(_f)


def _where(cond, a, b):
    return op("where", (np.asarray(raw(cond), dtype=bool), a, b))


def _broadcast_to(x, shape, subok=False):
    shape = tuple(shape)
    if type(x) is not Graphed:
        return np.broadcast_to(x, shape)
    return x if x.shape == shape else op("expand", (x,), (shape,))


def _expand_dims(x, axis):
    return op("unsqueeze", (x,), (axis,))


def _transpose(x, axes=None):
    axes = tuple(range(x.ndim))[::-1] if axes is None else tuple(int(a) for a in axes)
    return op("permute", (x,), (axes,))


def _swapaxes(x, a, b):
    return op("transpose", (x,), (a, b))


def _outer(a, b):
    return op("mul", (_reshape(as_graphed(a), (-1, 1)), _reshape(as_graphed(b), (1, -1))))


def _take(x, i, axis=None):
    if axis is None:
        x, axis = _reshape(x, (-1,)), 0
    key = (slice(None),) * (axis % x.ndim)
    if np.ndim(i) == 0:
        return op("select", (x,), (key + (int(i),),))
    return op("index", (x,), (key + (np.asarray(i),),))


def _split(x, indices, axis=0):
    bounds = [0, *(int(i) for i in indices), x.shape[axis]]
    lead = (slice(None),) * (axis % x.ndim)
    return [x[lead + (slice(s, e),)] for s, e in zip(bounds[:-1], bounds[1:])]


def _concatenate(arrays, axis=0):
    return Graphed(registry.apply(OPS["cat"], [as_graphed(a).t for a in arrays], (axis,)))


def _stack(arrays, axis=0):
    return Graphed(registry.apply(OPS["stack"], [as_graphed(a).t for a in arrays], (axis,)))


def _clip(x, lo, hi):
    return op("clamp", (x,), (lo, hi))


def _pad(x, widths, mode="constant", constant_values=0):
    if mode != "constant":
        raise TypeError(f"Graphed: np.pad mode {mode!r} cannot be recorded")
    widths = [tuple(w) for w in widths]
    torch_order = []
    for lo, hi in reversed(widths):  # F.pad lists the last dim first
        torch_order += [int(lo), int(hi)]
    return op("constant_pad_nd", (x,), (tuple(torch_order), constant_values))


def _squeeze(x, axis=None):
    if axis is None:
        return op("squeeze", (x,))
    return op("squeeze_dims", (x,), (_axes(axis, x.ndim),))


def _moveaxis(x, source, destination):
    src = [int(a) % x.ndim for a in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [int(a) % x.ndim for a in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    order = [a for a in range(x.ndim) if a not in src]
    for d, a in sorted(zip(dst, src)):
        order.insert(d, a)
    return _transpose(x, order)


def _cumulative(name):
    def run(x, axis=None, dtype=None, out=None):
        if out is not None or axis is None:
            raise TypeError(f"Graphed: np.{name} needs an axis and no out=")
        return op(name, (x,), (int(axis) % x.ndim,))

    return run


def _roll(x, shift, axis=None):
    if axis is None:
        return op("roll", (x,), ((int(shift),), None))
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (int(shift),)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (int(axis),)
    return op("roll", (x,), (shifts, axes))


def _flip(x, axis=None):
    axes = tuple(range(x.ndim)) if axis is None else _axes(axis, x.ndim)
    return op("flip", (x,), (axes,))


def _prod(x, axis=None, keepdims=False, dtype=None):
    if axis is None and not keepdims:
        return op("prod", (x,))
    if isinstance(axis, tuple):
        raise TypeError("Graphed: np.prod over several axes")
    return op("prod_dim", (x,), (int(axis) % x.ndim, bool(keepdims)))


_FUNCTIONS = {
    np.where: _where, np.broadcast_to: _broadcast_to, np.expand_dims: _expand_dims, np.reshape: _reshape,
    np.transpose: _transpose, np.swapaxes: _swapaxes, np.sum: _sum, np.mean: _mean, np.var: _var,
    np.outer: _outer, np.take: _take, np.split: _split, np.concatenate: _concatenate, np.stack: _stack,
    np.clip: _clip, np.pad: _pad, np.squeeze: _squeeze, np.matmul: _matmul,
    np.ascontiguousarray: lambda x, dtype=None: x, np.copy: lambda x: op("clone", (x,)),
    np.dot: _matmul, np.shape: lambda x: x.shape, np.ndim: lambda x: x.ndim, np.size: lambda x: x.size,
    np.result_type: lambda *xs: np.result_type(*(raw(x) for x in xs)),
    np.moveaxis: _moveaxis, np.cumsum: _cumulative("cumsum"), np.cumprod: _cumulative("cumprod"), np.roll: _roll,
    np.flip: _flip, np.prod: _prod, np.tril: lambda x, k=0: op("tril", (x,), (k,)),
    np.triu: lambda x, k=0: op("triu", (x,), (k,)),
    np.diagonal: lambda x, offset=0, axis1=0, axis2=1: op("diagonal", (x,), (offset, axis1 % x.ndim, axis2 % x.ndim)),
    np.take_along_axis: lambda x, idx, axis: op("gather", (x, np.asarray(idx)), (int(axis) % x.ndim,)),
    np.zeros_like: lambda x, dtype=None: np.zeros(x.shape, dtype or x.dtype),
    **{f: _no_grad(f) for f in (np.argsort, np.argmax, np.argmin, np.argwhere, np.nonzero, np.isclose)},
    np.ones_like: lambda x, dtype=None: np.ones(x.shape, dtype or x.dtype),
}


def _key_kind(key):
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (np.ndarray, list)) for k in parts):
        return "index"
    if all(isinstance(k, (int, np.integer)) for k in parts):
        return "select"
    return "slice"


class Graphed:
    """A Tensor seen as an ndarray (read-only: in-place writes cannot be recorded, so they raise)."""

    __slots__ = ("t",)
    __array_priority__ = 2000  # above Tensor's: mixed operators come here

    def __init__(self, t):
        self.t = t

    # ndarray metadata
    shape = property(lambda self: self.t._data.shape)
    ndim = property(lambda self: self.t._data.ndim)
    size = property(lambda self: self.t._data.size)
    dtype = property(lambda self: self.t._data.dtype)
    flags = property(lambda self: self.t._data.flags)
    T = property(lambda self: _transpose(self))

    def __len__(self):
        return len(self.t._data)

    def __bool__(self):
        return bool(self.t._data)

    def __float__(self):
        return float(self.t._data)

    def item(self):
        return self.t._data.item()

    def __repr__(self):
        return f"Graphed({self.t._data!r})"

    def __array__(self, dtype=None, copy=None):
        # numpy would otherwise read a Graphed as a sequence (it has __len__ and __getitem__), dropping the graph
        raise TypeError("a gradient under create_graph cannot become a plain array: this numpy call has no "
                        "differentiable form in engine/graphed.py")

    # the numpy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = _UFUNCS.get(ufunc) if method == "__call__" and not kwargs else None
        if fn is None:
            if ufunc is ERF_UFUNC and method == "__call__":
                return op("erf", inputs)
            return NotImplemented  # numpy raises TypeError: an untraceable call never loses the graph silently
        return fn(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        fn = _FUNCTIONS.get(func)
        if fn is None:
            return NotImplemented
        return fn(*args, **kwargs)

    # ndarray methods the rules call
    def sum(self, axis=None, keepdims=False, **kw):
        return _sum(self, axis, keepdims, **kw)

    def mean(self, axis=None, keepdims=False):
        return _mean(self, axis, keepdims)

    def var(self, axis=None, keepdims=False):
        return _var(self, axis, keepdims)

    def reshape(self, *shape):
        return _reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    def squeeze(self, axis=None):
        return _squeeze(self, axis)

    def transpose(self, *axes):
        return _transpose(self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else (axes or None))

    def astype(self, dtype, copy=True):
        return self if np.dtype(dtype) == self.dtype else op("to_copy", (self,), (np.dtype(dtype),))

    def copy(self):
        return op("clone", (self,))

    def prod(self, axis=None, keepdims=False):
        return _prod(self, axis, keepdims)

    def __getitem__(self, key):
        return op(_key_kind(key), (self,), (key,))

    # operators
    __add__ = lambda self, o: op("add", (self, o))  # noqa: E731
    __radd__ = lambda self, o: op("add", (o, self))  # noqa: E731
    __sub__ = lambda self, o: op("sub", (self, o))  # noqa: E731
    __rsub__ = lambda self, o: op("sub", (o, self))  # noqa: E731
    __mul__ = lambda self, o: op("mul", (self, o))  # noqa: E731
    __rmul__ = lambda self, o: op("mul", (o, self))  # noqa: E731
    __truediv__ = lambda self, o: op("div", (self, o))  # noqa: E731
    __rtruediv__ = lambda self, o: op("div", (o, self))  # noqa: E731
    __pow__ = lambda self, o: _power(self, o)  # noqa: E731
    __rpow__ = lambda self, o: _power(o, self)  # noqa: E731
    __matmul__ = lambda self, o: _matmul(self, o)  # noqa: E731
    __rmatmul__ = lambda self, o: _matmul(o, self)  # noqa: E731
    __neg__ = lambda self: op("neg", (self,))  # noqa: E731
    __gt__ = lambda self, o: raw(self) > raw(o)  # noqa: E731
    __ge__ = lambda self, o: raw(self) >= raw(o)  # noqa: E731
    __lt__ = lambda self, o: raw(self) < raw(o)  # noqa: E731
    __le__ = lambda self, o: raw(self) <= raw(o)  # noqa: E731
    __eq__ = lambda self, o: raw(self) == raw(o)  # noqa: E731
    __ne__ = lambda self, o: raw(self) != raw(o)  # noqa: E731
    __hash__ = None


def vjps_by_decomposition(forward, g, inputs):
    """VJPs of an op whose numpy rule cannot run on tensors (a fused, in-place kernel), as recorded ops: `forward`
    (the op composed of table ops) runs on clones of the inputs and the clones' gradients are taken with
    create_graph. The clones' edges are cut for that inner pass, so it stops at them; restored, they carry
    higher-order gradients on to the op's real inputs. One gradient per input, None where none flows."""
    grad = registry.grad
    clones = [op("clone", (x,)) if type(x) is Graphed and x.t._requires_grad else x for x in inputs]
    wanted = [c for c in clones if type(c) is Graphed and c.t._requires_grad]
    out = forward(*clones)
    cut = [c.t._grad_fn for c in wanted]
    edges = [n._edges for n in cut]
    for n in cut:
        n._edges = [(None, 0)]
    try:
        grads = iter(grad(out.t, [c.t for c in wanted], grad_outputs=g.t, create_graph=True, allow_unused=True))
    finally:
        for n, e in zip(cut, edges):
            n._edges = e
    result = []
    for c in clones:
        gi = next(grads) if type(c) is Graphed and c.t._requires_grad else None
        result.append(None if gi is None else Graphed(gi))
    return result
