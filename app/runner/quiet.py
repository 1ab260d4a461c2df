"""Quiet passes: the middle passes of a long loop run without recording (docs/trace.md §2, "quiet passes").

A run's middle passes reach the page as points of its loss curve and rows of its step table only, yet recording them
is most of a long run's time (~5 µs of Python per event, some fifty events a pass). When the interpreter knows the
length of the outermost loop (``Budgets.loop_forecast``), ``PassForecast`` tells how many backward passes are still to
come; while the next pass cannot be one the page draws, the recorder hands the engine a ``QuietPasses`` stand-in
instead of itself (``StreamingRecorder._consider_quiet``). The stand-in keeps each backward's loss and step statistics,
the op kinds used, and which of the tensors the recorder had recorded changed value, gradient or ``requires_grad``.
Some passes before the last ones, the recorder takes over again (``StreamingRecorder.wake``) and ships one ``quiet``
event: the passes' losses and norms, the op kinds, and the new values and gradients of those tensors, which the passes
drawn after it show.
"""

from __future__ import annotations

import itertools
import math
import time
import weakref

import numpy as np

from app.runner.light import value_cost
from engine.autograd import STATE
from engine.tensor_core import Tensor
from engine.trace_events import BACKWARD_END, BACKWARD_ERROR, OP, QUIET, TENSOR, json_number
from engine.trace_export import OUT_VALUE, encode_value, export_values

# passes recorded in full before the ones the page may draw, besides the pass ahead of them that ships in full too
QUIET_MARGIN = 2
# the share of its time limit a run may use before no pass runs quietly any more: one that a limit stops has its last
# passes recorded, at the cost of some that would have finished quietly (recording doubles what is left: past 0.9)
QUIET_CPU_SHARE = 0.8
QUIET_NODE = (None, None, (), None)  # the recorder stamp of a graph node made by an op that ran quietly
QUIET_BATCH = 4096  # passes that ran quietly are shipped at least this many at a time
QUIET_NODES_SPARE = 1.25  # a pass goes quiet on a forecast of this many times the graph nodes any pass is drawn with


def square_sum(a) -> float:
    """The sum of the squares of ``a``'s elements, in float64."""
    if type(a) is np.ndarray and a.size == 1 and a.dtype.kind in "fiu":
        v = float(a.item())  # exact for every float and any int numpy's float64 cast rounds the same way
        return v * v
    return float(np.sum(np.square(a, dtype=np.float64)))


def step_stats(leaves, loss) -> dict:
    """A ``step_stats`` event's numbers: the loss, and the L2 norms of the values and gradients of ``leaves`` (the
    tensors the backward accumulated into)."""
    pn = gn = 0.0
    for t in leaves:
        try:
            pn += square_sum(t._data)
            if t._grad is not None:
                gn += square_sum(t._grad._data)
        except Exception:  # noqa: BLE001 - a broken user object is skipped, not fatal
            pass
    has = bool(leaves)
    return {"loss": json_number(loss), "param_norm": json_number(math.sqrt(pn)) if has else None,
            "grad_norm": json_number(math.sqrt(gn)) if has else None}


def scalar_loss(root) -> float | None:
    """The loss a backward starts from, when it is one number."""
    try:
        data = root._data
        # NOTE: float() of a 1-element array that is not 0-d raises on numpy >= 2.4: a loss of shape [1] is common
        return float(np.asarray(data).reshape(-1)[0]) if np.size(data) == 1 else None
    except Exception:  # noqa: BLE001
        return None


class PassForecast:
    """How many more backward passes a run will make at least, from its outermost loop: once two iterations in a row
    each ran the same number k >= 1 of backwards, every iteration still to come is taken to run k. A loop that can leave
    early (``break``, ``return``, ``raise``) gives no forecast; one whose iterations run fewer later, or an error, can
    end before it (then the last passes come without graphs, and say so: ``app.trace.build.QUIET_REASON``)."""

    __slots__ = ("loop", "iteration", "in_iteration", "done")

    def __init__(self):
        self.loop = None  # the loop node of the last backward seen
        self.iteration = 0  # ... its iteration (items drawn)
        self.in_iteration = 0  # backwards seen in that iteration
        self.done: list[int] = []  # backwards of the last two completed iterations

    def remaining(self, forecast) -> int | None:
        """A backward just ended; ``forecast`` is the interpreter's ``(loop node, length, items drawn)`` or None. The
        least number of backwards still to come, or None when it cannot be told."""
        if forecast is None:
            self.loop = None
            return None
        node, total, drawn = forecast
        if node is not self.loop or drawn < self.iteration:  # another loop, or the same one again
            self.loop, self.iteration, self.in_iteration, self.done = node, drawn, 1, []
            return None
        if drawn == self.iteration:
            self.in_iteration += 1
        else:
            # an iteration ended; one or more with no backward at all in between breaks the pattern
            self.done = [*self.done[-1:], self.in_iteration] if drawn == self.iteration + 1 else []
            self.iteration, self.in_iteration = drawn, 1
        if len(self.done) < 2 or self.done[0] != self.done[1]:
            return None
        k = self.done[1]
        return max(0, k - self.in_iteration) + (total - drawn) * k


class QuietPasses:
    """What ``STATE.recorder`` is while passes run quietly: every call the engine makes on a recorder, most of them
    doing nothing. ``owner`` is the ``StreamingRecorder`` it stands in for; the tensors it stamped (``_rid``) are the
    only ones whose changes are kept (a tensor made meanwhile gets its id when a recorded event first names it)."""

    def __init__(self, owner, within: bool = False, forecast: bool = False):
        self.owner = owner
        self.within = within  # went quiet in the middle of a pass (too big to draw): its backward is the first one
        self.forecast = forecast  # ... forecast to be too big: its graph nodes are counted (at least), to check
        self.nodes = 0
        self.within_nodes: int | None = None  # ... those of that pass, once its backward ended
        self._epoch = owner._epoch
        self.line = None
        self.kinds: set[str] = set()  # op kinds run
        self.passes: list[dict] = []  # step statistics of each backward
        self.values: dict[str, object] = {}  # id -> the tensor whose value changed in place
        self.grads: dict[str, tuple] = {}  # id -> (tensor, True: read its .grad / False: it is the gradient)
        self.flags: dict[str, object] = {}  # id -> the tensor whose requires_grad was set
        self.names: dict[str, object] = {}  # a name the program bound -> a weak reference to the last tensor bound
        self._leaves: dict[int, object] = {}
        self._loss: float | None = None

    def _rid(self, t) -> str | None:
        stamp = getattr(t, "_rid", None)
        return stamp[1] if stamp is not None and stamp[0] is self._epoch else None

    # ----- what is kept -----
    def on_op(self, op, inputs, params, result):
        self.kinds.add(op.name)
        if result._rid is None:  # the op, and its output when new (as the builder counts)
            self.nodes += 2
            # an op's output made on that line, as the recorder records it when an event first names it
            result._rid = (None, self.owner.line, True)
        else:
            self.nodes += 1
        node = result._grad_fn
        if node is not None and node._rid is None:
            node._rid = QUIET_NODE  # a later backward that walks it is told apart (``unrecorded_node``)

    def on_function(self, op, fn_name, args, outputs, forward):
        self.kinds.add("autograd_function")
        self.nodes += 1 + len(outputs)

    def on_backward_begin(self, root, g, retain):
        self._leaves = {}
        self._loss = scalar_loss(root)

    def on_accumulate(self, t, g, before):
        self._leaves[id(t)] = t
        rid = self._rid(t)
        if rid is not None:
            self.grads[rid] = (t, True)

    def on_backward_end(self, retain):
        if self.within_nodes is None:
            self.within_nodes = self.nodes
        self.passes.append(step_stats(self._leaves.values(), self._loss))
        self._leaves = {}
        self.owner.quiet_backward_end()

    def on_inplace(self, t, name):
        owner = self.owner._grad_owner.get(id(t))
        if owner is not None and owner[0]() is t:  # an edit of a recorded tensor's .grad
            self.grads[owner[1]] = (t, False)
            return
        rid = self._rid(t)
        if rid is not None:
            self.values[rid] = t

    def on_optim_step(self, optimizer, params):
        for p in params:
            rid = self._rid(p)
            if rid is not None:
                self.values[rid] = p

    def on_zero_grad(self, tensors, set_to_none):
        for t in tensors:
            rid = self._rid(t)
            if rid is not None:
                self.grads[rid] = (t, True)

    def on_retain_grad(self, t):
        rid = self._rid(t)
        if rid is not None:
            self.grads[rid] = (t, True)

    def on_requires_grad(self, t):
        rid = self._rid(t)
        if rid is not None:
            self.flags[rid] = t

    def alias(self, out, src):
        """`x.data` of a recorded tensor is that tensor (an edit through it is an edit of it)."""
        rid = self._rid(src)
        if rid is not None:
            out._rid = src._rid
            self.owner._alias(rid, out)
        elif src._rid is not None and src._rid[0] is None:  # made meanwhile: the same tensor
            out._rid = src._rid

    # ----- what is not kept (an error in a quiet pass: the run's error says where; its pass is not drawn) -----
    def on_op_error(self, op, inputs, params, error):
        pass

    def on_backward_error(self, root, error):
        pass

    def on_backward_step(self, node, g, parts, grads):
        pass

    def on_hook(self, where, hook, tensor, grad, new):
        pass

    def on_grad_mode(self, enabled):
        pass

    def on_detach(self, src, out):
        pass

    def on_mark_retain(self, t):
        pass

    def stamp_saved(self, node, out, inputs):
        pass

    def tid(self, t, origin=None, op=None):
        return None

    def enter_module(self, m):
        pass

    def exit_module(self, m):
        pass

    def enter_step(self, label):
        pass

    def exit_step(self):
        pass


class QuietRecording:
    """``StreamingRecorder``'s quiet passes: when they start, what the stand-in hands back, and the ``quiet`` event
    (a mixin: it works on the recorder's own state)."""

    def watch_loops(self, probe) -> None:
        """The interpreter's ``loop_forecast`` (None: no more), from which the passes still to come are forecast."""
        self._loop_probe = probe

    def _quiet_ahead(self, next_pass: int) -> bool:
        """Whether pass ``next_pass`` may run quietly: more than the last passes, the one before them and a margin
        are surely still to come after it, none of them asked for, and the run has CPU time to spare."""
        probe = self._loop_probe
        if probe is None:  # in-process (no interpreter to tell the loops): a pass that went quiet wakes at its end
            return False
        left = self._forecast.remaining(probe())
        return (left is not None and left > self._policy.tail + 1 + QUIET_MARGIN and not self._drawable(next_pass)
                and (self._quiet_until is None or time.process_time() < self._quiet_until))

    def _drawable(self, index: int) -> bool:
        """Pass ``index`` may be drawn whatever the forecast: kept from the start, or among the last the builder keeps
        when the run makes more than max_passes (then it keeps no pass after them)."""
        policy = self._policy
        return policy.kept_from_start(index) or 0 < policy.max_passes - index <= policy.tail + 1 + QUIET_MARGIN

    def _consider_quiet(self) -> None:
        """A backward recorded in full ended: its pass's update phase and the passes after it run quietly when the
        next one may (``_quiet_ahead``) and this one is not drawn from the start."""
        current = len(self._marks)  # the pass this backward ended
        if self._quiet_ahead(current + 1) and STATE.recorder is self and not self._drawable(current):
            if self._stream:
                self.flush()  # the page draws the passes recorded so far while the rest runs
            self._quiet = QuietPasses(self)
            STATE.recorder = self._quiet

    def _count_nodes(self) -> None:
        """The graph nodes of the captured events of this pass not counted yet (``_pass_nodes``); past max_pass_nodes,
        out of any backward, the rest of the pass runs quietly: the trace builder draws no graph of it."""
        captured, n = self.captured, self._pass_nodes
        for e in itertools.islice(captured, max(0, self._nodes_counted - self._base), None):
            if type(e) is tuple:
                n += 2 if len(e) > OUT_VALUE else 1
            else:
                kind = e["kind"]
                if kind == OP or kind == TENSOR:
                    n += 1
                elif kind == BACKWARD_END or kind == BACKWARD_ERROR:
                    break
        self._pass_nodes, self._nodes_counted = n, self._base + len(captured)
        if self._in_backward or self._quiet is not None or STATE.recorder is not self:
            return
        surely = n > self._max_pass_nodes
        if surely or self._nodes_forecast(n):
            if self._stream:
                self.flush()
            self._quiet = QuietPasses(self, within=True, forecast=not surely)
            self._counting = False
            STATE.recorder = self._quiet

    def _nodes_forecast(self, n: int) -> bool:
        """Whether the outermost loop, at the rate its last iterations added graph nodes to this pass (``n`` so far),
        will take it past max_pass_nodes with room to spare. Not for a pass asked for (it is drawn when it can be)."""
        forecast = self._loop_probe() if self._loop_probe is not None else None
        samples = self._node_samples
        if forecast is None or len(self._marks) in self._policy.asked:
            samples.clear()
            return False
        node, total, drawn = forecast
        if samples and samples[-1][0] is not node:
            samples.clear()
        samples.append((node, drawn, n))
        del samples[:-3]
        rates = [(b[2] - a[2]) / (b[1] - a[1]) for a, b in zip(samples, samples[1:]) if b[1] > a[1]]
        return len(rates) == 2 and n + min(rates) * (total - drawn) > QUIET_NODES_SPARE * self._max_pass_nodes

    def quiet_backward_end(self) -> None:
        """A backward ended quietly: the recorder wakes once the next pass may not run quietly; a stream ships the
        quiet passes so far every quiet_ship_s (the page's loss curve follows the run)."""
        self._backwards += 1
        self._after_bw = True  # (a pass that went quiet in its middle has just ended)
        if self._backward is None:  # a backward has run: the first pass is over (`_reached_outputs`)
            self._backward = self._new_id("b")
        quiet = self._quiet
        next_pass = len(self._marks) + len(quiet.passes) + (0 if quiet.within else 1)
        if not self._quiet_ahead(next_pass):
            self.wake()
        elif self._stream and time.monotonic() - self._last_flush > self.quiet_ship_s:
            self._ship_quiet(sync=False)
            self.flush()
        elif len(self._quiet.passes) >= QUIET_BATCH:  # what a run holds stays bounded however long its loop
            self._ship_quiet(sync=False)
            self._ship_settled()

    def unrecorded_name(self, t, name) -> None:
        quiet = self._quiet
        if quiet is not None and STATE.recorder is quiet and isinstance(t, Tensor):
            held = quiet.names.get(name)
            if held is None or held() is not t:  # (`a -= ...` binds its tensor again: no new reference)
                quiet.names[name] = weakref.ref(t)  # the tensors the program holds by name are named when it wakes
            if t._rid is None:  # made outside an op (a leaf): recorded with the line that named it
                t._rid = (None, self.line, False)

    def unrecorded_node(self, node) -> None:
        if node._rid is QUIET_NODE and self.quiet_reason is None and len(self._marks) < self._policy.max_passes:
            self.quiet_reason = (f"pass {len(self._marks)}: its backward walked graphs made while the run recorded "
                                 f"nothing (the middle of a long loop, or of a pass too big to draw), drawn without "
                                 f"their nodes")

    def wake(self) -> None:
        """Record again: the quiet passes go as one ``quiet`` event, with the values and gradients they changed."""
        quiet = self._quiet
        if STATE.recorder is quiet:
            STATE.recorder = self
        self._ship_quiet(sync=True)
        self._quiet = None
        for t in quiet.flags.values():
            self.on_requires_grad(t)

    def _ship_quiet(self, sync: bool) -> None:
        """The ``quiet`` event of the passes that ran quietly since the last one (each opens a pass, as a backward's
        update phase ends); with ``sync``, the values and gradients of the recorded tensors they changed."""
        quiet, limit = self._quiet, self.value_limit
        event = {"kind": QUIET, "passes": quiet.passes, "ops": sorted(quiet.kinds - self._first_ops)}
        opened = len(quiet.passes)
        if quiet.within and (quiet.passes or sync):  # the pass that went quiet in its middle ends (or the run does)
            nodes = quiet.within_nodes if quiet.within_nodes is not None else quiet.nodes
            if self._pass_nodes + nodes > self._max_pass_nodes:
                event["too_big"] = True  # drawn by no one, as the builder would have found
            elif quiet.forecast:
                event["unrecorded"] = True  # a forecast that failed: it could have been drawn
            if quiet.passes:  # the first one is its backward: it opens no pass
                event["within"] = True
                opened -= 1
            quiet.within = False
        if sync:
            values = {rid: encode_value(np.asarray(t._data), limit) for rid, t in quiet.values.items()}
            grads = {}
            for rid, (t, owner) in quiet.grads.items():
                g = t._grad if owner else t
                grads[rid] = None if g is None else encode_value(np.asarray(g._data), limit)
                if owner and g is not None:
                    self._own_grad(t)  # an in-place edit of this .grad is shown on its tensor
            event["values"], event["grads"] = values, grads
            # the tensors the program bound to a name meanwhile and still holds: their ids (new ones with their
            # `tensor` event) and names, so that a pass drawn later shows them as the program calls them
            tensors, names = [], {}
            for name, ref in quiet.names.items():
                t = ref()
                if t is None:
                    continue
                stamp = t._rid
                if stamp is not None and stamp[0] is self._epoch:
                    rid = stamp[1]
                else:
                    rid, te = self.new_tensor(t)
                    tensors.append(export_values(te, limit))
                    if t._grad is not None:  # a leaf the quiet backwards reached: its .grad, and edits of it, are its
                        grads[rid] = encode_value(np.asarray(t._grad._data), limit)
                        self._own_grad(t)
                names[rid] = self.text(name)
            event["tensors"], event["names"] = tensors, names
            if self._value_budget is not None:
                self._value_bytes += sum(value_cost(np.asarray(t._data), limit) for t in quiet.values.values())
        self.quiet_count += len(quiet.passes)
        self._first_ops.update(quiet.kinds)
        self._marks.extend([self.n_events] * opened)  # each opens here, the event in the last of them
        quiet.passes = []
        quiet.kinds = set()
        self.pass_events = 0
        self.emit(event)
