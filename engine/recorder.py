"""The recorder: captures the graph, every forward value and every backward step as plain dicts.

Active only inside `with Recorder(value_limit=…, max_events=…) as rec:`; when none is active the
engine pays one `is None` check per op. `rec.events` are JSON-ready (see docs/trace.md; the kinds
are defined in engine/trace_events.py): non-finite numbers become "nan"/"inf"/"-inf", and tensors
above `value_limit` elements appear as summaries (shape, min, max, mean, first 16 values). Capture
stays cheap by holding numpy snapshots of values up to `copy_limit` elements (4096) and encoding
them only when `events` is read; larger values are summarised at once and never copied whole.

Extending it (the runner ships events as they come): subclass and override `emit`, the one place
every captured event passes (call `super().emit`); `captured` holds the events as captured (an op as a flat
tuple, engine/trace_export.py `OP_*`: `split_event` gives its dicts) and `export_event` encodes one of them (or
a part of one) as `events` would. `n_events` counts the
events kept over the run (`pass_events` those of the current pass), so a subclass may ship `captured` and
empty it as it goes.

Budgets (settings, see docs/trace.md §4): at most `max_events` events per pass (from the end of one backward()
through the next, as `max_graph_nodes` counts: a long loop never stops on them; one pass past them stops the
run with `LimitExceeded` on its line); names, reprs and messages within `max_string_chars`, module and parameter
paths within `max_path_chars` (`text`, `path`: cut with a visible `…[+N chars]`).
"""
from __future__ import annotations

import itertools
import math
import weakref

import numpy as np

from . import registry
from .autograd import STATE, AccumulateGrad, callable_name, source_lines
from .limits import LimitExceeded
from .ops import OPS
from .tensor_core import Tensor
from .trace_events import (
    ACCUMULATE,
    BACKWARD_BEGIN,
    BACKWARD_END,
    BACKWARD_ERROR,
    BACKWARD_STEP,
    DETACH,
    GRAD_INPLACE,
    GRAD_MODE,
    HOOK,
    INPLACE,
    MARK_RETAIN_GRAD,
    MODULE,
    MODULE_NAMES,
    NAME,
    OP,
    OPTIM_STEP,
    REQUIRES_GRAD,
    RETAIN_GRAD,
    TENSOR,
    ZERO_GRAD,
    clip_text,
    json_number,
)
from .trace_export import dtype_name, encode_value, export_event, export_values, split_event, summarize


def _param(p):
    """A display form of an op parameter (exponent, dims, slice...), JSON-ready."""
    if p is None or isinstance(p, (bool, int, str)):
        return p
    if isinstance(p, (float, np.floating)):
        return json_number(float(p))
    if isinstance(p, np.integer):
        return int(p)
    if isinstance(p, slice):
        parts = [p.start, p.stop] + ([p.step] if p.step not in (None, 1) else [])
        return ":".join("" if v is None else str(v) for v in parts)
    if isinstance(p, (tuple, list)):
        return [_param(v) for v in p]
    if isinstance(p, np.dtype):
        return str(p)
    return type(p).__name__


_PLAIN_PARAMS = frozenset({type(None), bool, int, str})  # op parameters shown as they are


def _params(params) -> list:
    """`[_param(p) for p in params]`, calling `_param` only for what needs converting (most are ints or None)."""
    out = list(params)
    for i, p in enumerate(out):
        if type(p) not in _PLAIN_PARAMS:
            out[i] = _param(p)
    return out


def _joined(node) -> str:
    """The dotted path of a path node (parent node, own name, id)."""
    parts = []
    while node is not None:
        parts.append(node[1])
        node = node[0]
    return ".".join(reversed(parts))


# the per-parameter state an `optim_step` event carries: PyTorch's names for it (torch.optim)
OPTIM_STATE_NAMES = frozenset({"step", "momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "square_avg",
                               "grad_avg", "sum", "acc_delta", "exp_inf", "mu_product"})


def _numeric(x) -> bool:
    """A Python number an op took (not an array, a list of objects, None)."""
    return isinstance(x, (int, float, bool, np.number))


class Recorder:
    """The limits come from the run's settings (app/core/config.py `Settings`): value_limit, max_events,
    max_string_chars (each name, repr, message; None: unbounded), max_path_chars (each module or
    parameter path such as `model.layer1.weight`). copy_limit only trades capture speed for memory;
    it changes no output while it is >= value_limit."""

    def __init__(self, *, value_limit: int, max_events: int, copy_limit: int = 4096,
                 max_string_chars: int | None = None, max_path_chars: int | None = None):
        self.value_limit = value_limit  # above this many elements a value is exported as a summary
        self.copy_limit = copy_limit  # above this many, the summary is taken at once instead of a snapshot copy
        self.max_events = max_events
        self.max_string_chars = max_string_chars
        self.max_path_chars = max_path_chars
        self.captured: list[dict] = []  # events as captured: small arrays held as numpy copies until exported
        self.n_events = 0  # events kept over the run (a subclass may ship and drop `captured` as it goes)
        self.pass_events = 0  # ... in the current pass: what max_events bounds
        self._exported = 0
        self._encoded: list[dict] = []
        self._path_of: dict[str, str] = {}  # module / parameter id -> the path a module_names event gave it
        self.line = None  # the user's current line, set by the interpreter
        self._counters = {p: itertools.count(1) for p in "tnmb"}
        self._tensor_ids = self._counters["t"]
        self._node_ids = self._counters["n"]
        self._module = None  # innermost module running now (id), or None
        self._modules = {}  # id(module) -> (module, rid)
        self._module_stack: list[str] = []
        self._step_scopes: dict = {}  # (parent module id, label) -> the id of a recurrent layer's time-step scope
        self._backward = None
        self._grad_snaps = {}
        # id(grad tensor) -> (weak reference to it, owner id): in-place edits of .grad go to the owner. Weak: a
        # replaced .grad (`w.grad = None`, zero_grad(set_to_none=True)) is freed, and its entry goes with it
        self._grad_owner: dict[int, tuple] = {}
        self._prev = None
        self._epoch = object()  # ids stamped on tensors by another recorder are not ours
        # (id, weak reference to its tensor or graph node, or None: nothing refers to it after its event) for every
        # tensor and op recorded: None unless a subclass tracks which ids the program can still reach (`_ref`)
        self._born: list | None = None
        self._aliases: dict[str, list] = {}  # id -> references to other tensors stamped with it (`x.data`)

    # ----- lifecycle -----
    def __enter__(self):
        self._prev = STATE.recorder
        STATE.recorder = self
        return self

    def __exit__(self, *exc):
        STATE.recorder = self._prev
        return False

    def _new_id(self, prefix):
        return prefix + str(next(self._counters[prefix]))

    def emit(self, event: dict) -> None:
        """Keep one captured event (past max_events in one pass: `too_many_events`). Every event passes here: the
        extension point for a subclass that ships, counts or splits events (it calls `super().emit(event)`)."""
        if self.pass_events >= self.max_events:
            self.too_many_events()
        self.pass_events += 1
        self.n_events += 1
        self.captured.append(event)

    def too_many_events(self):
        """One pass recorded max_events events: the run stops there, on the line that went past them."""
        raise LimitExceeded(f"this pass recorded more than {self.max_events:,} events (since the last backward()); "
                            f"the limit is max_events = {self.max_events:,}")

    def text(self, s) -> str:
        """A string for an event (name, repr, message), within max_string_chars."""
        return clip_text(s if type(s) is str else str(s), self.max_string_chars)

    def path(self, s: str) -> str:
        """A module or parameter path for an event, within max_path_chars (cut in the middle)."""
        return clip_text(s, self.max_path_chars, keep_end=True)

    @property
    def events(self) -> list[dict]:
        """All events so far, JSON-ready. Encoding is deferred to here so capture stays cheap."""
        raw, limit = self.captured, self.value_limit
        if self._exported < len(raw):
            self._encoded.extend(export_values(piece, limit) for e in raw[self._exported:] for piece in split_event(e))
            self._exported = len(raw)
        return self._encoded

    def value(self, arr):
        """A snapshot of a value: a copy of a small array (encoded later), a summary of a large one."""
        if type(arr) is np.ndarray:
            return arr.copy() if arr.size <= self.copy_limit else summarize(arr)
        return encode_value(arr, self.value_limit)

    def grad_value(self, arr):
        """Snapshot of a gradient array during backward: the same array object (a contribution that is
        then a node's upstream or a leaf's incoming) is copied once. The cache holds the array itself,
        so its id cannot be reused by another array before backward ends."""
        entry = self._grad_snaps.get(id(arr))
        if entry is not None and entry[0] is arr:
            return entry[1]
        snap = self.value(arr)
        self._grad_snaps[id(arr)] = (arr, snap)
        return snap

    # ----- tensors -----
    def tid(self, t, origin=None, op=None):
        """The tensor's id, emitting its `tensor` event the first time it is seen."""
        stamp = t._rid
        if stamp is not None and stamp[0] is self._epoch:
            return stamp[1]
        rid, event = self.new_tensor(t, origin, op)
        self.emit(event)
        return rid

    def new_tensor(self, t, origin=None, op=None) -> tuple[str, dict]:
        """A tensor seen for the first time: its new id (stamped on it) and its `tensor` event, not emitted."""
        stamp = t._rid
        # (None, line, made by an op): made or named while the recorder stood aside (app/runner/quiet.py)
        unrecorded = stamp is not None and stamp[0] is None
        if origin is None:
            origin = "op" if unrecorded and stamp[2] or t._grad_fn is not None else "leaf"
        rid = "t" + str(next(self._tensor_ids))
        t._rid = (self._epoch, rid)
        if self._born is not None:
            self._born.append((rid, _ref(t)))
        data = t._data
        return rid, {"kind": TENSOR, "id": rid, "shape": list(data.shape), "dtype": dtype_name(data.dtype),
                     "requires_grad": t._requires_grad, "is_leaf": t._grad_fn is None, "value": self.value(data),
                     "origin": origin, "op": op, "module": self._module, "line": stamp[1] if unrecorded else self.line}

    def _const(self, x):
        rid = self._new_id("t")
        if self._born is not None:
            self._born.append((rid, None))  # a number: only the op that took it refers to it
        self.emit({"kind": TENSOR, "id": rid, "shape": [], "dtype": type(x).__name__, "requires_grad": False,
                    "is_leaf": True, "value": json_number(x if isinstance(x, (int, float, bool)) else float(x)),
                    "origin": "const", "op": None, "module": self._module, "line": self.line})
        return rid

    def name_tensor(self, t, name):
        """The program bound `name` to a tensor, or to a module (which names its submodules and parameters)."""
        if STATE.recorder is not self:  # inside a hook or custom Function the engine runs: drawn as one event
            self.unrecorded_name(t, name)
            return
        if hasattr(t, "named_modules"):
            self._name_module_tree(t, name)
            return
        self.emit({"kind": NAME, "tensor": self.tid(t), "name": self.text(name)})

    def _name_module_tree(self, module, var):
        """Paths for the modules and parameters under a module bound to `var`. During the run the
        first path given to a module or parameter stays (binding a big model again and again adds
        nothing, and builds no path: a walk costs one step per module and parameter); `name_modules`
        resolves the final ones at the end. The order is `named_modules` / `named_parameters`'."""
        names, params = {}, {}
        known = self._path_of
        walked = []  # (module, path node): a node is (parent node, own name, module id)
        memo: set[int] = set()
        stack = [(module, None, var)]
        while stack:
            m, up, name = stack.pop()
            if m is None or id(m) in memo:
                continue
            memo.add(id(m))
            node = (up, name, self._mid(m, None if up is None else up[2]))
            walked.append((m, node))
            if node[2] not in known:
                known[node[2]] = names[node[2]] = self.path(_joined(node))
            stack.extend(reversed([(c, node, n) for n, c in m._modules.items()]))
        seen: set[int] = set()
        for m, node in walked:
            for pname, p in m._parameters.items():
                if p is None or p._uninitialized or id(p) in seen:  # (a lazy layer's: named once it has a shape)
                    continue
                seen.add(id(p))
                rid = self.tid(p)
                if rid not in known:
                    known[rid] = params[rid] = self.path(_joined(node) + "." + pname)
        for rid, path in self._step_names(names).items():  # steps that ran before their layer got a name
            if rid not in known:
                known[rid] = names[rid] = path
        if names or params:
            self.emit({"kind": MODULE_NAMES, "names": names, "parameters": params})

    def on_requires_grad(self, t):
        stamp = t._rid
        if stamp is not None and stamp[0] is self._epoch:
            self.emit({"kind": REQUIRES_GRAD, "tensor": stamp[1], "value": t._requires_grad})

    def on_grad_mode(self, enabled):
        self.emit({"kind": GRAD_MODE, "enabled": enabled, "line": self.line})

    # ----- forward -----
    def on_op_error(self, op, inputs, params, error):
        """An op whose forward raised (a shape mismatch): recorded as an op with no output and its error,
        so the page draws it red beside the inputs it got, their shapes, and the message."""
        ins, shapes = [], []
        for x in inputs:
            data = getattr(x, "_data", None)
            shapes.append(list(data.shape) if data is not None else [] if _numeric(x) else None)
            stamp = getattr(x, "_rid", False)
            if stamp is False:
                ins.append(self._const(x) if x is not None and _numeric(x) else None)
            elif stamp is not None and stamp[0] is self._epoch:
                ins.append(stamp[1])
            else:
                ins.append(self.tid(x))
        nid = self._new_id("n")
        if self._born is not None:
            self._born.append((nid, None))
        self.emit({"kind": OP, "id": nid, "op": op.name, "label": op.label, "grad_fn": None,
                   "inputs": ins, "output": None, "module": self._module, "line": self.line,
                   "grad_enabled": STATE.grad_enabled, "params": [_param(p) for p in params] if params else [],
                   "input_shapes": shapes,
                   "error": {"type": type(error).__name__, "message": clip_text(str(error), self.max_string_chars)}})

    def on_op(self, op, inputs, params, result):
        """The hot path: one op ran (engine/dispatch.py `apply`). Its node is stamped with (epoch, op id, input ids,
        output id), what its backward step is drawn with, so that nothing here outlives the graph. Captured as one
        flat tuple (`OpRecord`, engine/trace_export.py), not a dict: the dicts are built when it is exported."""
        epoch = self._epoch
        ins = []
        for x in inputs:
            stamp = getattr(x, "_rid", False)
            if stamp is False:
                ins.append(self._const(x) if x is not None else None)
            elif stamp is not None and stamp[0] is epoch:
                ins.append(stamp[1])
            else:
                ins.append(self.tid(x))
        nid = "n" + str(next(self._node_ids))
        node = result._grad_fn
        if node is not None and node.op is op:
            grad_fn = type(node).__name__
        else:
            node = grad_fn = None
        stamp = result._rid
        born = self._born
        if stamp is not None and stamp[0] is epoch:  # an output seen before (the op returned an input)
            out = stamp[1]
            record = (nid, op.name, op.label, ins, out, grad_fn, self._module, self.line, STATE.grad_enabled,
                      _params(params) if params else [])
            ref = None
        else:
            out = "t" + str(next(self._tensor_ids))
            result._rid = (epoch, out)
            data = result._data  # an array, or a numpy scalar some reductions return
            if type(data) is np.ndarray:
                value = data.copy() if data.size <= self.copy_limit else summarize(data)
            else:
                value = encode_value(data, self.value_limit)
            # a weak reference to the output while a subclass tracks which ids live (`_born`)
            ref = None if born is None else weakref.ref(result)
            record = (nid, op.name, op.label, ins, out, grad_fn, self._module, self.line, STATE.grad_enabled,
                      _params(params) if params else [], value, data.shape, data.dtype, result._requires_grad, ref)
        if node is not None:
            node._rid = (epoch, nid, ins, out)
        if born is not None:  # the op lives while its graph node does (a later backward walks it)
            # tensors and graph nodes take weak references (`__weakref__` in their slots)
            born.append((nid, None if node is None else weakref.ref(node)))
            if ref is not None:
                born.append((out, ref))
        self.emit(record)

    def on_function(self, op, fn_name, args, outputs, forward):
        """`Fn.apply(...)`: one op node named after the Function (its own ops are not recorded)."""
        ins = []
        for a in args:
            if isinstance(a, Tensor):
                ins.append(self.tid(a))
            elif isinstance(a, (int, float, bool, np.number)):
                ins.append(self._const(a))
            else:
                ins.append(None)
        nid = self._new_id("n")
        node = outputs[0]._grad_fn
        own = op is not None and node is not None and node.op is op
        outs = [self.tid(o, origin="op", op=nid) for o in outputs]
        if own:
            node._rid = (self._epoch, nid, ins, outs[0])
        if self._born is not None:
            self._born.append((nid, _ref(node) if own else None))

        self.emit({"kind": OP, "id": nid, "op": "autograd_function", "label": self.text(fn_name),
                   "grad_fn": self.text(type(node).__name__) if own else None, "inputs": ins, "output": outs[0],
                   "outputs": outs, "module": self._module, "line": self.line, "grad_enabled": STATE.grad_enabled,
                   "params": [], "lines": source_lines(forward)})

    def on_hook(self, where, hook, tensor, grad, new):
        """A program's hook ran: `where` says which kind, `grad` the gradient it saw, `new` what it replaced it
        with (None: unchanged)."""
        self.emit({"kind": HOOK, "id": self._backward if where in ("tensor", "post_accumulate", "module_backward")
                   else None, "where": where, "hook": self.text(callable_name(hook)),
                   "tensor": self.tid(tensor) if isinstance(tensor, Tensor) else None,
                   "grad": None if grad is None else self.grad_value(grad),
                   "replaced": None if new is None else self.value(np.asarray(new)),
                   "lines": source_lines(hook), "line": self.line})

    def on_detach(self, src, out):
        s = self.tid(src)
        o = self.tid(out, origin="detach")
        self.emit({"kind": DETACH, "source": s, "tensor": o, "line": self.line})

    def alias(self, out, src):
        """`x.data`: a view of the same storage, drawn as the same tensor."""
        self.tid(src)
        out._rid = src._rid
        self._alias(src._rid[1], out)

    def on_inplace(self, t, name):
        owner = self._grad_owner.get(id(t))
        if owner is not None and owner[0]() is t:
            # `w.grad.zero_()` / `w.grad += ...`: a change to w's .grad, shown on w
            if name == "zero_":
                self.emit({"kind": ZERO_GRAD, "tensors": [owner[1]], "set_to_none": False, "line": self.line})
            else:
                self.emit({"kind": GRAD_INPLACE, "tensor": owner[1], "op": name, "grad": self.value(t._data),
                            "line": self.line})
            return
        self.emit({"kind": INPLACE, "tensor": self.tid(t), "op": name, "value": self.value(t._data),
                    "grad_fn": type(t._grad_fn).__name__ if t._grad_fn is not None else None, "line": self.line})

    # ----- modules -----
    def _mid(self, m, parent=False):
        entry = self._modules.get(id(m))
        if entry is not None and entry[0] is m:
            return entry[1]
        if parent is False:
            parent = self._module_stack[-1] if self._module_stack else None
        rid = self._new_id("m")
        self._modules[id(m)] = (m, rid)
        extra = m.extra_repr() if hasattr(m, "extra_repr") else ""
        cls = self.text(type(m).__name__ if not hasattr(m, "_get_name") else m._get_name())
        self.emit({"kind": MODULE, "id": rid, "cls": cls, "repr": self.text(f"{cls}({extra})"), "parent": parent})
        return rid

    def enter_module(self, m):
        entry = self._modules.get(id(m))
        mid = entry[1] if entry is not None and entry[0] is m else self._mid(m)
        self._module_stack.append(mid)
        self._module = mid

    def exit_module(self, m):
        stack = self._module_stack
        if stack:
            stack.pop()
        self._module = stack[-1] if stack else None

    STEP_CLS = "time step"  # the `cls` of a step scope: the page titles its box "rnn.t=3 · time step"

    def enter_step(self, label: str):
        """One time step of a recurrent layer (nn.RNN / nn.GRU) as a child scope of the running module: a
        `module` event (cls STEP_CLS, repr the label) the first time, its path `<layer path>.<label>` once the
        layer has one; the same (layer, label) is the same scope on every call."""
        parent = self._module_stack[-1] if self._module_stack else None
        key = (parent, label)
        rid = self._step_scopes.get(key)
        if rid is None:
            rid = self._step_scopes[key] = self._new_id("m")
            self.emit({"kind": MODULE, "id": rid, "cls": self.STEP_CLS, "repr": self.text(label), "parent": parent})
            named = self._step_names({parent: self._path_of[parent]} if parent in self._path_of else {})
            if named:
                self._path_of.update(named)
                self.emit({"kind": MODULE_NAMES, "names": named, "parameters": {}})
        self._module_stack.append(rid)
        self._module = rid

    def exit_step(self):
        self.exit_module(None)

    def _step_names(self, parents: dict) -> dict:
        """Paths of the step scopes under the given {module id: path}."""
        return {rid: self.path(f"{parents[parent]}.{label}") for (parent, label), rid in self._step_scopes.items()
                if parent in parents}

    def name_modules(self, top_level: dict):
        """Resolve module ids to paths such as `model.layer1` from the program's top-level variables."""
        Module = registry.Module or ()  # () until engine.nn is loaded: then no program has made a module
        names = {}
        for var, obj in top_level.items():
            if isinstance(obj, Module):
                for path, m in obj.named_modules(prefix=var):
                    entry = self._modules.get(id(m))
                    if entry is not None and entry[0] is m and entry[1] not in names:
                        names[entry[1]] = self.path(path)
        params = {}
        for var, obj in top_level.items():
            if isinstance(obj, Module):
                for path, p in obj.named_parameters(prefix=var):
                    if p._rid is not None and p._rid[0] is self._epoch:
                        params[p._rid[1]] = self.path(path)
        names.update(self._step_names(names))
        self.emit({"kind": MODULE_NAMES, "names": names, "parameters": params})
        return names

    # ----- backward -----
    def on_backward_begin(self, root, g, retain):
        self._backward = self._new_id("b")
        self.emit({"kind": BACKWARD_BEGIN, "id": self._backward, "root": self.tid(root), "gradient": self.value(g),
                    "retain_graph": retain, "line": self.line})

    def stamp_saved(self, node, out, inputs):
        """create_graph: the tensors a node saved, rebuilt for its VJP to run on, are drawn as the tensors the
        op read and wrote (not as new constants)."""
        stamp = node._rid
        if stamp is None or stamp[0] is not self._epoch:
            return
        _, _, ins, out_id = stamp
        if out._rid is None:
            out._rid = (self._epoch, out_id)
            self._alias(out_id, out)
        for t, tid in zip(inputs, ins):
            if t is not None and t._rid is None and isinstance(tid, str):
                t._rid = (self._epoch, tid)
                self._alias(tid, t)

    def unrecorded_name(self, t, name) -> None:
        """The program bound `name` to a tensor or module while this recorder was not the one recording (inside code
        the engine runs as one event, ...): not drawn. A subclass that stops recording at times keeps it."""

    def unrecorded_node(self, node) -> None:
        """A backward walks a graph node this recorder has no op for (made while it was not recording, by code the
        engine runs as one event, ...): drawn without it. A subclass that stops recording at times says so."""

    def _alias(self, rid: str, t) -> None:
        """Another tensor object carries id ``rid``: the id stays reachable while any of them lives."""
        if self._born is not None:
            self._aliases.setdefault(rid, []).append(_ref(t))

    def on_backward_step(self, node, g, parts, grads):
        if node._multi:
            self._function_step(node, g, grads)
            return
        stamp = node._rid
        if stamp is not None and stamp[0] is self._epoch:
            _, nid, ins, out = stamp
        else:
            nid, ins, out = None, (None,) * len(grads), None
            self.unrecorded_node(node)
        op = node.op
        latex = op.latex
        variadic = op.variadic
        # a broadcasting op's gradients were summed back from its output's shape (never from a reduced loss's)
        out_shape = node._saved[0].shape if op.broadcasts and node._saved is not None else None
        grad_value = self.grad_value
        contributions = []
        for i, gi in enumerate(grads):
            if gi is not None:
                contributions.append({"input": ins[i] if i < len(ins) else None, "index": i, "grad": grad_value(gi),
                                      "local": latex[0 if variadic else i],
                                      "unbroadcast_from": list(out_shape) if out_shape is not None and gi.shape != out_shape
                                      and gi.ndim <= len(out_shape) else None})
        event = {"kind": BACKWARD_STEP, "id": self._backward, "node": nid, "grad_fn": type(node).__name__,
                 "output": out, "upstream": self.grad_value(g), "contributions": contributions}
        if parts is not None:  # fan-in: the gradients summed into `upstream`
            event["upstream_parts"] = [self.grad_value(p) for p in parts]
        self.emit(event)

    def _function_step(self, node, gs, grads):
        """A custom Function's backward ran: its upstream per output, the gradients it returned, its source lines."""
        stamp = node._rid
        if stamp is not None and stamp[0] is self._epoch:
            _, nid, ins, out = stamp
        else:
            nid, ins, out = None, (None,) * len(grads), None
            self.unrecorded_node(node)
        first = next((x for x in gs if x is not None), None)
        contributions = [{"input": ins[i] if i < len(ins) else None, "index": i, "grad": self.grad_value(gi),
                          "local": node.op.latex[i], "unbroadcast_from": None}
                         for i, gi in enumerate(grads) if gi is not None]
        self.emit({"kind": BACKWARD_STEP, "id": self._backward, "node": nid, "grad_fn": self.text(type(node).__name__),
                   "output": out, "upstream": None if first is None else self.grad_value(first),
                   "upstream_outputs": [None if x is None else self.grad_value(x) for x in gs],
                   "contributions": contributions, "lines": node.source_lines()})

    def _own_grad(self, t) -> str:
        """`t.grad` is t's (an in-place edit of it is shown on t); t's id."""
        rid = self.tid(t)
        grad, owners = t._grad, self._grad_owner
        key = id(grad)
        owners[key] = (weakref.ref(grad, lambda _, key=key: owners.pop(key, None)), rid)
        return rid

    def on_accumulate(self, t, g, before):
        self._own_grad(t)
        incoming = self.grad_value(g)
        after = incoming if before is None else self.value(t._grad._data)  # a first gradient is just what came in
        self.emit({"kind": ACCUMULATE, "id": self._backward, "tensor": self.tid(t), "incoming": incoming,
                    "before": None if before is None else self.value(before), "after": after})

    def on_retain_grad(self, t):
        self._own_grad(t)
        self.emit({"kind": RETAIN_GRAD, "id": self._backward, "tensor": self.tid(t), "grad": self.value(t._grad._data)})

    def on_mark_retain(self, t):
        self.emit({"kind": MARK_RETAIN_GRAD, "tensor": self.tid(t), "line": self.line})

    def on_backward_end(self, retain):
        self._grad_snaps.clear()
        self.emit({"kind": BACKWARD_END, "id": self._backward, "freed": not retain})
        self.pass_events = 0  # max_events counts per pass: one ends with its backward()

    def on_backward_error(self, root, error):
        self._grad_snaps.clear()
        self.emit({"kind": BACKWARD_ERROR, "id": self._backward, "root": self.tid(root),
                    "type": self.text(type(error).__name__), "message": self.text(error), "line": self.line})
        self.pass_events = 0

    # ----- training -----
    def on_zero_grad(self, tensors, set_to_none):
        self.emit({"kind": ZERO_GRAD, "tensors": [self.tid(t) for t in tensors], "set_to_none": set_to_none,
                    "line": self.line})

    def on_optim_step(self, optimizer, params):
        ids = [self.tid(p) for p in params]
        value = self.value
        state = {}
        opt_state = optimizer.state
        for i, p in zip(ids, params):
            s = opt_state.get(p) if isinstance(opt_state, dict) else None
            if type(s) is dict:  # only PyTorch's state names, only tensors: a program may write anything there
                entries = {k: value(np.asarray(v._data)) for k, v in s.items()
                           if k in OPTIM_STATE_NAMES and isinstance(v, Tensor)}
                if entries:
                    state[i] = entries
        self.emit({"kind": OPTIM_STEP, "optimizer": self.text(type(optimizer).__name__), "params": ids,
                    "lr": _learning_rate(optimizer),
                    "values": {i: value(p._data) for i, p in zip(ids, params)}, "state": state, "line": self.line})


def _ref(obj):
    """A weak reference to a tensor or graph node; a strong one (never dead) for an object that takes none."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda obj=obj: obj


def _learning_rate(optimizer):
    """The first group's `lr` as a JSON number (Optimizer.step() checked it is one), else null: only
    numbers leave a run, never a program object a group may hold."""
    groups = optimizer.param_groups
    lr = groups[0].get("lr") if type(groups) is list and groups and type(groups[0]) is dict else None
    if type(lr) is int and -2**53 < lr < 2**53:
        return lr
    if isinstance(lr, (int, float, np.integer, np.floating)):
        try:
            return json_number(float(lr))
        except OverflowError:  # an integer beyond float range
            return json_number(math.inf if lr > 0 else -math.inf)
    return None


def op_table() -> dict:
    """The op table as the page needs it: label, grad_fn name, local-derivative LaTeX and how the
    parameters are written (`params`: format, names, symbol; see `engine.ops.Params`) per op."""
    return {name: {"label": op.label, "grad_fn": op.grad_fn, "latex": list(op.latex), "saves": op.saves,
                   "params": op.params.table()}
            for name, op in OPS.items()}


__all__ = ["Recorder", "dtype_name", "encode_value", "export_event", "op_table", "split_event", "summarize",
           "AccumulateGrad"]
