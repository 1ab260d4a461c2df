"""Autograd: grad mode, graph nodes (`grad_fn`), and the backward engine.

Nodes hold their inputs' nodes and the arrays backward needs, never their output tensor, so a graph
is a tree of plain references that reference counting frees the moment the last tensor goes: no
cycles for the garbage collector to chase (micrograd spends ~94% of a step there).
"""
from __future__ import annotations

import bisect
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
# PyTorch's version counters, kept per numpy array: id -> (weakref to the array, its write log). A log is
# [writes dropped from it, sequence numbers of the later in-place writes...] (sorted). Forward pays nothing;
# backward looks only when a write happened after a node was made.
_WRITES: dict = {}
# NOTE: a training loop writes each parameter once a step, forever: past this many, a log keeps its newer half
# and counts the rest (memory and lookups stay bounded; only a node older than the kept half would get an
# approximate "expected version" in its error, never a missed or a false one).
WRITE_LOG_KEEP = 1024


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
            base = arr.base
            if base is not None:
                _log_write(base, seq)


def _forget(key):
    """A callback that drops an array's write log when the array dies (so its id can be reused)."""
    return lambda _: _WRITES.pop(key, None)


def _log_write(a, seq):
    key = id(a)
    entry = _WRITES.get(key)
    if entry is None or entry[0]() is not a:
        entry = _WRITES[key] = (weakref.ref(a, _forget(key)), [0])
    log = entry[1]
    log.append(seq)
    if len(log) > WRITE_LOG_KEEP:
        _trim(log)


def _trim(log):
    """Keep the newer half of a write log, counting the older half as dropped."""
    half = (len(log) - 1) // 2
    log[0] += half
    del log[1:1 + half]


def carry_writes(old, new):
    """`t.data = x` keeps t's version counter in PyTorch: the new array inherits the old one's writes."""
    entry = _WRITES.get(id(old))
    if entry is not None and entry[0]() is old and type(new) is np.ndarray:
        _WRITES[id(new)] = (weakref.ref(new, _forget(id(new))), list(entry[1]))


def _versions(arr, since):
    """(version now, version when a node made at `since` saved it): in-place writes to the array, or to
    the array it is a view of (a weight written by the optimizer makes its saved `W.t()` stale)."""
    log = None
    for a in (arr, arr.base):
        entry = _WRITES.get(id(a)) if a is not None else None
        if entry is not None and entry[0]() is a:
            log = entry[1]  # note_write records a view's writes on its base too: the base's list is complete
    if log is None:
        return 0, 0
    return log[0] + len(log) - 1, log[0] + bisect.bisect_left(log, since, 1) - 1


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

    def __call__(self, fn):
        STATE.grad_enabled = self._prev  # as a decorator it changes nothing until the function runs, as in torch
        mode = self._target

        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self._target})"


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


class Node:
    """A `grad_fn`: one op application. Subclassed once per PyTorch name so type names match torch."""

    __slots__ = ("op", "_edges", "_saved", "_params", "_shapes", "_seq", "_freed", "_retain", "_rid", "_hooks",
                 "__weakref__")
    _multi = False  # one output: its gradient travels as one array (a custom Function's node may have several)

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
        self._hooks = None  # {handle id: (output number, hook, weakref to the tensor)}: its register_hook hooks

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
        op = self.op
        if self._freed and op.saves:
            raise RuntimeError(FREED_MESSAGE)
        if STATE.last_write > self._seq and op.needs:
            self._check_versions()
        saved = self._saved
        ans, arrays, params = saved[0], saved[1:], self._params
        out = []
        if op.variadic:
            vjp = op.vjps[0]
            arrays = list(arrays)
            for i, (fn, _) in enumerate(self._edges):
                out.append(None if fn is None else unbroadcast(vjp(g, ans, i, arrays, *params), self._shapes[i]))
            return out
        append = out.append
        for (fn, _), vjp, shape in zip(self._edges, op.vjps, self._shapes):
            if fn is None or vjp is None:
                append(None)
            else:
                gi = vjp(g, ans, *arrays, *params)
                append(gi if gi.shape == shape else unbroadcast(gi, shape))
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
    _multi = False
    _hooks = None  # a leaf's hooks live in LEAF_HOOKS (the tensor holds its AccumulateGrad only weakly)

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


def edge_of(t):
    """The graph edge to a tensor that requires grad: its node and which of the node's outputs it is."""
    fn = t._grad_fn
    if fn is None:
        return (accumulator(t), 0)
    return (fn, fn.output_nr(t) if fn._multi else 0)


def run_backward(root, grad, retain_graph: bool, capture=None, more_roots=(), create_graph=False):
    """Run the graph below `root` in PyTorch's order: among ready nodes the newest runs first, and an
    AccumulateGrad runs the moment its last gradient arrives. With `capture` (node -> None), the
    gradients reaching those nodes are returned in it instead of accumulated into `.grad`.
    `more_roots`: further (tensor, gradient) pairs run in the same pass (autograd.grad of several outputs).
    With `create_graph`, gradients are Tensors and every VJP runs as recorded ops (engine/graphed.py)."""
    start = root._grad_fn
    if (capture is None and not create_graph and not more_roots and STATE.recorder is None and start is not None
            and not start._multi):
        if run_plain_backward(start, grad, retain_graph):  # a training step's backward: none of the features
            return
    if create_graph:
        from .graphed import graphed_backward_hooks

        apply_node, accumulate, retain, rec_value = graphed_backward_hooks()
    else:
        apply_node, accumulate, retain, rec_value = None, _accumulate, _retain, None
    rec = STATE.recorder
    # Count each node's incoming edges so it runs only once all its gradients have arrived.
    deps = {}
    grads_in = {}
    starts = []
    for t, g0 in ((root, grad), *more_roots):
        start = t._grad_fn if t._grad_fn is not None else accumulator(t)
        if start not in grads_in:
            starts.append(start)
        _add_root_grad(grads_in, start, t, g0)
    stack = list(starts)
    while stack:
        for nxt, _ in stack.pop()._edges:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    if nxt not in grads_in:  # a root is walked once, from the start
                        stack.append(nxt)
    parts_in = {} if rec is not None else None  # the separate gradients of fan-in nodes, to show their sum
    # a root another root reaches waits for that gradient too (autograd.grad([y.sum(), y], ...))
    ready = [(-s._seq, 0, s) for s in starts if s not in deps]
    heapq.heapify(ready)
    order = 0
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = create_graph  # backward builds a graph only for higher-order gradients
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            g = grads_in.pop(node, None)
            if g is None:
                continue
            if node._hooks is not None:  # the output tensor's register_hook hooks see (and may replace) g first
                g = run_tensor_hooks(node, g)
            if capture is not None and node in capture:
                if type(node) is AccumulateGrad:
                    capture[node] = leaf_pre_hooks(node.variable, g) if LEAF_HOOKS else g
                    continue
                capture[node] = g
            if type(node) is AccumulateGrad:
                if capture is None:
                    accumulate(node.variable, g, rec)
                continue
            if node._retain is not None:
                t = node._retain()
                if t is not None:
                    retain(t, g, rec)
            grads = node.apply(g) if apply_node is None else apply_node(node, g)
            if rec is not None:
                if rec_value is None:
                    rec.on_backward_step(node, g, parts_in.pop(node, None), grads)
                else:
                    rec_value(rec, node, g, parts_in.pop(node, None), grads)
            if not retain_graph:
                node.release()
            for (nxt, slot), gi in zip(node._edges, grads):
                if nxt is None:
                    continue
                if gi is not None:
                    if nxt._multi:  # a custom Function with several outputs: one gradient per output
                        _add_output_grad(grads_in, nxt, slot, gi)
                    elif nxt in grads_in:
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
                            accumulate(nxt.variable, grads_in.pop(nxt), rec)
                    else:
                        order += 1
                        heapq.heappush(ready, (-nxt._seq, order, nxt))
    finally:
        STATE.grad_enabled = prev_mode


def _add_root_grad(grads_in, node, t, g):
    if node._multi:
        _add_output_grad(grads_in, node, node.output_nr(t), g)
    elif node in grads_in:
        grads_in[node] = grads_in[node] + g
    else:
        grads_in[node] = g


def _add_output_grad(grads_in, node, slot, g):
    gs = grads_in.get(node)
    if gs is None:
        gs = grads_in[node] = [None] * node.n_outputs
    gs[slot] = g if gs[slot] is None else gs[slot] + g


# ----- hooks (Tensor.register_hook, register_post_accumulate_grad_hook) -----
_hook_ids = itertools.count()
# A leaf's hooks, kept beside it as _WRITES is (a tensor has no slot for them, and its AccumulateGrad is held
# weakly): id(tensor) -> (weakref to it, {handle id: hook} run before accumulation, {handle id: hook} after).
LEAF_HOOKS: dict = {}


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: `remove()` takes its hook out (twice is harmless, as in torch)."""

    __slots__ = ("_table", "id", "__weakref__")

    def __init__(self, table):
        self._table = table
        self.id = next(_hook_ids)

    def remove(self):
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __repr__(self):
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


def leaf_hook_tables(t):
    """(pre, post) hook tables of a leaf, made on first use."""
    key = id(t)
    entry = LEAF_HOOKS.get(key)
    if entry is None or entry[0]() is not t:
        entry = LEAF_HOOKS[key] = (weakref.ref(t, _forget_hooks(key)), {}, {})
    return entry[1], entry[2]


def _forget_hooks(key):
    return lambda _: LEAF_HOOKS.pop(key, None)


def _leaf_entry(t):
    entry = LEAF_HOOKS.get(id(t))
    return entry if entry is not None and entry[0]() is t else None


def leaf_pre_hooks(t, g):
    entry = _leaf_entry(t)
    if entry is None or not entry[1]:
        return g
    for hook in list(entry[1].values()):
        g = call_tensor_hook(hook, g, t._data.dtype, t)
    return g


def run_tensor_hooks(node, g):
    """An output's hooks in registration order, each seeing the gradient the previous one left; with
    several outputs (a custom Function), each hook sees its own output's gradient."""
    for out_nr, hook, owner_ref in list(node._hooks.values()):
        owner = owner_ref()
        if node._multi:
            if g[out_nr] is not None:
                g[out_nr] = call_tensor_hook(hook, g[out_nr], node.output_dtype(out_nr), owner)
        else:
            g = call_tensor_hook(hook, g, g.dtype, owner)
    return g


def call_tensor_hook(hook, g, dtype, owner=None):
    """Call one tensor hook on gradient `g`: its own copy (a hook may change it in place, and that change
    counts as in torch), the result checked as torch checks it, the call shown on the trace."""
    Tensor = _tensor_cls()
    if isinstance(g, Tensor):  # create_graph: the hook sees (and may replace) the gradient tensor of the graph
        with user_code():
            r = hook(g)
        if r is not None and not isinstance(r, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
        return g if r is None else r
    arg = Tensor._wrap(np.array(g, copy=True))
    if STATE.limits is not None:  # a hook may keep what it is given: it counts against the run's live elements
        STATE.limits.track(arg)
    rec = STATE.recorder
    with user_code():
        r = hook(arg)
    if r is None:
        new = arg._data
    else:
        if not isinstance(r, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
        name = callable_name(hook)
        if r._data.shape != np.shape(g):
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        if r._data.dtype != dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was torch.{legacy_tensor_type(dtype)} "
                               f"got torch.{legacy_tensor_type(r._data.dtype)})")
        new = r._data
    if rec is not None:
        rec.on_hook("tensor", hook, owner, g, None if r is None and np.array_equal(new, g) else new)
    return new


def callable_name(fn) -> str:
    """The name torch quotes for a hook: a function's __name__ (a sandbox function's `name`)."""
    for _ in range(3):  # through the sandbox's wrappers (a Builtin around a partial around the user's function)
        name = getattr(fn, "__name__", None)
        if isinstance(name, str):
            return name
        name = getattr(fn, "name", None)
        if isinstance(name, str):
            return name
        fn = getattr(fn, "fn", None) or getattr(fn, "func", None) or getattr(fn, "__wrapped__", None)
        if fn is None:
            break
    return "hook"


def source_lines(fn):
    """[first, last] source line of a program's function (the sandbox's functions say), else None."""
    for _ in range(3):
        lines = getattr(fn, "source_lines", None)
        if lines is not None:
            return list(lines)
        fn = getattr(fn, "fn", None) or getattr(fn, "func", None) or getattr(fn, "__wrapped__", None)
        if fn is None:
            break
    return None


class user_code:  # noqa: N801
    """Program code the engine calls (a hook, a custom Function's forward/backward): its own ops are not
    recorded, so the page draws the hook as one event and a custom Function as one node."""

    __slots__ = ("_rec",)

    def __enter__(self):
        self._rec = STATE.recorder
        STATE.recorder = None
        return self

    def __exit__(self, *exc):
        STATE.recorder = self._rec
        return False


_TENSOR = []


def _tensor_cls():
    """engine.tensor imports this module, so the class is looked up once, on first use."""
    if not _TENSOR:
        from .tensor import Tensor  # a parameter's .grad is a plain Tensor, as in torch

        _TENSOR.append(Tensor)
    return _TENSOR[0]


def _accumulate(t, g, rec, pre_hooks=True):
    entry = None
    if LEAF_HOOKS:
        entry = _leaf_entry(t)
        if entry is not None and entry[1] and pre_hooks:
            g = leaf_pre_hooks(t, g)
    grad = t._grad
    before = grad._data if grad is not None else None
    if before is None:
        # NOTE: copy arrays, since one upstream array may feed several leaves (add passes g through).
        if type(g) is np.ndarray:
            t._grad = _tensor_cls()._wrap(g.astype(t._data.dtype))  # a copy, layout kept
        elif g.dtype == t._data.dtype:
            t._grad = _tensor_cls()._wrap(g)  # numpy scalars are immutable: nothing to copy
        else:
            t._grad = _tensor_cls()._wrap(np.array(g, dtype=t._data.dtype, copy=True))
    else:
        # In place on the same grad tensor, so `g = x.grad` sees the sum as in torch.
        t._grad._data = np.asarray(before + g, dtype=t._data.dtype)
    if rec is not None:
        rec.on_accumulate(t, g, before)
    if entry is not None and entry[2]:
        for hook in list(entry[2].values()):
            with user_code():
                hook(t)
            if rec is not None:
                rec.on_hook("post_accumulate", hook, t, None, None)


def _retain(t, g, rec):
    t._grad = _tensor_cls()._wrap(np.array(g, dtype=t._data.dtype, copy=True))
    if rec is not None:
        rec.on_retain_grad(t)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: gradients of `outputs` with respect to `inputs`, leaving `.grad` untouched."""
    from .tensor import Size, Tensor

    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by flowgrad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    allow_unused = bool(allow_unused) or bool(materialize_grads)
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    if grad_outputs is None:
        gos = [None] * len(outs)
    else:
        gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    if len(gos) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output, but got {len(gos)} grad_outputs and "
                           f"{len(outs)} outputs")
    roots = []
    for i, (out, go) in enumerate(zip(outs, gos)):
        if not isinstance(out, Tensor):
            raise TypeError(f"grad(): outputs must be Tensors, but got {type(out).__name__} at index {i}")
        g0 = root_gradient(out, go, i, Size)
        if create_graph:  # the backward pass is itself a graph: its gradients are Tensors
            g0 = go if isinstance(go, Tensor) else Tensor._wrap(np.asarray(g0))
        roots.append((out, g0))
    nodes = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, but got {type(t).__name__} at index {i}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        nodes.append(t._grad_fn if t._grad_fn is not None else accumulator(t))
    capture = {n: None for n in nodes}
    retain = create_graph if retain_graph is None else retain_graph  # PyTorch's default
    run_backward(roots[0][0], roots[0][1], bool(retain), capture=capture, more_roots=roots[1:],
                 create_graph=bool(create_graph))
    result = []
    for i, (t, n) in enumerate(zip(inputs, nodes)):
        g = capture[n]
        if g is not None and n._multi:
            g = g[n.output_nr(t)]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(Tensor._wrap(np.zeros_like(t._data)) if materialize_grads else None)
        elif isinstance(g, Tensor):  # create_graph: the gradient is a graph's output
            result.append(g)
        else:
            result.append(Tensor._wrap(np.array(g, dtype=t._data.dtype)))
    return tuple(result)


def root_gradient(out, gradient, index, Size):
    """The gradient a backward starts from: ones for a one-element output, else the given one, checked as torch does."""
    Tensor = _tensor_cls()
    if not out._requires_grad:
        raise RuntimeError(f"element {index} of tensors does not require grad and does not have a grad_fn")
    data = out._data
    if gradient is None:
        if data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return data.dtype.type(1) if data.ndim == 0 else np.ones(data.shape, dtype=data.dtype)
    g = gradient._data if isinstance(gradient, Tensor) else np.asarray(gradient, dtype=data.dtype)
    if g.shape != data.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{index}] has a shape of {Size(g.shape)} and "
                           f"output[{index}] has a shape of {Size(data.shape)}.")
    return g


def backward_into(root, g, retain, inputs, create_graph=False):
    """`t.backward(inputs=[...])`: gradients go into those tensors' .grad only (a non-leaf's too, as in torch)."""
    Tensor = _tensor_cls()
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    nodes = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"backward(): inputs must be Tensors, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        nodes.append(t._grad_fn if t._grad_fn is not None else accumulator(t))
    capture = {n: None for n in nodes}
    run_backward(root, g, retain, capture=capture, create_graph=create_graph)
    rec = STATE.recorder
    if create_graph:
        from .graphed import graphed_backward_hooks

        accumulate = graphed_backward_hooks()[1]
    for t, n in zip(inputs, nodes):
        got = capture[n]
        if got is not None and n._multi:
            got = got[n.output_nr(t)]
        if got is None:
            continue
        if create_graph:  # .grad stays a graph (CopyBackwards, then out-of-place sums), as torch's
            accumulate(t, got, rec)
        else:
            _accumulate(t, got, rec, pre_hooks=False)  # the capture already ran the leaf's hooks


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward(t) is t.backward()."""
    t = tensors if not isinstance(tensors, (list, tuple)) else tensors[0]
    g = grad_tensors if not isinstance(grad_tensors, (list, tuple)) else grad_tensors[0]
    t.backward(g, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


# torch.autograd.Function lives in engine/function.py, which imports this module: bound here, at the end
from . import function  # noqa: E402, F401  (torch.autograd.function.once_differentiable)
from .backward_plain import run_plain_backward  # noqa: E402  (it imports this module's helpers)
from .function import Function, FunctionCtx  # noqa: E402, F401
