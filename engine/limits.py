"""Per-run resource limits, checked by the engine before numpy allocates anything."""
from __future__ import annotations

import contextlib
import math
import weakref

import numpy as np

from .grad_mode import STATE
from .op_table import broadcast_sizes
from .op_table import index_result_shape as _index_result_shape  # noqa: F401 — the sandbox's numpy gate


class LimitExceeded(RuntimeError):
    """A program went past one of the run's limits; the message names the limit and its value."""


_NUMBERS = (int, float, bool)
_NUMPY_VALUES = (np.ndarray, np.generic)  # what a tensor's data is: its `.size` is a Python int
_NDARRAY = np.ndarray
_GENERIC = np.generic
_weak = weakref.ref  # (a global, not an attribute read: `track` runs on every op)
MAX_DIMS = 64  # PyTorch's own limit on a tensor's dimensions
_SWEEP_MIN = 4096  # tracked entries below which no sweep runs for memory's sake


class Limits:
    """The values come from the run's settings (app/core/config.py `Settings` is the only place defaults are written)."""

    def __init__(self, *, max_tensor_elements: int, max_live_elements: int, max_graph_nodes: int,
                 max_text_chars: int | None = None, max_op_flops: int | None = None):
        self.max_tensor_elements = max_tensor_elements
        self.max_live_elements = max_live_elements
        self.max_graph_nodes = max_graph_nodes
        self.max_text_chars = max_text_chars  # of one tensor's printout (set_printoptions(profile="full") on 10**6)
        self.max_op_flops = max_op_flops  # multiply-adds of one matrix product: memory is bounded, time is not
        self.graph_nodes = 0  # built since the last backward() ended: the limit counts per pass
        # Live elements are counted lazily: each tracked tensor is kept as (weak reference, element count), and
        # `_counted` adds them all, the dead ones too until a sweep drops them. Every check compares `_counted`
        # first and sweeps only when it would fail, so a limit is exact where it is checked, while an op pays
        # one weak reference (no callback per tensor death, ~1.5 us an op before). NOTE: a sweep must not
        # recurse (a numpy array's finalizer may call count_external during one): `_sweeping` guards it.
        self._tracked: list[tuple[weakref.ref, int]] = []
        self._counted = 0  # elements of the tracked tensors (dead ones included until a sweep) + `_external`
        self._external = 0  # what others counted through count_external (the sandbox's numpy arrays)
        self._sweep_at = _SWEEP_MIN  # entries of `_tracked` that make track() sweep: memory stays bounded
        self._sweeping = False

    @property
    def live_elements(self) -> int:
        """Elements of the tensors (and counted arrays) alive now."""
        self._sweep()
        return self._counted

    def count_external(self, n: int) -> None:
        """Elements held outside tensors (the sandbox's numpy arrays; negative when one dies), counted without a
        sweep: this runs for every array a program makes."""
        self._external += n
        self._counted += n

    def over_live(self, extra: int = 0) -> bool:
        """Whether the live elements and `extra` more exceed max_live_elements (a sweep only when the count says so)."""
        return self._counted + extra > self.max_live_elements and self.live_elements + extra > self.max_live_elements

    def _sweep(self):
        """Drop the dead tensors' entries and their elements from the count."""
        if self._sweeping:
            return
        self._sweeping = True
        try:
            kept = []
            live = 0
            for entry in self._tracked:
                if entry[0]() is not None:
                    kept.append(entry)
                    live += entry[1]
            self._tracked = kept
            self._counted = live + self._external
            self._sweep_at = max(2 * len(kept), _SWEEP_MIN)  # amortised: a sweep per as many new entries
        finally:
            self._sweeping = False

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
        if self.over_live(n):
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
        """Refuse what an op would allocate past the limits (its table entry's `sizes`), before numpy runs it."""
        sizes = op.sizes
        if sizes is None:
            return
        if sizes is broadcast_sizes:
            # Whether the broadcast surely passes `before_alloc`, known without its shape: the output has at most
            # the product of the inputs' sizes (each dimension is one input's), and no empty dimension when no
            # input has one (np.broadcast_shapes is most of what the check costs on small tensors). An input of the
            # shape seen just before adds no dimension the product lacks: `x * x` on 2,000 elements is bounded by
            # 2,000, not 4,000,000. Inline: this runs on every elementwise op.
            bound = 1
            seen = None
            for a in arrays:
                kind = type(a)
                if kind is _NDARRAY:
                    n = a.size
                    if n != 1:  # (one element adds none, whatever its dimensions)
                        if not n:
                            break  # an empty input: its extent is checked below
                        shape = a.shape
                        if shape != seen:
                            seen = shape
                            bound *= n
                elif kind not in _NUMBERS and not isinstance(a, _GENERIC):
                    break  # an operand that is not an array
            else:
                if bound <= self.max_tensor_elements and self._counted + bound <= self.max_live_elements:
                    return
        for shape in sizes(arrays, params):
            self.before_alloc(shape)
        if op.flops is not None:
            self._check_flops(op.flops(arrays, params))

    def track(self, tensor):
        data = tensor._data
        n = data.size if type(data) is _NDARRAY or isinstance(data, _NUMPY_VALUES) else int(np.size(data))
        if n > self.max_tensor_elements:
            raise LimitExceeded(f"tensor of shape {list(np.shape(data))} has {n:,} elements; the limit is "
                                f"max_tensor_elements = {self.max_tensor_elements:,}")
        if not n:  # a view of an empty tensor can reshape it to any dims (zeros(0).view(10**5, 10**5, 0))
            self._check_extent(np.shape(data))
            return  # nothing to give back
        counted = self._counted = self._counted + n
        tracked = self._tracked
        tracked.append((_weak(tensor), n))
        if counted > self.max_live_elements or len(tracked) > self._sweep_at:
            self._sweep()
            if self._counted > self.max_live_elements:
                raise LimitExceeded(f"this run holds {self._counted:,} tensor elements at once; the limit is "
                                    f"max_live_elements = {self.max_live_elements:,}")

    def track_replaced(self, tensor, old_size: int):
        """`tensor.data = x` gave a tensor new data in place of `old_size` elements. A tensor a run counted
        already keeps its entry: only growth is added (an entry on the same tensor, which dies with it), so a
        training loop's `p.data += -lr * p.grad` does not count p again at every step. A `.data` alias (never
        counted, `_untracked`) is counted whole, as any new tensor is.
        NOTE: a shrink is not given back (its old entry stays): a count may run high, never low."""
        if tensor._untracked:
            self.track(tensor)
            return
        data = tensor._data
        n = int(np.size(data))
        if n > self.max_tensor_elements:
            raise LimitExceeded(f"tensor of shape {list(np.shape(data))} has {n:,} elements; the limit is "
                                f"max_tensor_elements = {self.max_tensor_elements:,}")
        if not n:
            self._check_extent(np.shape(data))
        growth = n - old_size
        if growth <= 0:
            return
        self._counted += growth
        self._tracked.append((_weak(tensor), growth))
        if self._counted > self.max_live_elements or len(self._tracked) > self._sweep_at:
            self._sweep()
            if self._counted > self.max_live_elements:
                raise LimitExceeded(f"this run holds {self._counted:,} tensor elements at once; the limit is "
                                    f"max_live_elements = {self.max_live_elements:,}")

    def _check_flops(self, flops):
        if self.max_op_flops is None:
            return
        if flops > self.max_op_flops:
            raise LimitExceeded(f"this matrix product takes {flops:,} multiply-adds; the limit is "
                                f"max_op_flops = {self.max_op_flops:,}")

    def before_text(self, elements: int):
        """A tensor's printout has at least 3 characters per element shown ('0, '): refuse one that would be
        longer than a run may build, before any number is formatted."""
        if self.max_text_chars is not None and 3 * elements > self.max_text_chars:
            raise LimitExceeded(f"printing {elements:,} elements makes more than {self.max_text_chars:,} characters; "
                                "the limit is max_output_bytes x 4 (print fewer elements: set_printoptions(threshold=...))")

    def count_node(self):
        self.graph_nodes += 1
        if self.graph_nodes > self.max_graph_nodes:
            raise LimitExceeded(f"this pass built more than {self.max_graph_nodes:,} graph nodes (since the last "
                                f"backward()); the limit is max_graph_nodes = {self.max_graph_nodes:,}")

    def end_pass(self):
        """A backward() ended: the graph-node count starts again (a pass runs from the end of one backward
        through the next, as the trace counts passes: engine.trace_events.opens_pass)."""
        self.graph_nodes = 0


@contextlib.contextmanager
def limited(**kwargs):
    """Activate limits for the code inside (one run at a time per process)."""
    prev = STATE.limits
    STATE.limits = Limits(**kwargs)
    try:
        yield STATE.limits
    finally:
        STATE.limits = prev
