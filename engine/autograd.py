"""Autograd: grad mode, graph nodes (`grad_fn`), and the backward engine.

Nodes hold their inputs' nodes and the arrays backward needs, never their output tensor, so a graph
is a tree of plain references that reference counting frees the moment the last tensor goes: no
cycles for the garbage collector to chase (micrograd spends ~94% of a step there).
"""
from __future__ import annotations

import heapq
import itertools
import re
import weakref

import numpy as np

from .dtypes import legacy_tensor_type
from .ops import OPS, Op, unbroadcast


class _State:
    """Process-wide switches, read on every op: grad mode, the active recorder, the active limits."""

    __slots__ = ("grad_enabled", "recorder", "limits", "last_write")

    def __init__(self):
        self.grad_enabled = True
        self.recorder = None
        self.limits = None
        self.last_write = -1  # sequence number of the latest in-place write to an array (see note_write)


STATE = _State()
_seq = itertools.count()
# PyTorch's version counters, kept per numpy array: id -> (weakref to the array, sequence numbers of its
# in-place writes). Forward pays nothing; backward looks only when a write happened after a node was made.
_WRITES: dict = {}


def note_write(arr):
    """An array (and the array it is a view of) is about to change in place."""
    if type(arr) is not np.ndarray:
        return  # a numpy scalar is never shared: nothing saved it
    seq = STATE.last_write = next(_seq)
    _log_write(arr, seq)
    if arr.base is not None:
        _log_write(arr.base, seq)


def note_writes(arrays):
    """Several arrays changed in place by one step (an optimizer update)."""
    if arrays:
        seq = STATE.last_write = next(_seq)
        for arr in arrays:
            _log_write(arr, seq)
            if arr.base is not None:
                _log_write(arr.base, seq)


def _forget(key):
    """A callback that drops an array's write log when the array dies (so its id can be reused)."""
    return lambda _: _WRITES.pop(key, None)


def _log_write(a, seq):
    key = id(a)
    entry = _WRITES.get(key)
    if entry is None or entry[0]() is not a:
        entry = _WRITES[key] = (weakref.ref(a, _forget(key)), [])
    entry[1].append(seq)


def carry_writes(old, new):
    """`t.data = x` keeps t's version counter in PyTorch: the new array inherits the old one's writes."""
    entry = _WRITES.get(id(old))
    if entry is not None and entry[0]() is old and type(new) is np.ndarray:
        _WRITES[id(new)] = (weakref.ref(new, _forget(id(new))), list(entry[1]))


def _versions(arr, since):
    """(version now, version when a node made at `since` saved it): in-place writes to the array, or to
    the array it is a view of (a weight written by the optimizer makes its saved `W.t()` stale)."""
    writes = []
    for a in (arr, arr.base):
        entry = _WRITES.get(id(a)) if a is not None else None
        if entry is not None and entry[0]() is a:
            writes = entry[1]  # note_write records a view's writes on its base too: the base's list is complete
    return len(writes), sum(1 for w in writes if w < since)

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class _GradMode:
    """Base of no_grad / enable_grad / set_grad_enabled: a context manager and a decorator."""

    _target = True

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._target
        rec = STATE.recorder
        if rec is not None:
            rec.on_grad_mode(self._target)
        return self

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev
        rec = STATE.recorder
        if rec is not None:
            rec.on_grad_mode(self._prev)
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):  # torch's module path, not the engine's
        return f"<torch.autograd.grad_mode.{type(self).__name__} object at {id(self):#x}>"


class no_grad(_GradMode):  # noqa: N801 — torch's name
    _target = False


class enable_grad(_GradMode):  # noqa: N801
    _target = True


class inference_mode(_GradMode):  # noqa: N801
    def __init__(self, mode: bool = True):
        self._target = not mode


class set_grad_enabled(_GradMode):  # noqa: N801
    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._target  # takes effect as a plain call too, as in torch

    def __enter__(self):
        return self

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self._target})"


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


class Node:
    """A `grad_fn`: one op application. Subclassed once per PyTorch name so type names match torch."""

    __slots__ = ("op", "_edges", "_saved", "_params", "_shapes", "_seq", "_freed", "_retain", "_rid",
                 "__weakref__")

    def __init__(self, op: Op, edges, saved, params, shapes):
        self.op = op
        self._edges = edges  # (node, 0) per input, (None, 0) where the input needs no gradient
        self._saved = saved  # (ans, *input arrays) or None once freed
        self._params = params
        self._shapes = shapes
        self._seq = next(_seq)
        self._freed = False
        self._retain = None  # weakref to the output tensor when it called retain_grad()
        self._rid = None

    def name(self) -> str:
        n = type(self).__name__
        return n if "Backward" in n else "torch::autograd::" + n  # PyTorch's C++ nodes: CopySlices

    @property
    def next_functions(self):
        """As PyTorch lists them: inputs that can never get a gradient (a where condition, nll targets) are left out."""
        if self.op.variadic:
            return tuple(self._edges)
        return tuple(e for e, vjp in zip(self._edges, self.op.vjps) if vjp is not None)

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def apply(self, g):
        """Gradients for each input (None where that input needs none)."""
        if self._freed and self.op.saves:
            raise RuntimeError(FREED_MESSAGE)
        if STATE.last_write > self._seq and self.op.needs:
            self._check_versions()
        op = self.op
        ans, *arrays = self._saved
        out = []
        if op.variadic:
            vjp = op.vjps[0]
            for i, (fn, _) in enumerate(self._edges):
                out.append(None if fn is None else unbroadcast(vjp(g, ans, i, arrays, *self._params), self._shapes[i]))
            return out
        for (fn, _), vjp, shape in zip(self._edges, op.vjps, self._shapes):
            if fn is None or vjp is None:
                out.append(None)
            else:
                out.append(unbroadcast(vjp(g, ans, *arrays, *self._params), shape))
        return out

    def _check_versions(self):
        """PyTorch's error when a tensor this backward needs was changed in place after it was saved."""
        op, (ans, *arrays) = self.op, self._saved
        wanted = "".join(n for (fn, _), n in zip(self._edges, op.needs) if fn is not None)
        for letter in "abcr":
            if letter not in wanted:
                continue
            if letter == "r":
                arr, producer = ans, type(self).__name__
            else:
                i = "abc".index(letter)
                arr, fn = arrays[i], self._edges[i][0]
                if type(arr) is not np.ndarray:
                    continue
                # NOTE: PyTorch regenerates a modified view's grad_fn as AsStrided and names that in its error.
                producer = None if fn is None or type(fn) is AccumulateGrad else (
                    "AsStridedBackward0" if fn.op.view else type(fn).__name__)
            now, then = _versions(arr, self._seq)
            if now != then:
                raise RuntimeError(_modified_message(now, then, arr.shape, arr.dtype, producer))

    def release(self):
        # Nodes whose backward needs only shapes (add, view, sum) stay runnable, as in PyTorch.
        self._freed = True
        if self.op.saves:
            self._saved = None


def _modified_message(now, expected, shape, dtype, producer):
    what = f"[torch.{legacy_tensor_type(dtype)} [{', '.join(map(str, shape))}]]"
    if producer:
        what += f", which is output 0 of {re.sub(r'Backward[0-9]+$', '', producer)},"
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {now}; expected version {expected} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


class AccumulateGrad:
    """The sink node of a leaf that requires grad: adds incoming gradients into `.grad`."""

    __slots__ = ("variable", "_seq", "__weakref__")
    next_functions = _edges = ()

    def __init__(self, variable):
        self.variable = variable
        self._seq = float("inf")  # runs as soon as it is ready, as in PyTorch

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


NODE_CLASSES: dict[str, type] = {}
for _op in OPS.values():
    if _op.grad_fn and _op.grad_fn not in NODE_CLASSES:
        NODE_CLASSES[_op.grad_fn] = type(_op.grad_fn, (Node,), {"__slots__": ()})


def accumulator(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad, shared while alive (held weakly by the tensor, as in torch)."""
    ref = tensor._acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._acc = weakref.ref(acc)
    return acc


def run_backward(root, grad, retain_graph: bool, capture=None):
    """Run the graph below `root` in PyTorch's order: among ready nodes the newest runs first, and an
    AccumulateGrad runs the moment its last gradient arrives. With `capture` (node -> None), the
    gradients reaching those nodes are returned in it instead of accumulated into `.grad`."""
    rec = STATE.recorder
    start = root._grad_fn if root._grad_fn is not None else accumulator(root)
    # Count each node's incoming edges so it runs only once all its gradients have arrived.
    deps = {}
    stack = [start]
    while stack:
        for nxt, _ in stack.pop()._edges:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    stack.append(nxt)
    grads_in = {start: grad}
    parts_in = {} if rec is not None else None  # the separate gradients of fan-in nodes, to show their sum
    ready = [(-start._seq, 0, start)]
    order = 0
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = False  # backward itself builds no graph (no create_graph support)
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            g = grads_in.pop(node, None)
            if g is None:
                continue
            if capture is not None and node in capture:
                capture[node] = g
                if type(node) is AccumulateGrad:
                    continue
            if type(node) is AccumulateGrad:
                if capture is None:
                    _accumulate(node.variable, g, rec)
                continue
            if node._retain is not None:
                t = node._retain()
                if t is not None:
                    _retain(t, g, rec)
            grads = node.apply(g)
            if rec is not None:
                rec.on_backward_step(node, g, parts_in.pop(node, None), grads)
            if not retain_graph:
                node.release()
            for (nxt, _), gi in zip(node._edges, grads):
                if nxt is None:
                    continue
                if gi is not None:
                    if nxt in grads_in:
                        if rec is not None:  # a second gradient arrives: keep the parts the sum is made of
                            parts = parts_in.get(nxt)
                            if parts is None:
                                parts_in[nxt] = [grads_in[nxt], gi]
                            else:
                                parts.append(gi)
                        grads_in[nxt] = grads_in[nxt] + gi
                    else:
                        grads_in[nxt] = gi
                n = deps[nxt] - 1
                deps[nxt] = n
                if n == 0:
                    if type(nxt) is AccumulateGrad and capture is None:
                        if nxt in grads_in:
                            _accumulate(nxt.variable, grads_in.pop(nxt), rec)
                    else:
                        order += 1
                        heapq.heappush(ready, (-nxt._seq, order, nxt))
    finally:
        STATE.grad_enabled = prev_mode


_TENSOR = []


def _tensor_cls():
    """engine.tensor imports this module, so the class is looked up once, on first use."""
    if not _TENSOR:
        from .tensor import Tensor  # a parameter's .grad is a plain Tensor, as in torch

        _TENSOR.append(Tensor)
    return _TENSOR[0]


def _accumulate(t, g, rec):
    before = t._grad._data if t._grad is not None else None
    if before is None:
        # NOTE: copy arrays, since one upstream array may feed several leaves (add passes g through).
        if type(g) is not np.ndarray and g.dtype == t._data.dtype:
            t._grad = _tensor_cls()._wrap(g)  # numpy scalars are immutable: nothing to copy
        else:
            t._grad = _tensor_cls()._wrap(np.array(g, dtype=t._data.dtype, copy=True))
    else:
        # In place on the same grad tensor, so `g = x.grad` sees the sum as in torch.
        t._grad._data = np.asarray(before + g, dtype=t._data.dtype)
    if rec is not None:
        rec.on_accumulate(t, g, before)


def _retain(t, g, rec):
    t._grad = _tensor_cls()._wrap(np.array(g, dtype=t._data.dtype, copy=True))
    if rec is not None:
        rec.on_retain_grad(t)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """torch.autograd.grad: gradients of `outputs` with respect to `inputs`, leaving `.grad` untouched."""
    from .tensor import Tensor

    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported by flowgrad")
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    out = outputs if isinstance(outputs, Tensor) else outputs[0]
    if not out._requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if grad_outputs is None:
        if out._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        g = np.ones(out._data.shape, dtype=out._data.dtype)
    else:
        go = grad_outputs if isinstance(grad_outputs, Tensor) else grad_outputs[0]
        g = np.asarray(go._data)
    nodes = []
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        nodes.append(t._grad_fn if t._grad_fn is not None else accumulator(t))
    capture = {n: None for n in nodes}
    run_backward(out, g, bool(retain_graph), capture=capture)
    result = []
    for t, n in zip(inputs, nodes):
        if capture[n] is None and not allow_unused:
            raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
        result.append(None if capture[n] is None else Tensor._wrap(np.array(capture[n], dtype=t._data.dtype)))
    return tuple(result)


def backward(tensors, grad_tensors=None, retain_graph=None):
    """torch.autograd.backward(t) is t.backward()."""
    t = tensors if not isinstance(tensors, (list, tuple)) else tensors[0]
    g = grad_tensors if not isinstance(grad_tensors, (list, tuple)) else grad_tensors[0]
    t.backward(g, retain_graph=retain_graph)
