"""Recorder events → the API trace: passes (graph + frames), per-step summaries, roles.

Pass policy
-----------
A *pass* runs from the end of the previous pass up to and including the next ``backward()``; what follows a
backward without recording a graph (``optimizer.step()``, ``zero_grad()``, in-place ``w -= lr * w.grad``, reading
``p.grad.norm()``: any op whose ``grad_fn`` is null) belongs to that backward's pass as its ``update`` phase, so one
training step reads forward → backward → update. The rule for what opens the next pass is
``engine.trace_events.opens_pass`` (shared with the runner); leaves created in between go with it.
An op that records a graph opens the next pass once the section it starts builds a graph (an op with a
``grad_fn``, not a view, takes another's output), reaches a ``backward()`` or passes ``HELD_EVENTS``; a
section that ends the run before (``weight[:, 0].item()`` for a final print) is the last pass's update
phase: code after the last backward adds a pass only when it runs a forward of its own (docs/trace.md §2).

Every pass gets a summary in ``steps`` (loss, parameter and gradient L2 norms). Which passes keep full graphs and
frames is the run's ``RunPolicy`` (``app/trace/policy.py``, shared with the recorder): the first ``head`` passes and
those asked for (sent as soon as they close) and the last ``tail`` passes (known only at the end); with
``head + tail`` passes or fewer, every pass is full. Other passes appear with ``graph: null`` and no frames.

Graph of a pass: the ops recorded in its forward phase plus the ops its backward steps run through (a second
``backward(retain_graph=True)`` re-walks an earlier graph), their input and output tensors, tensors created in the
pass, and ``detach`` links. Node ``value`` is the value at the end of the pass's forward phase; ``grad`` is ``.grad``
at the end of its backward phase (null = none yet). Update-phase ops are frames only, not nodes. A trailing
``zero_grad`` (after the last step) is frames marked ``after_result`` (``app.trace.frames.mark_after_result``).

Edge ids are stable for a run: ``e{op}_{k}`` for the k-th input of op ``n{op}``, ``e{op}_o`` for its output,
``d{tensor}`` for a detach link.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable

from app.layout import LayoutEngine, LayoutInput
from app.layout.layout import VIEW_ASPECT, VIEW_ASPECT_TRAINING
from app.trace.drawing import FoldOptions
from app.trace.drawing import cluster_title as _cluster_title
from app.trace.drawing import node_op_text as _op_text
from app.trace.drawing import node_size as _size
from app.trace.folded import FoldedPass, FoldTooSlow, cpu_budget
from app.trace.forgetting import drop, forget, pass_refs
from app.trace.frames import frame_node, mark_after_result
from app.trace.hierarchy import build_hierarchy
from app.trace.payloads import PassPayloads
from app.trace.policy import RunPolicy
from app.trace.quiet import QUIET_REASONS, apply_quiet
from app.trace.values import clean, compact_history, outputs_of, to_float, zeros_like
from engine.ops import OPS
from engine.recorder import op_table
from engine.trace_events import (
    ACCUMULATE,
    BACKWARD_BEGIN,
    BACKWARD_DONE,
    BACKWARD_KINDS,
    BACKWARD_STEP,
    DETACH,
    FORGET,
    INPLACE,
    META_KINDS,
    MODULE,
    MODULE_NAMES,
    NAME,
    OP,
    OPTIM_STEP,
    QUIET,
    RETAIN_GRAD,
    STEP_STATS,
    TENSOR,
    ZERO_GRAD,
    json_number,
    opens_pass,
)

_OP_TABLE = op_table()
HIST_COMPACT = 64  # a tensor's value or .grad history is compacted when this long (then at doubling sizes)
HELD_EVENTS = 4096  # events an update phase holds while it is not known whether they open the next pass
_VIEWS = frozenset(name for name, op in OPS.items() if op.view)  # `w[0, 1]` reads: select of a select builds no graph

def _eid_in(op: str, k: int) -> str:
    return f"e{op[1:]}_{k}"


def _eid_out(op: str) -> str:
    return f"e{op[1:]}_o"


class _Pass:
    __slots__ = ("index", "t_start", "frames", "ops", "tensors", "bw_ops", "roots", "loss", "t_fwd",
                 "t_grads", "stats", "phase", "pending", "pending_ids", "detaches", "has_backward", "folded",
                 "frames_cut", "valued", "refs")

    def __init__(self, index: int, clock: int):
        self.index = index
        self.t_start = clock
        self.frames: list[dict] = []
        self.ops: list[str] = []
        self.tensors: list[str] = []
        self.bw_ops: list[str] = []
        self.roots: list[str] = []
        self.loss: float | None = None
        self.t_fwd: int | None = None  # the builder's clock at the end of the forward phase (values then)
        self.t_grads: int | None = None  # ... and at the end of the backward phase (.grad then)
        self.stats: dict | None = None
        self.phase = "forward"
        self.pending: list[dict] = []
        self.pending_ids: set[str] = set()  # ids of the tensors in `pending` (a `name` of one is held too)
        self.detaches: list[tuple[str, str]] = []
        self.has_backward = False
        self.folded: str | None = None  # why this pass gets no graph (too many nodes), kept from the start
        self.frames_cut: str | None = None  # why its frames were left out (too many)
        self.valued: list[str] = []  # tensors it computed that carry a value (not a number)
        self.refs: set[str] | None = None  # once closed and waiting to be drawn: the ids its graph shows


class TraceBuilder:
    """Feed events one at a time (``feed``); closed passes are reported through ``on_pass``.

    Budgets (each past limit folds, and ``reasons`` says why): a pass with more than ``max_nodes``
    graph nodes is summarised (``graph: null``, ``folded`` says why) and keeps no frames while it
    runs; a pass with more than ``max_frames`` frames (default ``4 * max_nodes``) is drawn without
    them (``frames: []``); past ``deadline`` (``time.monotonic()``; restarted at ``finish`` with the same time
    for the passes drawn then) no more graphs are drawn. Feeding is linear in the events.
    """

    def __init__(self, layout: LayoutEngine | None, *, policy: RunPolicy,
                 on_pass: Callable[[dict], None] | None = None, on_step: Callable[[dict], None] | None = None,
                 max_nodes: int | None = None, max_frames: int | None = None, deadline: float | None = None,
                 fold: FoldOptions | None = None):
        self.layout = layout
        self.fold = fold  # big passes are folded (app/trace/folded.py) instead of drawn whole
        self.folded_passes: dict[int, FoldedPass] = {}  # their group payloads are built after the answer
        if fold is not None and max_nodes is not None:
            max_frames = max_frames if max_frames is not None else 4 * max(max_nodes, fold.max_nodes)
            self.drawn_limit = max_nodes  # an unfolded pass stays within this
            max_nodes = max(max_nodes, fold.max_nodes)
        else:
            self.drawn_limit = max_nodes
        self.policy = policy
        tail = policy.tail
        self.max_nodes = max_nodes
        self.max_frames = max_frames if max_frames is not None else (4 * max_nodes if max_nodes else None)
        self.deadline = deadline
        self.reasons: dict[str, None] = {}  # why something was cut (ordered, no repeats)
        self.emits_left = 0  # full passes that may still be reported, this one included (for byte budgets)
        self.on_pass = on_pass
        self.on_step = on_step
        self.tensors: dict[str, dict] = {}
        self.ops: dict[str, dict] = {}
        self.modules: dict[str, dict] = {}
        self.module_names: dict[str, str] = {}
        self.param_names: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.seq: dict[str, int] = {}
        self.cur_value: dict[str, object] = {}
        self.cur_grad: dict[str, object] = {}
        # what a pass's graph shows at a past moment, without copying the state at every pass: the
        # changes of each tensor's value (in-place, optimizer) and .grad, by clock (events applied)
        self.clock = 0
        self.value_hist: dict[str, list[tuple[int, object]]] = {}
        self.grad_hist: dict[str, list[tuple[int, object]]] = {}
        # ... of which only what a pass that may still be drawn can show is kept (``compact_history``)
        self._head_times: list[int] = []  # the moments the head passes show
        self._keep_from = 0  # every pass that may still be drawn starts at or after this clock
        self._hist_caps: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self.optim_params: set[str] = set()
        self.consumers: dict[str, int] = {}  # tensor id -> ops kept that take it (it stays while one does)
        # ids the run says no later event names (`FORGET`), kept only while an entry or a pass to draw needs them
        self._unreachable: set[str] = set()
        self._drawn_refs: set[str] = set()  # ids the head and asked-for passes show (drawn again at `finish`)
        self.ops_used: set[str] = set()
        self.passes: list[dict] = []
        self.steps: list[dict] = []
        self.tail_buf: deque[_Pass] = deque(maxlen=max(tail, 0) or None) if tail else deque(maxlen=1)
        self.cur: _Pass | None = None
        self.head_buf: list[tuple[_Pass, int]] = []
        self.names_version = 0
        self.n_closed = 0
        self.truncated = False
        self._n = 0
        self._held: list[dict] | None = None  # events after an update phase's first graph op (see the docstring)
        self._held_outputs: set[str] = set()  # ... and the tensors its graph ops made
        self._draw_time = None if deadline is None else deadline - time.monotonic()  # again from the end: `finish`

    # ------------------------------------------------------------------ feeding
    def feed_all(self, events) -> None:
        for e in events:
            self.feed(e)

    def feed(self, e: dict) -> None:
        kind = e.get("kind")
        if kind == FORGET or kind == QUIET:
            if self._held is not None:  # after the held events: one of them may name an id it lists
                self._held.append(e)
            elif kind == FORGET:
                forget(self, e.get("ids") or ())
            else:
                apply_quiet(self, e)
            return
        if kind in META_KINDS:
            self._meta(e)
            return
        if self.cur is None:
            if self.n_closed >= self.policy.max_passes:
                self._passes_cut()
                return
            self._open()
        p = self.cur
        if p.phase == "update":
            held = self._held
            if held is not None:
                held.append(e)
                if kind == OP and e.get("grad_fn"):
                    inputs = e.get("inputs") or ()
                    computes = e.get("op") not in _VIEWS and any(x in self._held_outputs for x in inputs)
                    if computes or len(held) > HELD_EVENTS:
                        self._open_next(p)  # a graph: the section is a forward of its own
                    else:
                        self._held_outputs.update(outputs_of(e))
                elif kind == BACKWARD_BEGIN:
                    self._open_next(p)
                return
            if not opens_pass(e):
                self._update(p, e)
                return
            # the held tensors belong to the pass this event may open
            self._held = p.pending + [e]
            p.pending = []
            p.pending_ids = set()
            self._held_outputs = set(outputs_of(e)) if kind == OP else set()
            if kind == BACKWARD_BEGIN:
                self._open_next(p)
            return
        phase = "backward" if kind in BACKWARD_KINDS else p.phase
        if kind == BACKWARD_BEGIN:
            if p.has_backward and p.phase != "backward":  # defensive: a second backward without update
                self._close(p)
                self._open()
                p = self.cur
            phase = "backward"
            if p.t_fwd is None:
                p.t_fwd = self.clock
            p.has_backward = True
            p.phase = "backward"
        self._apply(p, e, phase)
        if kind in BACKWARD_DONE:
            p.t_grads = self.clock
            p.phase = "update"

    def _open_next(self, p: _Pass) -> None:
        """The held events open the next pass: ``p`` closes and they are fed to the new one."""
        held, self._held, self._held_outputs = self._held, None, set()
        self._close(p)
        if self.n_closed >= self.policy.max_passes:
            self._passes_cut()
            return
        self._open()
        for x in held:
            self.feed(x)

    def _passes_cut(self) -> None:
        self.truncated = True
        limit = self.policy.max_passes
        self.reasons.setdefault(f"the run made more than {limit:,} passes; the later ones were left out "
                                f"(limit max_passes = {limit:,})")

    def _open(self) -> _Pass:
        """A new pass, now the current one."""
        self.cur = _Pass(self.n_closed, self.clock)
        return self.cur

    def _update(self, p: _Pass, e: dict) -> None:
        """An event after a backward that does not open the next pass: part of the update phase."""
        kind = e["kind"]
        if kind == TENSOR:
            p.pending.append(e)  # a leaf (and its name) may belong to the next pass: held until that is known
            p.pending_ids.add(e["id"])
            return
        if kind == NAME and e.get("tensor") in p.pending_ids:
            p.pending.append(e)
            return
        if kind == DETACH or kind == OP:  # records no graph (analysis, update): the held tensors are its inputs
            for x in p.pending:
                self._apply(p, x, "update")
            p.pending.clear()
            p.pending_ids.clear()
        self._apply(p, e, "update")

    def _meta(self, e: dict) -> None:
        kind = e["kind"]
        if kind == MODULE:
            self.modules[e["id"]] = {"cls": e.get("cls"), "repr": e.get("repr"), "parent": e.get("parent")}
        elif kind == MODULE_NAMES:
            names, params = e.get("names") or {}, e.get("parameters") or {}
            mine, pmine = self.module_names, self.param_names
            if any(mine.get(k) != v for k, v in names.items()) or any(pmine.get(k) != v for k, v in params.items()):
                mine.update(names)
                pmine.update(params)
                self.names_version += 1
        elif kind == STEP_STATS:
            p = self.cur
            if p is not None:
                p.stats = {k: e.get(k) for k in ("loss", "param_norm", "grad_norm")}

    def _set_value(self, tid: str, v) -> None:
        self.cur_value[tid] = v
        self._record(self.value_hist, self._hist_caps[0], tid, v)

    def _set_grad(self, tid: str, g, remove: bool = False) -> None:
        if remove:
            self.cur_grad.pop(tid, None)
        else:
            self.cur_grad[tid] = g
        self._record(self.grad_hist, self._hist_caps[1], tid, g)

    def _record(self, hists: dict, caps: dict, tid: str, v) -> None:
        hist = hists.get(tid)
        if hist is None:
            hists[tid] = [(self.clock, v)]
            return
        hist.append((self.clock, v))
        if len(hist) >= caps.get(tid, HIST_COMPACT):
            hist[:] = compact_history(hist, self._keep_from, self._head_times)
            caps[tid] = max(HIST_COMPACT, 2 * len(hist))  # amortised: a list is compacted at doubling sizes

    @staticmethod
    def _at(hist: list[tuple[int, object]] | None, t: int | None, default):
        """The last value in ``hist`` set at or before clock ``t`` (``default`` when none)."""
        if not hist:
            return default
        if t is None:
            return hist[-1][1]
        i = bisect_right(hist, t, key=_clock_of)
        return hist[i - 1][1] if i else default

    def _apply(self, p: _Pass, e: dict, phase: str) -> None:
        kind = e["kind"]
        self.clock += 1
        max_nodes = self.max_nodes
        edges: list[str] = []
        if kind == TENSOR:
            tid = e["id"]
            self.tensors[tid] = e
            self.seq.setdefault(tid, self._next())
            value = self.cur_value[tid] = e.get("value")
            if (type(value) is list or type(value) is dict) and e.get("origin") == "op":
                p.valued.append(tid)
            if phase != "update" and p.folded is None:
                p.tensors.append(tid)
                if max_nodes is not None and len(p.tensors) + len(p.ops) > max_nodes:
                    self._fold(p, self._too_many(max_nodes, "more than "))
            if e.get("op"):
                edges.append(_eid_out(e["op"]))
        elif kind == OP:
            oid = e["id"]
            self.ops[oid] = e
            self.ops_used.add(e.get("op"))
            self.seq.setdefault(oid, self._next())
            for i, x in enumerate(e.get("inputs") or []):
                if x is not None:
                    edges.append(_eid_in(oid, i))
                    self.consumers[x] = self.consumers.get(x, 0) + 1
            if phase != "update" and p.folded is None:
                p.ops.append(oid)
                if max_nodes is not None and len(p.tensors) + len(p.ops) > max_nodes:
                    self._fold(p, self._too_many(max_nodes, "more than "))
        elif kind == NAME:
            self.names[e["tensor"]] = e["name"]
        elif kind == DETACH:
            if p.folded is None:
                p.detaches.append((e["source"], e["tensor"]))
            edges.append("d" + e["tensor"])
        elif kind == INPLACE:
            self._set_value(e["tensor"], e.get("value"))
            if phase == "update" and self.tensors.get(e["tensor"], {}).get("requires_grad"):
                self.optim_params.add(e["tensor"])  # `w -= lr * w.grad`: trained, so a parameter
        elif kind == OPTIM_STEP:
            for tid, v in (e.get("values") or {}).items():
                self._set_value(tid, v)
            self.optim_params.update(e.get("params") or [])
        elif kind == ZERO_GRAD:
            for tid in e.get("tensors") or []:
                if e.get("set_to_none"):
                    self._set_grad(tid, None, remove=True)
                elif tid in self.cur_grad:
                    self._set_grad(tid, zeros_like(self.cur_grad[tid]))
        elif kind == BACKWARD_BEGIN:
            p.roots.append(e.get("root"))
            if p.loss is None:
                p.loss = to_float(e.get("root") and self.cur_value.get(e["root"]))
        elif kind == BACKWARD_STEP:
            node = e.get("node")
            if node:
                if p.folded is None:
                    p.bw_ops.append(node)
                for c in e.get("contributions") or []:
                    edges.append(_eid_in(node, c.get("index", 0)))
                edges.append(_eid_out(node))
        elif kind == ACCUMULATE:
            self._set_grad(e["tensor"], e.get("after"))
        elif kind == RETAIN_GRAD:
            self._set_grad(e["tensor"], e.get("grad"))
        if p.folded is None and p.frames_cut is None:
            frame = dict(e)
            frame["phase"] = phase
            frame["edges"] = edges
            frame["node"] = frame_node(e)
            frames = p.frames
            frames.append(frame)
            if self.max_frames is not None and len(frames) > self.max_frames:
                p.frames_cut = (f"more than {self.max_frames:,} frames: drawn without them "
                                f"(4 × limit max_drawn_nodes = {self.max_nodes:,})")
                p.frames = []

    def _too_many(self, n: int, more: str = "", limit: int | None = None) -> str:
        limit = self.max_nodes if limit is None else limit
        name = "max_folded_nodes" if self.fold is not None and limit == self.fold.max_nodes else "max_drawn_nodes"
        return f"{more}{n:,} graph nodes: not drawn (limit {name} = {limit:,})"

    @staticmethod
    def _fold(p: _Pass, reason: str) -> None:
        """No graph for ``p``: what was kept to draw it goes now."""
        p.folded = reason
        p.frames = []
        p.ops, p.tensors, p.bw_ops, p.detaches = [], [], [], []

    def _next(self) -> int:
        self._n += 1
        return self._n

    # ------------------------------------------------------------------ closing
    def _close(self, p: _Pass) -> None:
        for x in p.pending:
            self._apply(p, x, "update")
        p.pending = []
        p.pending_ids = set()
        if p.t_fwd is None:
            p.t_fwd = self.clock
        if p.t_grads is None:
            p.t_grads = self.clock
        self.cur = None
        self.n_closed += 1
        step = self._summary(p)
        self.steps.append(step)
        if self.on_step:
            self.on_step(step)
        policy = self.policy
        if policy.kept_from_start(p.index):
            self._drawn_refs |= pass_refs(self, p)
            self._head_times += [p.t_fwd, p.t_grads]
            # streamed at once; without a listener it waits for the end, when the names are known
            self.head_buf.append((p, self.names_version if self.on_pass else -1))
            if self.on_pass:
                # this pass, the other head (and asked-for) passes, the tail
                self.emits_left = policy.left_to_draw(p.index)
                self._emit_pass(self._draw(p, step["loss"]))
            else:
                self._emit_pass({"index": p.index, "loss": step["loss"], "graph": None, "frames": []})
        else:
            if policy.tail:
                left = self.tail_buf.popleft() if len(self.tail_buf) == self.tail_buf.maxlen else None
                p.refs = pass_refs(self, p)
                self.tail_buf.append(p)
                self._keep_from = self.tail_buf[0].t_start
                if left is not None:  # it will not be drawn: its values go, and the entries only it showed
                    self._forget_values(left)
                    drop(self, left.refs & self._unreachable)
            else:
                self._keep_from = self.clock
                self._forget_values(p)
            self._emit_pass({"index": p.index, "loss": step["loss"], "graph": None, "frames": []})

    def _forget_values(self, p: _Pass) -> None:
        """``p`` will not be drawn: the values of the tensors it computed go (a later graph that reads
        one shows it without a value), so that memory follows what may still be drawn, not the run.
        The runner counts values against the answer budget the same way."""
        tensors, cur = self.tensors, self.cur_value
        for tid in p.valued:
            t = tensors.get(tid)
            if t is not None and t.get("origin") == "op":
                v = t.get("value")
                tensors[tid] = {**t, "value": None}
                if cur.get(tid) is v:
                    cur[tid] = None
        p.valued = []

    def _emit_pass(self, pd: dict) -> None:
        i = pd["index"]
        if i < len(self.passes):
            self.passes[i] = pd
        else:
            self.passes.append(pd)
        if self.on_pass:
            self.on_pass(pd)

    def finish(self) -> None:
        if self._held is not None and self.cur is not None:  # no forward after the last backward: its update phase
            start = len(self.cur.frames)
            for x in self._held:
                if x["kind"] == FORGET:
                    forget(self, x.get("ids") or ())
                elif x["kind"] == QUIET:
                    apply_quiet(self, x)
                else:
                    self._update(self.cur, x)
            self._held = None
            mark_after_result(self.cur.frames, start)
        if self._draw_time is not None:
            self.deadline = max(self.deadline, time.monotonic() + self._draw_time)
        if self.cur is not None:
            self._close(self.cur)
        # head passes: built now, or rebuilt when module/parameter names arrived after they were sent;
        # the last `tail` passes get their full graph now (replacing the summary sent earlier)
        todo = [p for p, version in self.head_buf if version != self.names_version]
        policy = self.policy
        todo += [p for p in self.tail_buf if not policy.kept_from_start(p.index) and policy.in_tail(p.index, self.n_closed)]
        self.head_buf.clear()
        self.tail_buf.clear()
        for i, p in enumerate(todo):
            self.emits_left = len(todo) - i
            self._emit_pass(self._draw(p, self.steps[p.index]["loss"]))
        self.emits_left = 0

    def _draw(self, p: _Pass, loss) -> dict:
        """The pass with its graph, or its summary with why not (``folded``) when it is too big or the
        answer is due."""
        reason = p.folded
        if reason in QUIET_REASONS:  # a summary, as a middle pass: the page records it when it is opened
            self.reasons.setdefault(f"pass {p.index}: {reason}")
            return {"index": p.index, "loss": loss, "graph": None, "frames": []}
        if reason is None and self.deadline is not None and time.monotonic() > self.deadline:
            reason = "not drawn: the answer was due (limit answer_time_s)"
        if reason is None:
            pd = self._full(p)
            if pd is not None:
                if p.frames_cut:
                    pd["folded"] = p.frames_cut
                    self._cut(p, p.frames_cut)
                return pd
            reason = p.folded
        self._cut(p, reason)
        return {"index": p.index, "loss": loss, "graph": None, "frames": [], "folded": reason}

    def _cut(self, p: _Pass, reason: str) -> None:
        self.truncated = True
        self.reasons.setdefault(f"pass {p.index}: {reason}")

    def _summary(self, p: _Pass) -> dict:
        stats = p.stats or {}
        loss = stats.get("loss", p.loss)
        return clean({"step": p.index, "loss": loss if loss is not None else p.loss,
                      "param_norm": stats.get("param_norm"), "grad_norm": stats.get("grad_norm")})

    # ------------------------------------------------------------------ graph
    def _role(self, tid: str, t: dict, roots: set[str], in_graph_consumers: dict[str, int]) -> str:
        if tid in roots:
            return "loss"
        if t.get("origin") == "const":
            return "constant"
        if t.get("is_leaf", True) and t.get("origin") != "op":
            if tid in self.param_names or tid in self.optim_params or "." in self.names.get(tid, ""):
                return "parameter"
            if t.get("requires_grad") or tid in self.names:
                return "input"
            return "constant"
        if in_graph_consumers.get(tid, 0) == 0:
            return "output"
        return "intermediate"

    def _ancestors(self, roots: list[str], cap: int = 5_000) -> list[str]:
        """Op ids the roots were computed through (iteratively: graphs can be deep)."""
        out: list[str] = []
        seen: set[str] = set()
        stack = [r for r in roots if r]
        while stack and len(out) < cap:
            t = stack.pop()
            op_id = (self.tensors.get(t) or {}).get("op")
            if not op_id or op_id in seen or op_id not in self.ops:
                continue
            seen.add(op_id)
            out.append(op_id)
            stack.extend(x for x in self.ops[op_id].get("inputs") or [] if x)
        return out

    def _module_name(self, mid: str | None) -> str | None:
        if mid is None:
            return None
        return self.module_names.get(mid, mid)

    def _full(self, p: _Pass) -> dict | None:
        op_ids: list[str] = []
        seen: set[str] = set()
        extra: list[str] = []
        if p.roots and not p.bw_ops:
            extra = self._ancestors(p.roots)  # a failed backward: show the graph it tried to walk
        for o in p.ops + p.bw_ops + extra:
            if o not in seen and o in self.ops:
                seen.add(o)
                op_ids.append(o)
        t_ids: set[str] = set(p.tensors)
        for o in op_ids:
            op = self.ops[o]
            t_ids.update(x for x in op.get("inputs") or [] if x is not None)
            if op.get("output"):
                t_ids.add(op["output"])
            t_ids.update(op.get("outputs") or ())  # a custom Function with several outputs
        for s, d in p.detaches:
            t_ids.add(s)
            t_ids.add(d)
        t_ids = {t for t in t_ids if t in self.tensors}
        n_nodes = len(t_ids) + len(op_ids)
        folding = self.fold is not None and n_nodes > self.fold.threshold
        limit = self.max_nodes if folding else self.drawn_limit
        if limit is not None and n_nodes > limit:
            self._fold(p, self._too_many(n_nodes, limit=limit))
            return None
        roots = set(p.roots)
        consumers: dict[str, int] = {}
        edges: list[tuple[str, str, str, str | None]] = []
        for o in sorted(op_ids, key=self.seq.__getitem__):
            op = self.ops[o]
            cut = None if op.get("grad_enabled", True) else "no_grad"
            for i, x in enumerate(op.get("inputs") or []):
                if x is not None and x in t_ids:
                    edges.append((_eid_in(o, i), x, o, cut))
                    consumers[x] = consumers.get(x, 0) + 1
            out = op.get("output")
            if out in t_ids:
                edges.append((_eid_out(o), o, out, None))
            for k, more in enumerate((op.get("outputs") or [])[1:], 1):  # a custom Function's further outputs
                if more in t_ids:
                    edges.append((f"{_eid_out(o)}{k}", o, more, None))
        for s, d in p.detaches:
            edges.append(("d" + d, s, d, "detach"))
            consumers[s] = consumers.get(s, 0) + 1
        at, value_hist, grad_hist, t_fwd, t_grads = self._at, self.value_hist, self.grad_hist, p.t_fwd, p.t_grads
        nodes: list[dict] = []
        for nid in sorted(list(t_ids) + op_ids, key=self.seq.__getitem__):
            if nid[0] == "n":
                op = self.ops[nid]
                label = op.get("label") or op.get("op")
                nodes.append({"id": nid, "kind": "op", "label": label, "params": op.get("params") or [],
                              "role": "op", "name": None,
                              "shape": self.tensors.get(op.get("output"), {}).get("shape"),
                              "dtype": None, "requires_grad": bool(op.get("grad_fn")), "is_leaf": False,
                              "grad_fn": op.get("grad_fn"), "module": self._module_name(op.get("module")),
                              "op": op.get("op"), "line": op.get("line"), "value": None, "grad": None})
                if op.get("lines"):  # a custom Function: the lines of its forward
                    nodes[-1]["lines"] = op["lines"]
                if op.get("error"):  # the op that failed: drawn red, with the shapes it was given
                    nodes[-1]["error"] = op["error"]
                    nodes[-1]["input_shapes"] = op.get("input_shapes")
            else:
                t = self.tensors[nid]
                name = self.param_names.get(nid) or self.names.get(nid)
                producer = self.ops.get(t.get("op")) if t.get("op") else None
                role = self._role(nid, t, roots, consumers)
                if name:
                    label = name
                elif role == "constant" and not t.get("shape"):
                    label = str(json_number(t.get("value")))
                else:
                    label = "×".join(str(s) for s in t.get("shape") or []) or "scalar"
                nodes.append({"id": nid, "kind": "tensor", "label": label, "role": role, "name": name,
                              "shape": t.get("shape"), "dtype": t.get("dtype"),
                              "requires_grad": t.get("requires_grad"), "is_leaf": t.get("is_leaf"),
                              "grad_fn": producer.get("grad_fn") if producer else None,
                              "module": self._module_name(t.get("module")), "op": None, "line": t.get("line"),
                              "value": t.get("value") if nid not in value_hist else at(value_hist[nid], t_fwd,
                                                                                         t.get("value")),
                              "grad": None if nid not in grad_hist else at(grad_hist[nid], t_grads, None)})
        for n in nodes:
            n["w"], n["h"] = _size(n)
        # clusters: one per module with members in this graph (plus its ancestors)
        members: dict[str, list[str]] = {}
        for n in nodes:
            src = self.ops.get(n["id"]) if n["kind"] == "op" else self.tensors.get(n["id"])
            mid = src.get("module") if src else None
            if mid is not None and (n["kind"] == "op" or n["role"] in ("intermediate", "output")):
                members.setdefault(mid, []).append(n["id"])
        # a module's own parameters ("model.0.weight" belongs to "model.0") go in its box, when that
        # module ran in this graph
        by_name = {name: mid for mid, name in self.module_names.items()}
        member_ids = {(mid, x) for mid, xs in members.items() for x in xs}
        for n in nodes:
            pname = self.param_names.get(n["id"]) if n["kind"] == "tensor" else None
            owner = by_name.get(pname.rsplit(".", 1)[0]) if pname and "." in pname else None
            if owner is not None and owner in members and (owner, n["id"]) not in member_ids:
                member_ids.add((owner, n["id"]))
                members[owner].append(n["id"])
                if n["module"] is None:
                    n["module"] = self._module_name(owner)
        cl_ids: list[str] = []
        cl_seen: set[str] = set()
        for mid in list(members):
            m = mid
            while m is not None and m not in cl_seen:
                cl_seen.add(m)
                cl_ids.append(m)
                m = (self.modules.get(m) or {}).get("parent")
        cl_ids.sort(key=lambda m: int(m[1:]) if m[1:].isdigit() else 0)
        # members of a cluster include those of its descendants
        all_members: dict[str, list[str]] = {m: list(members.get(m, [])) for m in cl_ids}
        for m in cl_ids:
            parent = (self.modules.get(m) or {}).get("parent")
            while parent is not None and parent in all_members:
                all_members[parent].extend(members.get(m, []))
                parent = (self.modules.get(parent) or {}).get("parent")
        # a training step is drawn above the loss chart, in a pane about twice as wide for its height
        training = any(f.get("phase") == "update" and f.get("kind") in (OPTIM_STEP, INPLACE, ZERO_GRAD)
                       for f in p.frames)
        if folding:
            return self._folded(p, nodes, edges, members, cl_ids,
                                VIEW_ASPECT_TRAINING if training else VIEW_ASPECT)
        graph: dict = {"width": 0.0, "height": 0.0, "nodes": nodes, "edges": [], "clusters": [], "groups": [],
                       "layout": None}
        res = None
        if self.layout is not None:
            lin = LayoutInput(
                [(n["id"], f'{n["kind"]}|{n["op"] or n["role"]}|{_op_text(n) if n["kind"] == "op" else ""}',
                  n["w"], n["h"]) for n in nodes],
                [(eid, s, t) for eid, s, t, _ in edges],
                [(m, (self.modules.get(m) or {}).get("parent"), all_members[m], _cluster_title(self.module_names.get(m) or m,
                  (self.modules.get(m) or {}).get("cls"))) for m in cl_ids],
            )
            res = self.layout.layout(lin, VIEW_ASPECT_TRAINING if training else VIEW_ASPECT)
            graph["width"], graph["height"] = res.width, res.height
            graph["groups"] = res.groups
            graph["layout"] = res.method
        for n in nodes:
            n["x"], n["y"] = res.nodes.get(n["id"], (0.0, 0.0)) if res else (0.0, 0.0)
        graph["edges"] = [{"id": eid, "source": s, "target": t, "points": res.edges.get(eid, []) if res else [],
                           "cut": cut} for eid, s, t, cut in edges]
        for m in cl_ids:
            x, y, w, h = res.clusters.get(m, (0.0, 0.0, 0.0, 0.0)) if res else (0.0, 0.0, 0.0, 0.0)
            info = self.modules.get(m) or {}
            graph["clusters"].append({"id": m, "name": self.module_names.get(m), "cls": info.get("cls"),
                                      "parent": info.get("parent"), "x": x, "y": y, "w": w, "h": h,
                                      "nodes": all_members[m]})
        # recorder values are already JSON-safe and coordinates are finite: no deep clean needed
        loss = p.loss if p.loss is not None else (p.stats or {}).get("loss")
        # the op-table entries this pass draws: a streamed pass comes before the run's `ops`
        used = {n["op"] for n in nodes if n["kind"] == "op"} | {f["op"] for f in p.frames if f["kind"] == OP}
        ops = {name: _OP_TABLE[name] for name in sorted(used) if name in _OP_TABLE}
        return {"index": p.index, "loss": clean(loss), "graph": graph, "frames": p.frames, "ops": ops}

    def _folded(self, p: _Pass, nodes: list[dict], edges: list, members: dict[str, list[str]], cl_ids: list[str],
                aspect: float) -> dict | None:
        """A big pass as a group tree (docs/trace.md §5): the visible level, lazy frames; the groups'
        payloads go to ``self.payloads`` (the worker ships them to the server's run store)."""
        fold = self.fold
        node_cluster = {x: mid for mid, xs in members.items() for x in xs}
        cl_set = set(cl_ids)
        clusters = []
        for m in cl_ids:
            info = self.modules.get(m) or {}
            parent = info.get("parent")
            cls = info.get("cls")
            clusters.append((m, parent if parent in cl_set else None,
                             f"{self.module_names.get(m) or m}" + (f" ({cls})" if cls else "")))
        try:
            with cpu_budget(fold.cpu_budget_s):  # the worker's time for a run is bounded by the run's budget
                hier = build_hierarchy(nodes, edges, node_cluster, clusters, p.frames, fold.source,
                                       threshold=fold.threshold, max_children=fold.max_children)
                folded = FoldedPass(hier, nodes, edges, p.frames, layout=self.layout, op_text=_op_text,
                                    cluster_title=lambda label: _cluster_title(label, None), aspect=aspect,
                                    run=fold.run, pass_index=p.index)
        except FoldTooSlow:
            self._fold(p, f"not drawn: folding its {len(nodes):,} nodes took more than {fold.cpu_budget_s:g} s of "
                          f"CPU time (limit hard_kill_s = {fold.cpu_budget_s:g})")
            return None
        graph, frames = folded.first()
        self.folded_passes[p.index] = folded
        loss = p.loss if p.loss is not None else (p.stats or {}).get("loss")
        used = {n["op"] for n in nodes if n["kind"] == "op"} | {f["op"] for f in p.frames if f["kind"] == OP}
        ops = {name: _OP_TABLE[name] for name in sorted(used) if name in _OP_TABLE}
        return {"index": p.index, "loss": clean(loss), "graph": graph, "frames": frames, "ops": ops}

    def build_payloads(self, deadline: float | None = None) -> dict[int, PassPayloads]:
        """The folded passes' group payloads (for the run store), built once the answer is out; past
        ``deadline`` (``time.monotonic()``) ``TimeoutError``."""
        out = {k: fp.payloads(deadline) for k, fp in self.folded_passes.items()}
        self.folded_passes.clear()
        return out

    # ------------------------------------------------------------------ result
    def result_parts(self) -> dict:
        return {"passes": self.passes, "steps": self.steps, "truncated": self.truncated,
                "modules": {m: {"name": self.module_names.get(m), **info} for m, info in self.modules.items()}}


def _clock_of(entry: tuple[int, object]) -> int:
    return entry[0]

