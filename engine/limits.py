"""Per-run resource limits, checked by the engine before numpy allocates anything."""
from __future__ import annotations

import contextlib
import math
import weakref

import numpy as np

from .autograd import STATE
from .ops_nn import output_sizes


class LimitExceeded(RuntimeError):
    """A program went past one of the run's limits; the message names the limit and its value."""


MAX_DIMS = 64  # PyTorch's own limit on a tensor's dimensions


def _index_result_shape(shape, key):
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


# Reductions along dims (params: dims or dim, keepdim): their output is the input's shape without those dims.
_REDUCE_DIM = frozenset({"sum_dim", "mean_dim", "max_dim", "min_dim", "argmax", "argmin"})


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


# ---------------------------------------------------------------- tensor functions tutorials use (issue 9 section 5)
def _padded_shape(arrays, params):
    shape, pad = list(np.shape(arrays[0])), params[0]
    for i in range(len(pad) // 2):
        shape[-1 - i] += int(pad[2 * i]) + int(pad[2 * i + 1])
    return [tuple(max(n, 0) for n in shape)]


def _nonzero_shape(arrays, params):
    a = arrays[0]
    return [(int(np.count_nonzero(a)), np.ndim(a))]  # counts without a temporary the size of the answer


# op name -> the shapes it allocates, from its inputs' shapes and params (ops whose output can outgrow them)
FUNCS_SIZES = {
    "repeat": lambda arrays, params: [tuple(int(r) * int(n) for r, n in zip(
        params[0], (1,) * (len(params[0]) - np.ndim(arrays[0])) + np.shape(arrays[0])))],
    "diag_embed": lambda arrays, params: [(np.shape(arrays[0])[0] + abs(int(params[0])),) * 2],
    "index_select": lambda arrays, params: [np.shape(arrays[0])[:params[0]] + np.shape(arrays[1])
                                            + np.shape(arrays[0])[params[0] + 1:]],
    "nonzero": _nonzero_shape,
    "logsumexp": lambda arrays, params: [reduced_shape(np.shape(arrays[0]), params[0], params[1])],
    "prod_dim": lambda arrays, params: [reduced_shape(np.shape(arrays[0]), params[0], params[1])],
    "var": lambda arrays, params: [reduced_shape(np.shape(arrays[0]), params[0], params[2])],
    "std": lambda arrays, params: [reduced_shape(np.shape(arrays[0]), params[0], params[2])],
    "vector_norm": lambda arrays, params: [reduced_shape(np.shape(arrays[0]), params[1], params[2])],
    **{f"{mode}_pad{k}d": _padded_shape for mode in ("reflection", "replication") for k in (1, 2, 3)},
}

class Limits:
    """The values come from the run's settings (app/core/config.py `Settings` is the only place defaults are written)."""

    def __init__(self, *, max_tensor_elements: int, max_live_elements: int, max_graph_nodes: int):
        self.max_tensor_elements = max_tensor_elements
        self.max_live_elements = max_live_elements
        self.max_graph_nodes = max_graph_nodes
        self.live_elements = 0
        self.graph_nodes = 0

    def before_alloc(self, shape):
        if len(shape) > MAX_DIMS:
            raise LimitExceeded(f"a tensor can have at most {MAX_DIMS} dimensions, got {len(shape)}")
        n = 1
        for s in shape:
            n *= int(s)
            if n > self.max_tensor_elements:
                break  # the product is already too big: stop multiplying huge shapes
        if n > self.max_tensor_elements and 0 not in shape:
            n = math.prod(map(int, shape))  # the whole product for the message (the loop may have stopped early)
            count = f"{n:,}" if n.bit_length() <= 256 else f"more than {self.max_tensor_elements:,}"  # int→str is bounded
            raise LimitExceeded(f"tensor of shape {list(map(int, shape))} has {count} elements; the limit is "
                                f"max_tensor_elements = {self.max_tensor_elements:,}")
        if n > self.max_tensor_elements or n == 0:
            n = 0
            self._check_extent(shape)
        if self.live_elements + n > self.max_live_elements:
            raise LimitExceeded(f"this run would hold {self.live_elements + n:,} tensor elements at once; the limit is "
                                f"max_live_elements = {self.max_live_elements:,}")

    def _check_extent(self, shape):
        """An empty tensor has no element, but what it spans — the product of its non-zero dimensions — is
        bounded like a tensor's elements: reducing over its zero-size dimension (`zeros(0, 10**5, 10**5).sum(0)`)
        makes that many, and so do the nested lists of `tolist()` (shape (10**5, 10**5, 0))."""
        n = 1
        for s in shape:
            n *= max(int(s), 1)
            if n > self.max_tensor_elements:
                raise LimitExceeded(f"tensor of shape {list(map(int, shape))} is empty but spans more than "
                                    f"{self.max_tensor_elements:,} (the product of its non-zero dimensions); the limit "
                                    f"is max_tensor_elements = {self.max_tensor_elements:,}")

    def before_op(self, op, arrays, params):
        """Predict the output size of ops that can grow it (broadcasting, matmul, expand, cat)."""
        name = op.name
        if name in ("mm", "bmm", "addmm"):  # first: addmm broadcasts too, but its size is the product's
            a, b = arrays[-2], arrays[-1]
            lead = np.broadcast_shapes(np.shape(a)[:-2], np.shape(b)[:-2]) if name == "bmm" else ()
            self.before_alloc(tuple(lead) + (np.shape(a)[-2], np.shape(b)[-1]))
        elif name == "mv":  # (n, 0) @ (0,) has n elements from two empty inputs
            self.before_alloc(np.shape(arrays[0])[:1])
        elif name in _REDUCE_DIM:  # the output of reducing a zero-size dim is bigger than the (empty) input
            self.before_alloc(reduced_shape(np.shape(arrays[0]), params[0], params[1]))
        elif op.broadcasts:
            shapes = [np.shape(a) for a in arrays]
            if any(s != shapes[0] for s in shapes):
                try:
                    self.before_alloc(np.broadcast_shapes(*shapes))
                except ValueError:
                    pass  # the op itself reports the shape mismatch
        elif name == "expand":
            self.before_alloc(params[0])
        elif name in ("cat", "stack"):
            self.before_alloc((sum(int(np.size(a)) for a in arrays),))
        elif name in FUNCS_SIZES:
            for shape in FUNCS_SIZES[name](arrays, params):
                self.before_alloc(shape)
        elif name == "index":
            self.before_alloc(_index_result_shape(np.shape(arrays[0]), params[0]))
        else:
            for shape in output_sizes(name, arrays, params):  # layer ops: output, im2col buffer, padding
                self.before_alloc(shape)

    def track(self, tensor):
        n = int(np.size(tensor._data))
        if n > self.max_tensor_elements:
            raise LimitExceeded(f"tensor of shape {list(np.shape(tensor._data))} has {n:,} elements; the limit is "
                                f"max_tensor_elements = {self.max_tensor_elements:,}")
        if n == 0:  # a view of an empty tensor can reshape it to any dims (zeros(0).view(10**5, 10**5, 0))
            self._check_extent(np.shape(tensor._data))
        self.live_elements += n
        weakref.finalize(tensor, self._release, n)
        if self.live_elements > self.max_live_elements:
            raise LimitExceeded(f"this run holds {self.live_elements:,} tensor elements at once; the limit is "
                                f"max_live_elements = {self.max_live_elements:,}")

    def _release(self, n):
        self.live_elements -= n

    def count_node(self):
        self.graph_nodes += 1
        if self.graph_nodes > self.max_graph_nodes:
            raise LimitExceeded(f"this run built more than {self.max_graph_nodes:,} graph nodes; the limit is "
                                f"max_graph_nodes = {self.max_graph_nodes:,}")


@contextlib.contextmanager
def limited(**kwargs):
    """Activate limits for the code inside (one run at a time per process)."""
    prev = STATE.limits
    STATE.limits = Limits(**kwargs)
    try:
        yield STATE.limits
    finally:
        STATE.limits = prev
