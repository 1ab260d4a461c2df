"""Child side of a run (inside the forked, rlimited process): run the program under the recorder
and ship the raw capture to the worker in pieces.

Messages sent on ``out`` (a ``multiprocessing`` connection; ``app.runner.protocol``):
``Events`` as passes settle (a stream: at least every BATCH_SECONDS), ``Stdout`` batched, ``Figure`` as each figure
is shown (after the text printed before it), and last ``End`` (the whole stdout, error, variables, figures).
A ``step_stats`` event (loss, parameter and gradient L2 norms over the leaves this backward
reached) follows every ``backward_end``; it is computed here from the real arrays.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections import deque

import numpy as np

from app.runner.light import LIGHT, SUMMARY_COST, VALUE_COST, bare, event_cost, light_event, lighten, value_cost
from app.runner.protocol import End, Events, Figure, Stdout
from app.runner.quiet import QUIET_CPU_SHARE, PassForecast, QuietPasses, QuietRecording, scalar_loss, step_stats
from app.runner.unread import gone, light_unread, reached
from app.trace.policy import RunPolicy
from engine.autograd import STATE
from engine.recorder import Recorder
from engine.tensor_core import Tensor
from engine.trace_events import (
    BACKWARD_STEP,
    FORGET,
    INPLACE,
    NAME,
    OP,
    QUIET,
    STEP_STATS,
    TENSOR,
    VALUE_FIELDS,
    clip_text,
    opens_pass,
)
from engine.trace_export import (
    OP_GRAD_FN,
    OP_ID,
    OP_NAME,
    OP_OUTPUT,
    OUT_VALUE,
    encode_value,
    export_values,
    op_event,
    op_tensor,
    summarize,
)

FLUSH_EVENTS = 2_000
FLUSH_SECONDS = 0.05
BATCH_SECONDS = 0.25  # a stream ships what it has at least this often
SETTLED_EVERY = 511  # a non-streaming run ships the events of settled passes every 512 events
FORGET_AFTER = 3  # the ids a pass recorded are checked this many passes after it (most are gone by then)
SURVIVORS_CHECKED = 256  # ids still reachable are checked again once this many (then twice as many) wait
# the collector's first-generation threshold while a run records: the events held until shipped (and the engine's
# tensors) are acyclic and freed by reference counting; at Python's 700 the young-generation passes over them cost
# 7-14% of a recorded run (polynomial_tensor 2.02 -> 1.74 s, bigram 3.33 -> 3.04 s). Cycles a program makes are still
# collected, every YOUNG_GC_THRESHOLD allocations instead of 700 (a bounded delay, not a leak)
YOUNG_GC_THRESHOLD = 10_000
DEAD_IDS_KEPT = 1 << 17  # ids of `StreamingRecorder._dead` at most (then forgotten: less is left out, nothing wrong)


class StreamingRecorder(QuietRecording, Recorder):
    """Ships events in batches, with the passes no one will see kept light.

    Events of passes the run's ``policy`` (``app.trace.policy.RunPolicy``, the trace builder's too) can no longer keep
    in full are sent light, which skips encoding their values, and without what died with them. Non-streaming runs send
    the settled passes every 512 events, everything every ``batch`` events and at the end; a stream also sends its
    settled passes at each backward's end and what it holds once it held it ``BATCH_SECONDS``. Passes are counted like
    the trace builder does (``engine.trace_events.opens_pass``). Shipped events are dropped here, so a run holds at most
    one batch.

    ``value_budget`` bounds the values shipped (estimated JSON bytes of the values of passes that may
    be drawn, and of tensors created; None: no bound): past it every event goes light and new
    tensors come without values above one element, and ``reasons`` says so. The new values of tensors and gradients
    (``STATE_KINDS``) still come, light: later passes draw them, and the trace builder keeps only
    the ones it may draw.
    """

    # events that change nothing the builder answers are left out (``_export_batch``: past max_pass_nodes, the first
    # pass's ops no pass can draw; in passes sent light, a name a tensor already has and all but the first step of
    # each backward); False ships them all, as the reference of tests/app/test_pruned_first_pass.py
    leave_out_unread = True
    quiet_ship_s = FLUSH_SECONDS  # a stream ships the passes that run quietly this often: the loss curve follows

    def __init__(self, send, *, policy: RunPolicy, stream: bool = True, batch: int = 20_000,
                 value_budget: int | None = None, max_pass_nodes: int | None = None, quiet_passes: bool = False,
                 quiet_cpu_s: float | None = None, **kw):
        super().__init__(**kw)
        # middle passes of a long loop may run quietly (app/runner/quiet.py), while the run has used less CPU time than
        # quiet_cpu_s (None: any): one stopped by its time limit then has its last passes recorded
        self._quiet_enabled = quiet_passes
        self._quiet_until = None if quiet_cpu_s is None else time.process_time() + quiet_cpu_s
        self._quiet: QuietPasses | None = None
        self._forecast = PassForecast()
        self._loop_probe = None  # the interpreter's `loop_forecast` (watch_loops), or None
        self._backwards = 0  # backwards ended so far
        self.quiet_count = 0  # passes that ran quietly
        self.quiet_reason: str | None = None  # a pass recorded after them walked graphs they made
        # graph nodes of the pass running, counted as the trace builder counts them, up to event number _nodes_counted;
        # past max_pass_nodes it draws no graph of it, and the rest of it may run quietly too
        self._pass_nodes = 0
        self._nodes_counted = 0
        self._counting = True  # until this pass's backward ends (its update phase draws no nodes)
        self._node_samples: list[tuple] = []  # (loop node, iterations begun, nodes): how fast the loop adds nodes
        self._in_backward = False
        # the trace builder draws no graph of a pass with more graph nodes than this (None: not known here)
        self._max_pass_nodes = max_pass_nodes
        self._first_nodes = 0  # graph nodes of the first pass shipped while no backward has run
        # the name each tensor was last shipped with (until a `forget` of it ships), and the ops shipped by kind while
        # no backward has run: `_export_batch` leaves out what the builder would only repeat
        self._shipped_names: dict[str, str] = {}
        self._first_ops: set[str] = set()
        # ids whose tensor and graph node the program dropped (the `forget` lists): in a pass sent light, an op or
        # tensor among them that no event kept names changes nothing the builder answers (`_light_unread`)
        self._dead: set[str] = set()
        self._light_backward: str | None = None  # the backward whose first step, in a pass sent light, has gone
        self._send = send
        self._stream = stream
        self._policy = policy
        self._batch = batch if not stream else FLUSH_EVENTS
        self._marks: list[int] = []  # event number (counted over the run) where pass 1, 2, ... start
        self._mark_idx = 0  # passes opened before the next event to ship
        self._base = 0  # event number of captured[0]
        self._after_bw = False
        self._value_budget = value_budget
        self._value_bytes = 0  # estimated JSON bytes of the values shipped (that the builder keeps)
        self._pass_cost: dict[int, int] = {}  # ... of each pass's values (given back when it cannot be drawn)
        self.budget_reason: str | None = None
        self._leaves: dict[int, object] = {}
        self._loss: float | None = None
        self._stdout: list[str] = []
        self._stdout_bytes = 0
        self._last_flush = self._full_flush = time.monotonic()  # the last ship of anything / of everything held
        self._born = []  # the ids recorded in the current pass (Recorder._born): tracked, so that
        self._aging: deque[tuple[int, list]] = deque()  # ... the builder forgets them once no event can name them
        self._survivors: list = []  # (id, reference): still reachable when checked
        self._survivors_checked = SURVIVORS_CHECKED
        self._gc_threshold = gc.get_threshold()  # the collector's thresholds before the run (restored after it)

    def __enter__(self):
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(max(self._gc_threshold[0], YOUNG_GC_THRESHOLD), *self._gc_threshold[1:])
        return super().__enter__()

    def __exit__(self, *exc):
        gc.set_threshold(*self._gc_threshold)
        return super().__exit__(*exc)

    @property
    def reasons(self) -> list[str]:
        return [r for r in (self.budget_reason, self.quiet_reason) if r]

    # ---- shipping ----
    def flush(self, final: bool = False) -> None:
        """Ship the stdout printed and every event captured (the passes that may still be in the tail in full)."""
        if final and self._quiet is not None:  # the run ended while passes ran quietly (a forecast that failed)
            self.wake()
        if self._stdout:
            self._send(Stdout("".join(self._stdout)))
            self._stdout.clear()
        if self.captured:
            self._send(Events(self._export_batch(len(self.captured))))
        self._last_flush = self._full_flush = time.monotonic()

    def _ship_settled(self) -> None:
        """Ship the captured events whose pass is settled: kept in full from the start, or no longer able to
        end in the tail (then light). The others wait (at most ``batch`` events): shipped now, a pass that
        turns out to be a middle one would go in full, and its events would live on here until the next
        batch, every one of them a dict the garbage collector walks again and again."""
        k = self._settled()
        if k:
            self._send(Events(self._export_batch(k)))
            self._last_flush = time.monotonic()

    def _settled(self) -> int:
        """How many of the captured events, from the first, are in settled passes (``_ship_settled``)."""
        marks, policy = self._marks, self._policy
        current = len(marks)  # the pass the next event goes to
        first = max(policy.tail_from(current + 1), 0)  # the first pass that may still end in the tail
        while first <= current and policy.kept_from_start(first):
            first += 1
        if first > current:
            return len(self.captured)
        return max(0, (marks[first - 1] if first else 0) - self._base)

    def _export_batch(self, count: int) -> list[dict]:
        """The first ``count`` captured events JSON-ready, each full or light by its pass (and the value budget),
        then dropped. Equal to splitting every event and shipping each piece through ``_piece``; the pieces
        that carry no value (most of a run: ops and their light output tensors) take a short way."""
        captured, marks, policy, limit = self.captured, self._marks, self._policy, self.value_limit
        raw = captured if count == len(captured) else captured[:count]
        full_from = policy.tail_from(len(marks) + 1)  # passes from here on may still be in the tail
        budget = self._value_budget
        out: list[dict] = []
        append = out.append
        idx = self._mark_idx
        n_marks = len(marks)
        next_mark = marks[idx] if idx < n_marks else None
        full = idx >= full_from or policy.kept_from_start(idx)
        nodes = self._first_nodes  # graph nodes of the first pass before this batch (while no backward has run)
        reached = self._reached_outputs(raw)
        unread, superseded = self._light_unread(count) if self.leave_out_unread else (None, None)
        # past max_pass_nodes the builder has folded the first pass (no graph, no frames): an op whose output no
        # pass can draw, and a name it already has, change nothing it answers, so they are left out
        leave_out = self.leave_out_unread
        prune = reached is not None and leave_out
        node_limit = self._max_pass_nodes
        shipped_names, first_ops = self._shipped_names, self._first_ops
        pruned: set[str] = set()
        # the last in-place write of each tensor in this batch (its position), while the first pass may fold
        last_write = {e["tensor"]: j for j, e in enumerate(raw, self._base)
                      if type(e) is dict and e["kind"] == INPLACE} if prune else None
        pass_cost = self._pass_cost
        kept = policy.kept_from_start(idx)
        i = self._base
        for e in raw:
            if next_mark is not None and next_mark <= i:
                while idx < n_marks and marks[idx] <= i:
                    idx += 1
                next_mark = marks[idx] if idx < n_marks else None
                kept = policy.kept_from_start(idx)
                full = idx >= full_from or kept
            i += 1
            if type(e) is tuple:  # an op record (engine/trace_export.py OP_*): its output's tensor event, then it
                if unread is not None and e[OP_ID] in unread:
                    continue  # in a pass sent light, gone with its output: no event the builder keeps names them
                if prune:
                    new_output = len(e) > OUT_VALUE
                    folded = nodes > node_limit
                    nodes += 2 if new_output else 1
                    if folded and new_output and e[OP_OUTPUT] not in reached and e[OP_NAME] in first_ops:
                        self._count_left_out(e, full, kept, idx)
                        pruned.add(e[OP_OUTPUT])
                        continue
                    first_ops.add(e[OP_NAME])  # an op of each kind goes: the answer's op table lists those used
                if len(e) > OUT_VALUE:
                    v = e[OUT_VALUE]
                    if budget is not None and self._value_bytes > budget:
                        append(self._piece(op_tensor(e, v), full, idx))  # past the value budget: bare
                    elif full:
                        # the output's value in full, counted against the value budget
                        tv = type(v)
                        if tv is np.ndarray:
                            size = v.size
                            cost = size * VALUE_COST if size <= limit else SUMMARY_COST
                            # a value no pass can draw is left out (counted all the same: the budget is unchanged)
                            v = encode_value(v, limit) if reached is None or e[OP_OUTPUT] in reached else None
                        elif tv is dict:  # a summary taken at capture: JSON-ready
                            cost = SUMMARY_COST
                            if reached is not None and e[OP_OUTPUT] not in reached:
                                v = None
                        else:  # a number
                            cost = 0
                        if cost and budget is not None:
                            self._value_bytes += cost
                            if not kept:  # dropped once its pass cannot be drawn
                                pass_cost[idx] = pass_cost.get(idx, 0) + cost
                        append(op_tensor(e, v))
                    elif type(v) is np.ndarray:  # light: an output tensor of a summary pass keeps a scalar only
                        append(op_tensor(e, encode_value(v, limit) if v.size <= 1 else None))
                    else:  # light: a number, or a summary taken at capture (JSON-ready)
                        append(op_tensor(e, v))
                if budget is not None and self.budget_reason is None and self._value_bytes > budget:
                    self._over_budget()
                first_ops.add(e[OP_NAME])
                append(op_event(e))
                continue
            kind = e["kind"]
            if superseded and i - 1 in superseded:
                continue  # in a pass sent light: a value or gradient a later one replaces, or a grad mode's frame
            if unread is not None and kind == TENSOR and e["id"] in unread:
                v = e["value"]  # a leaf's value counts against the budget as if it had gone light (`_piece`)
                if budget is not None and e["origin"] != "op" and type(v) is np.ndarray and self._value_bytes <= budget:
                    self._value_bytes += v.size * VALUE_COST if v.size <= limit else SUMMARY_COST
                if budget is not None and self.budget_reason is None and self._value_bytes > budget:
                    self._over_budget()
                continue
            if kind == NAME and leave_out:
                if budget is not None and self.budget_reason is None and self._value_bytes > budget:
                    self._over_budget()
                tensor = e["tensor"]
                if shipped_names.get(tensor) == e["name"]:
                    # the name it has: only a frame of its pass would show it, and a light or folded pass has none
                    if not full or prune and nodes > node_limit:
                        continue
                elif prune and nodes > node_limit and tensor in pruned or unread is not None and tensor in unread:
                    continue  # a tensor left out
                shipped_names[tensor] = e["name"]
                append(e)
                continue
            if kind == FORGET and shipped_names:
                for x in e["ids"]:  # the builder forgets their names: a name given again goes again
                    shipped_names.pop(x, None)
            if prune and nodes > node_limit:  # the first pass is folded: what no pass can draw is left out
                if kind == TENSOR and e["origin"] == "const" and e["id"] not in reached:
                    nodes += 1
                    continue  # a number: only the op that took it (left out) names it
                if kind == INPLACE and (e["tensor"] in pruned or last_write[e["tensor"]] != i - 1):
                    # a tensor left out, or a value a later write in this batch replaces: only the last one is drawn
                    # (by a later pass). Counted against the value budget all the same: it runs out where it did
                    if budget is not None and self._value_bytes <= budget:
                        self._value_bytes += event_cost(e, limit)
                    if budget is not None and self.budget_reason is None and self._value_bytes > budget:
                        self._over_budget()
                    continue
            if prune and (kind == OP or kind == TENSOR):
                nodes += 1
            if kind == TENSOR and (budget is None or self._value_bytes <= budget):
                # `_piece`, inline, for the tensors the program made outside an op (leaves, gradients, numbers)
                v = e["value"]
                tv = type(v)
                if tv is np.ndarray:
                    size = v.size
                    if full:
                        if budget is not None and size:
                            cost = size * VALUE_COST if size <= limit else SUMMARY_COST
                            self._value_bytes += cost
                            if not kept and e["origin"] == "op":  # new leaves are kept all run long
                                pass_cost[idx] = pass_cost.get(idx, 0) + cost
                        append({**e, "value": encode_value(v, limit)})
                    else:
                        op_made = e["origin"] == "op"
                        if budget is not None and not op_made:  # leaf values stay all run long: counted
                            self._value_bytes += size * VALUE_COST if size <= limit else SUMMARY_COST
                        append({**e, "value": None if size > 1 and op_made else encode_value(v, limit)})
                    continue
                if tv is not dict and tv is not list:  # a number (or null): JSON-ready, costs nothing
                    append(e)
                    continue
            if kind == BACKWARD_STEP and not full and leave_out:
                # a step of a pass sent light makes only frames no one sees; the first of each backward goes, so the
                # builder knows the backward walked (else it would look for the graph a failed one tried to walk)
                if e["id"] == self._light_backward:
                    if budget is not None and self.budget_reason is None and self._value_bytes > budget:
                        self._over_budget()
                    continue
                self._light_backward = e["id"]
            if kind in VALUE_FIELDS:
                if full or budget is not None and (self._value_bytes > budget or kind == TENSOR):
                    append(self._piece(e, full, idx))
                else:  # light, within the budget (and nothing to count)
                    append(LIGHT[kind](e, limit))
                continue
            if budget is not None and self.budget_reason is None and self._value_bytes > budget:
                self._over_budget()
            append(e)  # no value: the same event full, light or past the budget
        self._mark_idx = idx
        self._base = i
        del captured[:count]  # shipped: the worker holds them now
        return out

    def _light_unread(self, count: int) -> tuple[set[str] | None, set[int] | None]:
        """``app.runner.unread.light_unread`` of the first ``count`` captured events."""
        return light_unread(self.captured, count, marks=self._marks, policy=self._policy, dead=self._dead,
                            known=self._first_ops, base=self._base, first_pass=self._mark_idx)

    def _count_left_out(self, r: tuple, full: bool, kept: bool, idx: int) -> None:
        """An op record left out (``_export_batch``): its output's value counted against the value budget as if it
        had gone, so that the budget runs out where it did."""
        budget = self._value_budget
        if budget is not None and full and self._value_bytes <= budget:
            v = r[OUT_VALUE]
            cost = ((v.size * VALUE_COST if v.size <= self.value_limit else SUMMARY_COST) if type(v) is np.ndarray
                    else SUMMARY_COST if type(v) is dict else 0)
            self._value_bytes += cost
            if cost and not kept:
                self._pass_cost[idx] = self._pass_cost.get(idx, 0) + cost
        if budget is not None and self.budget_reason is None and self._value_bytes > budget:
            self._over_budget()

    def _reached_outputs(self, raw: list[dict]) -> set[str] | None:
        """None, or the op outputs whose values must be shipped (``_reached``) when the others no pass draws.

        While no backward has run, every captured event is in the first pass's forward phase. Once that pass's
        events shipped and in ``raw`` hold more graph nodes than the trace builder draws in one pass
        (``max_pass_nodes``; it counts each ``tensor`` and ``op`` event, and an op's inline output as a ``tensor``),
        the builder draws no graph of it: its op outputs' values are drawn only by a later pass's graph, which
        reaches them through the tensors and graph nodes that outlive the pass."""
        limit = self._max_pass_nodes
        if limit is None or self._backward is not None:
            return None
        if self._first_nodes <= limit:
            n = self._first_nodes
            for e in raw:
                if type(e) is tuple:  # an op record, with its new output or not
                    n += 2 if len(e) > OUT_VALUE else 1
                else:
                    kind = e["kind"]
                    if kind == OP or kind == TENSOR:
                        n += 1
            self._first_nodes = n
            if n <= limit:
                return None
        return reached(self.captured, self._aliases)

    def _over_budget(self) -> None:
        budget = self._value_budget
        self.budget_reason = f"values past the first {budget:,} bytes were left out (limit max_answer_bytes = {budget:,})"

    def _piece(self, piece: dict, full: bool, idx: int) -> dict:
        """One captured event (an op's output tensor split off) JSON-ready, in pass ``idx``: past the value
        budget bare, in a pass not kept in full light, else whole; its values counted against the budget."""
        limit, budget = self.value_limit, self._value_budget
        kind = piece["kind"]
        if budget is not None and self._value_bytes > budget:
            if self.budget_reason is None:
                self._over_budget()
            piece = lighten(piece)
            if kind == TENSOR:
                piece = bare(piece)
            return export_values(piece, limit)
        if not full:
            if budget is not None and kind == TENSOR and piece.get("origin") != "op":
                self._value_bytes += event_cost(piece, limit)  # leaf values stay all run long
            return light_event(piece, limit)
        if budget is not None:
            if kind == TENSOR:
                v = piece["value"]
                cost = ((v.size * VALUE_COST if v.size <= limit else SUMMARY_COST) if type(v) is np.ndarray
                        else SUMMARY_COST if type(v) is dict else 0)
            else:
                cost = event_cost(piece, limit)
            if cost:
                self._value_bytes += cost
                # all but new leaves (kept all run long) are dropped or compacted once it cannot be drawn
                policy = self._policy
                if not policy.kept_from_start(idx) and (kind != TENSOR or piece["origin"] == "op"):
                    self._pass_cost[idx] = self._pass_cost.get(idx, 0) + cost
        return export_values(piece, limit)

    def emit(self, event):
        if self._quiet is not None and STATE.recorder is self._quiet and (type(event) is not dict
                                                                          or event["kind"] != QUIET):
            return  # a hook the engine kept from before the passes went quiet: they record nothing
        # an op record (a tuple) opens a pass when it records a graph (`opens_pass` of its `op` event)
        if self._after_bw and (event[OP_GRAD_FN] is not None if type(event) is tuple else opens_pass(event)):
            self._open_pass(event)
            return
        pass_events = self.pass_events
        if pass_events >= self.max_events:  # Recorder.emit, inlined: this runs once per event
            self.too_many_events()
        self.pass_events = pass_events + 1
        self.n_events += 1
        captured = self.captured
        captured.append(event)
        n = len(captured)
        if n & SETTLED_EVERY and n < self._batch:  # most events: nothing to ship yet
            return
        self._ship_some(n)

    def _open_pass(self, event) -> None:
        """``emit`` of the event that opens the next pass after a backward: the pass is marked, and the ids no later
        event can name go right after it (``forget``)."""
        self._marks.append(self.n_events)
        self._after_bw = False
        self._pass_nodes, self._nodes_counted, self._counting = 0, self.n_events, True
        self._node_samples.clear()
        # the pass now out of the last ones cannot be drawn: the builder drops its values
        self._value_bytes -= self._pass_cost.pop(self._policy.tail_from(len(self._marks) + 1) - 1, 0)
        forget = self._unreachable()
        if forget and self.leave_out_unread:
            dead = self._dead
            if len(dead) > DEAD_IDS_KEPT:  # ids born in passes sent full: never looked up (a bound, not a leak)
                dead.clear()
            dead.update(forget)
        if self.pass_events >= self.max_events:
            self.too_many_events()
        self.pass_events += 1
        self.n_events += 1
        captured = self.captured
        captured.append(event)
        if forget:  # after the event that opened the pass: the builder takes it with what that pass holds
            self.pass_events += 1
            self.n_events += 1
            captured.append({"kind": FORGET, "ids": forget})
        self._ship_some(len(captured))

    def _ship_some(self, n: int) -> None:
        """After an event is captured (``n`` held): a full batch is shipped; every 512 events, the settled passes
        (or, streaming, what is held once BATCH_SECONDS passed)."""
        if self._counting and self._quiet_enabled and self._max_pass_nodes is not None:
            self._count_nodes()
        if n >= self._batch:
            self.flush()
        elif n & SETTLED_EVERY:
            return
        elif not self._stream:
            self._ship_settled()  # so a run stopped at its time limit has little left to send, too
        else:
            self._stream_ship()

    def _stream_ship(self) -> None:
        """A stream ships its stdout and its settled passes now, and what it holds once it held it BATCH_SECONDS: a
        fast loop's middle passes wait to be settled (then go light), a slow one's go in full, so the page's loss
        curve is never more than that behind."""
        if self.captured and time.monotonic() - self._full_flush > BATCH_SECONDS:
            self.flush()
            return
        if self._stdout:
            self._send(Stdout("".join(self._stdout)))
            self._stdout.clear()
            self._last_flush = time.monotonic()
        self._ship_settled()

    def _unreachable(self) -> list[str]:
        """As pass ``len(self._marks)`` opens: the ids recorded ``FORGET_AFTER`` passes before (and earlier ones
        still reachable then) whose tensors and graph nodes the program dropped, so that no later event can name
        them. The trace builder forgets them (unless a pass it may draw shows them): its memory follows what the
        program holds and the passes it may draw, not the run's length. Passes kept from the start are the
        builder's to keep: not tracked."""
        opened = len(self._marks)
        aging = self._aging
        aging.append((opened - 1, self._born))
        self._born = []
        out: list[str] = []
        survivors = self._survivors
        aliases = self._aliases
        while aging and aging[0][0] <= opened - FORGET_AFTER:
            index, born = aging.popleft()
            if self._policy.kept_from_start(index):
                continue
            for entry in born:
                ref = entry[1]
                if (ref is None or ref() is None) and (not aliases or gone(entry[0], aliases)):
                    out.append(entry[0])
                else:
                    survivors.append(entry)
        if len(survivors) >= self._survivors_checked:
            kept = []
            for entry in survivors:
                if entry[1]() is None and (not aliases or gone(entry[0], aliases)):
                    out.append(entry[0])
                else:
                    kept.append(entry)
            self._survivors = kept
            self._survivors_checked = max(SURVIVORS_CHECKED, 2 * len(kept))
        return out

    @property
    def events(self) -> list[dict]:
        raise AttributeError("a StreamingRecorder ships its events as it goes; read what it sent")

    def on_figure(self, figure: dict) -> None:
        """A figure shown (plt.show): the text printed before it goes first, so a stream keeps their order."""
        if not self._stream:
            return  # the figures go with "end"
        if self._stdout:
            self._send(Stdout("".join(self._stdout)))
            self._stdout.clear()
        self._send(Figure(figure))

    def on_print(self, text: str) -> None:
        if not self._stream:
            return  # the whole stdout goes with "end"
        self._stdout.append(text)
        if time.monotonic() - self._last_flush > FLUSH_SECONDS:
            self._stream_ship()

    # ---- per-step statistics ----
    def on_backward_begin(self, root, g, retain):
        self._in_backward = True
        self._leaves = {}
        self._loss = scalar_loss(root)
        super().on_backward_begin(root, g, retain)

    def on_accumulate(self, t, g, before):
        self._leaves[id(t)] = t
        super().on_accumulate(t, g, before)

    def _stats(self) -> None:
        self.emit({"kind": STEP_STATS, **step_stats(self._leaves.values(), self._loss)})
        self._leaves = {}

    def on_backward_end(self, retain):
        self._in_backward = self._counting = False
        super().on_backward_end(retain)
        self._after_bw = True  # what follows is the update phase, until an event opens the next pass
        self._stats()
        self._backwards += 1
        if self._stream and time.monotonic() - self._last_flush > FLUSH_SECONDS:  # a few passes per batch
            self._stream_ship()
        if self._loop_probe is not None and self._quiet_enabled:
            self._consider_quiet()

    def on_backward_error(self, root, error):
        self._in_backward = self._counting = False
        super().on_backward_error(root, error)
        self._after_bw = True
        self._stats()
        if self._stream:
            self.flush()


def tensor_info(t, limit: int, summary: bool = False) -> dict:
    """A variable's entry; with ``summary``, its value and grad as summaries whatever their size."""
    grad = t._grad
    gf = t._grad_fn
    enc = (lambda a: summarize(a) if a.size else encode_value(a, limit)) if summary else (lambda a: encode_value(a, limit))
    return {
        "shape": [int(s) for s in np.shape(t._data)],
        "dtype": str(t.dtype).replace("torch.", ""),
        "value": enc(np.asarray(t._data)),
        "grad": None if grad is None else enc(np.asarray(grad._data)),
        "requires_grad": bool(t._requires_grad),
        "is_leaf": gf is None,
        "grad_fn": None if gf is None else type(gf).__name__,
    }


def extract_variables(top: dict, limit: int, budget: int | None = None, max_path_chars: int | None = None,
                      reasons: list | None = None) -> dict:
    """Every top-level tensor, and every named parameter of every top-level module (prefixed).
    Past ``budget`` estimated bytes of values, the rest are sent as summaries; a parameter's path
    is cut to ``max_path_chars`` (in the middle; ``#2``… after one that would read the same)."""
    from engine.nn import Module

    out: dict[str, dict] = {}
    cost = 0

    def add(name, t):
        nonlocal cost
        name = clip_text(name, max_path_chars, keep_end=True)
        if name in out:
            name = next(f"{name}#{k}" for k in itertools.count(2) if f"{name}#{k}" not in out)
        size = value_cost(np.asarray(t._data), limit) + (value_cost(np.asarray(t._grad._data), limit)
                                                          if t._grad is not None else 0)
        over = budget is not None and cost + size > budget  # decided before encoding: never a list to drop
        out[name] = info = tensor_info(t, limit, summary=over)
        cost += 200 + (SUMMARY_COST * 2 if over else size)
        if over:
            summarised.append(name)
        return info

    summarised: list[str] = []

    for name, obj in top.items():
        try:
            if isinstance(obj, Tensor):
                add(name, obj)
            elif isinstance(obj, Module):
                for pname, p in obj.named_parameters(prefix=name):
                    add(pname, p)
        except Exception:  # noqa: BLE001 - a broken user object is skipped, not fatal
            continue
    if summarised and reasons is not None:
        reasons.append(f"{len(summarised):,} of {len(out):,} variables sent as summaries (from {summarised[0]}: "
                       f"their share of limit max_answer_bytes is {budget:,} bytes)")
    return out


def run_capture(source: str, limits, value_limit: int, max_events: int, send, *, policy: RunPolicy,
                stream: bool = True, max_string_chars: int | None = None, max_path_chars: int | None = None,
                value_budget: int | None = None, values: str = "full", max_pass_nodes: int | None = None,
                quiet_passes: bool = False) -> None:
    """Run ``source`` and ship everything through ``send``; never raises. ``policy`` says which passes are kept
    in full. The budgets (None: none) come from the settings: max_string_chars, max_path_chars, and
    ``value_budget`` (max_answer_bytes) for the values shipped and, apart, for the variables; ``values`` is the
    request's ("full" or "summary"); ``max_pass_nodes`` the trace builder's node limit of a drawn pass (the values
    of a bigger first pass that no pass can draw are left out: ``StreamingRecorder._reached_outputs``); with
    ``quiet_passes``, middle passes of a long loop run quietly (app/runner/quiet.py) until the run has used
    QUIET_CPU_SHARE of its time limit."""
    import engine
    from sandbox import backend_for, run_program

    rec = StreamingRecorder(send, policy=policy, stream=stream, value_limit=value_limit,
                            max_events=max_events, max_string_chars=max_string_chars, max_path_chars=max_path_chars,
                            value_budget=value_budget, max_pass_nodes=max_pass_nodes, quiet_passes=quiet_passes,
                            quiet_cpu_s=float(limits.time_limit_s) * QUIET_CPU_SHARE)
    error = None
    variables: dict = {}
    cut_reasons: list[str] = []
    stdout = ""
    figures: list = []
    try:
        outcome = run_program(source, limits, backend_for(engine), recorder=rec, on_print=rec.on_print,
                              on_figure=rec.on_figure)
        stdout, error, figures = outcome.stdout, outcome.error, outcome.figures
        if outcome.output_cut:  # too much printed: cut, not fatal, and the answer says so
            cut_reasons.append(outcome.output_cut)
        try:
            rec.name_modules(outcome.globals)
        except Exception:  # noqa: BLE001
            pass
        # complete values and gradients (docs/trace.md §2): every element of every tensor the limits allow, up
        # to half the answer budget; or, when the client asks (`values: "summary"`: the page), summaries past
        # value_limit elements
        full = values != "summary"
        variables = extract_variables(outcome.globals, limits.max_tensor_elements if full else value_limit,
                                      None if value_budget is None else value_budget // 2, max_path_chars,
                                      reasons=cut_reasons)
    except MemoryError:
        error = {"type": "MemoryError", "message": "the program ran out of memory", "line": None, "column": None}
    except Exception:  # noqa: BLE001 - an engine bug must not leak a traceback
        error = {"type": "InternalError", "message": "the run failed inside flowgrad", "line": None, "column": None}
    rec._stdout.clear()  # the whole stdout goes with "end"
    try:
        rec.flush(final=True)
    except Exception:  # noqa: BLE001
        pass
    send(End(stdout, error, variables, figures, bool(cut_reasons), rec.reasons + cut_reasons))
