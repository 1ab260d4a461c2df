"""Per-run resource limits, checked by the engine before numpy allocates anything."""
from __future__ import annotations

import contextlib
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
        if n > self.max_tensor_elements:
            raise LimitExceeded(f"tensor of shape {list(map(int, shape))} has {n:,} elements; the limit is "
                                f"max_tensor_elements = {self.max_tensor_elements:,}")
        if self.live_elements + n > self.max_live_elements:
            raise LimitExceeded(f"this run would hold {self.live_elements + n:,} tensor elements at once; the limit is "
                                f"max_live_elements = {self.max_live_elements:,}")

    def before_op(self, op, arrays, params):
        """Predict the output size of ops that can grow it (broadcasting, matmul, expand, cat)."""
        name = op.name
        if name in ("mm", "bmm", "addmm"):  # first: addmm broadcasts too, but its size is the product's
            a, b = arrays[-2], arrays[-1]
            lead = np.broadcast_shapes(np.shape(a)[:-2], np.shape(b)[:-2]) if name == "bmm" else ()
            self.before_alloc(tuple(lead) + (np.shape(a)[-2], np.shape(b)[-1]))
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
