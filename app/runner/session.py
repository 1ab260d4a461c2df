"""One run seen from its worker (``app.runner.worker``): the trace built from what the run process sends,
the stream's pieces counted against the answer budget, then the answer and a folded run's group payloads.

Everything here runs in the worker process; the messages it sends are ``app.runner.protocol``'s.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections.abc import Callable

import orjson

from app.core.answer import EVENT_SEPARATOR, run_answer, stamp_timing, stopped_reason
from app.core.config import Settings
from app.core.problems import problem
from app.layout import LayoutEngine
from app.runner.protocol import (
    Done,
    End,
    Events,
    Figure,
    Piece,
    RunOptions,
    RunPending,
    RunStored,
    Stdout,
)
from app.trace.budget import clip_error, fit_answer, fold_pass
from app.trace.build import FoldOptions, TraceBuilder
from app.trace.policy import RunPolicy
from app.trace.values import clean
from engine.trace_events import clip_text, json_number

REASON_CHARS = 1_500  # truncated_reason is cut here (fit_answer keeps room for it)
PAYLOAD_TIME_FACTOR = 3  # a folded run's group payloads may take this many hard_kill_s of CPU time (then: none)
SSE_FRAMING = 32  # bytes the stream adds around each piece ("event: pass\ndata: ...\n\n")
PROGRESS_S = 0.2  # a stream's sign of life in a long pass at most this often
MAX_SAFE_ITEMS = 1_000_000  # items json_safe walks before it stops copying (shared lists repeat)
MAX_SAFE_DEPTH = 200
_INT64 = 1 << 63


def _type_name(x) -> str:
    """What leaves a run in place of a value that is not plain JSON data: its type's name (bounded),
    never its ``str()`` (a real address, an internal module name, or gigabytes built in C)."""
    return f"<{type(x).__name__[:100]}>"


def json_safe(x):
    """The answer as strict JSON data, when orjson refused it (a lone surrogate, a key that is not a
    string, an integer beyond 64 bits, an object that should never have got here): strings, numbers,
    bools, None, lists and dicts of those, at most MAX_SAFE_ITEMS items and MAX_SAFE_DEPTH levels; anything
    else as its type's name. Never calls ``str()`` or ``repr()`` on what it does not know."""
    budget = [MAX_SAFE_ITEMS]

    def key(k):
        if type(k) is str:
            return k.encode("utf-8", "replace").decode("utf-8")
        if type(k) in (int, float, bool) or k is None:
            return str(json_number(k)) if type(k) is not int or -_INT64 <= k < _INT64 else "<int>"
        return _type_name(k)

    def walk(v, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_SAFE_DEPTH:
            return "…"
        t = type(v)
        if t is str:
            return v.encode("utf-8", "replace").decode("utf-8")
        if v is None or t is bool:
            return v
        if t is int:
            return v if -_INT64 <= v < _INT64 else json_number(float(v)) if v.bit_length() < 1024 else \
                ("inf" if v > 0 else "-inf")
        if t is float:
            return json_number(v)
        if t is dict:
            return {key(k): walk(val, depth + 1) for k, val in v.items()}
        if t is list or t is tuple:
            return [walk(val, depth + 1) for val in v]
        return _type_name(v)

    return walk(x, 0)


def encode(obj: dict) -> bytes:
    try:
        return orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(json_safe(obj))  # e.g. a lone surrogate in a message


def figures_of(figures) -> list[dict]:
    """The run's plots as the answer carries them (docs/trace.md): SVG text and the count of characters
    printed before each; anything else the run process sent is dropped."""
    if type(figures) is not list:
        return []
    return [{"svg": f["svg"], "at": f["at"]} for f in figures
            if type(f) is dict and type(f.get("svg")) is str and type(f.get("at")) is int]


class AnswerBudget:
    """What one run's answer has used of ``max_answer_bytes``: the stream's pieces are counted as they
    go; a full pass gets its share of what is left (``pass_cap``); ``reserve`` is kept for ``done``."""

    def __init__(self, budget: int):
        self.budget = budget
        self.reserve = budget // 4
        self.sent = 0
        self.drawn = 0  # passes with a graph sent
        self.reasons: list[str] = []

    def left(self) -> int:
        return self.budget - self.sent

    def pass_cap(self, shares: int) -> int:
        return max(0, (self.budget - self.reserve - self.sent) // max(1, shares))

    def allows_small(self, n: int) -> bool:
        """A small piece (step, summary pass, progress, stdout) goes while it leaves the reserve."""
        return self.sent + n + SSE_FRAMING <= self.budget - self.reserve


class RunSession:
    """A run's trace, built as the run process's messages arrive (``receive``), and its answer (``finish``).

    Streaming, every piece goes to the server at once (``send``), counted against the answer budget.
    ``started`` is when the worker took the run, ``sent`` when the run process had the program."""

    def __init__(self, job_id: int, source: str, options: RunOptions, settings: Settings,
                 layout: LayoutEngine, op_table: dict, send: Callable[[object], None], *, started: float,
                 sent: float):
        s = self.settings = settings
        self.job_id = job_id
        self.layout = layout
        self.stream = options.stream
        self.op_table = op_table
        self.send = send
        self.started = started
        self.t_sent = self.t_end = sent  # t_end: when the run process sent its End (else: as if at once)
        self.run_id = secrets.token_hex(16)  # the run store's key for this run's folded passes: unguessable
        self.budget = AnswerBudget(s.max_answer_bytes)
        self.builder = TraceBuilder(
            layout, policy=RunPolicy.from_settings(s, options.passes),
            on_pass=self._on_pass if self.stream else None,
            on_step=(lambda st: self.piece({"type": "step", **st})) if self.stream else None,
            max_nodes=s.max_drawn_nodes,
            fold=FoldOptions(s.fold_threshold, s.max_folded_nodes, s.fold_max_children, source, self.run_id,
                             cpu_budget_s=s.hard_kill_s),
            # no graph is drawn after this: the rest of the time goes to fitting and sending the answer
            deadline=started + s.answer_time_s - min(0.5, 0.15 * s.answer_time_s),
        )
        self.stdout_parts: list[str] = []
        self.n_events = 0
        self.last_progress = started
        self.build_error = False  # a builder bug costs the graph, not the run
        self.announced = False
        # the pieces made from one message of the run process go to the server as one Piece (a training loop's
        # batch makes a step and a pass piece per pass: ~45 for 20 SGD steps, each a message, a queue item and
        # an HTTP chunk on the server)
        self.held: list[bytes] = []

    # ------------------------------------------------------------------ while it runs
    def piece(self, obj: dict, small: bool = True, data: bytes | None = None) -> None:
        """A stream piece, counted against the answer budget; small ones only while they leave the
        reserve for ``done`` (which repeats the steps and the whole stdout)."""
        budget = self.budget
        data = encode(obj) if data is None else data
        if small and not budget.allows_small(len(data)):
            if not budget.reasons:
                budget.reasons.append(f"the stream's later {obj.get('type')} pieces were left out (limit "
                                      f"max_answer_bytes = {budget.budget:,}); steps and stdout are in done")
            return
        budget.sent += len(data) + SSE_FRAMING
        self.held.append(data)

    def send_held(self) -> None:
        """The pieces held so far, as one ``Piece`` (events separated by ``EVENT_SEPARATOR``)."""
        if self.held:
            self.send(Piece(self.job_id, EVENT_SEPARATOR.join(self.held)))
            self.held = []

    def announce(self) -> None:
        """A folded pass is about to go out: the server learns its run id first, so a group request that
        comes before the payloads are built waits for them instead of finding no run."""
        if not self.announced:
            self.announced = True
            self.send(RunPending(self.run_id))

    def _on_pass(self, pd: dict) -> None:
        graph = pd.get("graph")
        if graph is not None and graph.get("folded"):
            self.announce()
        if graph is None:
            self.piece({"type": "pass", "pass": pd})
            return
        budget, builder = self.budget, self.builder
        # the first graph may take half of what is left; the next ones share the rest; a folded pass is
        # already in its smallest form (its frames lazy) and may take all that is left
        shares = 2 if not budget.drawn and builder.emits_left > 1 else builder.emits_left
        if graph.get("folded"):
            shares = 1
        budget.drawn += 1
        cap = budget.pass_cap(shares) - SSE_FRAMING
        obj = {"type": "pass", "pass": pd}
        data = encode(obj)
        if len(data) > cap:  # over its share: folded (docs/trace.md §4)
            folded, _, how = fold_pass(pd, cap - 32)
            if how:
                builder.truncated = True
                builder.reasons.setdefault(f"pass {pd['index']}: {how}")
            obj, data = {"type": "pass", "pass": folded}, None
        self.piece(obj, small=False, data=data)

    def receive(self, msg) -> End | None:
        """One message of the run process; its ``End`` when it is the last. The pieces it made go at once."""
        try:
            return self._receive(msg)
        finally:
            self.send_held()

    def _receive(self, msg) -> End | None:
        match msg:
            case Events(events):
                if not self.build_error:
                    try:
                        self.builder.feed_all(events)
                    except Exception:  # noqa: BLE001 - a builder bug costs the graph, not the run
                        self.build_error = True
                self.n_events += len(events)
                if self.stream and time.monotonic() - self.last_progress > PROGRESS_S:
                    self.last_progress = time.monotonic()
                    self.piece({"type": "progress", "events": self.n_events, "ops": len(self.builder.ops),
                                "passes": self.builder.n_closed})
            case Stdout(text):
                self.stdout_parts.append(text)
                if self.stream:
                    self.piece({"type": "stdout", "text": text})
            case Figure(figure):
                if self.stream:  # in place among the stdout pieces; `done` still carries every figure
                    for f in figures_of([figure]):
                        self.piece({"type": "figure", **f})
            case End():
                self.t_end = time.monotonic()
                return msg
        return None

    # ------------------------------------------------------------------ the answer
    def finish(self, end: End | None, error: dict | None) -> bool:
        """Send the answer (``Done``); True when a folded run's group payloads are still to be built
        (``store_payloads``, which the worker runs in a limited child of its own). ``end`` is None when the run
        process did not finish; ``error`` then says why."""
        data = self._answer(end, error)
        if self.builder.folded_passes:
            self.announce()
        self.send_held()
        self.send(Done(self.job_id, data))
        return bool(self.builder.folded_passes)

    def store_payloads(self, send: Callable[[object], None], max_bytes: int, deadline: float | None = None) -> None:
        """Build the folded passes' group payloads and ``send`` them (``RunStored``) — in the worker's payload
        process, whose rlimits bound the time and memory; over ``max_bytes`` (their measured size, checked as
        each pass is built) or past ``deadline`` (``time.monotonic()``): none (the groups answer RunExpired, the run stands)."""
        try:
            payloads, used = {}, 0
            for index, folded in self.builder.folded_passes.items():
                payloads[index] = got = folded.payloads(deadline, max_bytes - used)
                used += got.nbytes()
        except Exception:  # noqa: BLE001 - too slow, too big, or a bug of ours
            payloads = None
        send(RunStored(self.run_id, payloads))

    def _answer(self, end: End | None, error: dict | None) -> bytes:
        s, builder, stream = self.settings, self.builder, self.stream
        try:
            builder.finish()
        except Exception:  # noqa: BLE001
            self.build_error = True
        stdout = end.stdout if end is not None else "".join(self.stdout_parts)
        if stream and end is not None:
            sent = "".join(self.stdout_parts)
            if stdout.startswith(sent) and len(stdout) > len(sent):
                self.piece({"type": "stdout", "text": stdout[len(sent):]})
        reasons: list[str] = []
        if end is not None:
            error = end.error
            variables = end.variables or {}
            figures = figures_of(end.figures)
            truncated = bool(end.truncated)
            reasons += [str(r) for r in end.reasons or []]
        else:
            variables, truncated, figures = {}, False, []
        if self.build_error:
            reasons.append("the trace could not be built past a point (a flowgrad bug)")
        parts = builder.result_parts()
        reasons += builder.reasons
        stopped = stopped_reason(error)  # a run stopped by a length limit: its answer is cut there, and says so
        if stopped is not None:
            reasons.insert(0, stopped)
        used = {k: self.op_table[k] for k in sorted(o for o in builder.ops_used if o in self.op_table)}
        trace = run_answer(stdout=stdout, error=clean(error), variables=clean(variables), ops=used,
                           passes=parts["passes"], steps=parts["steps"], modules=parts["modules"], figures=figures,
                           truncated=truncated or parts["truncated"] or self.build_error, stream=stream)
        reasons += self.budget.reasons
        room = self.budget.left() - SSE_FRAMING if stream else self.budget.budget
        clip_error(trace, s.max_string_chars)

        def finished(more: list[str]) -> bytes:
            reasons.extend(more)
            if reasons:
                trace["truncated"] = True
                trace["truncated_reason"] = clip_text("; ".join(dict.fromkeys(reasons)), REASON_CHARS)
            # layouts served from other runs' cache entries count what they took to lay out: a timing never
            # tells one client what another ran
            spared = self.layout.spared_s if self.layout is not None else 0.0
            now = time.monotonic() + spared
            stamp_timing(trace, round((now - self.started) * 1000, 2),
                         {"start": round((self.t_sent - self.started) * 1000, 2),
                          "run": round((self.t_end - self.t_sent) * 1000, 2),
                          "trace": round((now - self.t_end) * 1000, 2)})
            return encode(trace)

        data = finished([])
        if len(data) > room:  # over the answer budget: fold (docs/trace.md §4) and encode again
            data = finished(fit_answer(trace, room, max_string_chars=s.max_string_chars))
        return data


def exit_problem(status: int, settings: Settings) -> dict:
    """Why a run process ended without its ``End`` (``os.waitpid`` status): its CPU time, a C stack overflow,
    else its memory."""
    s = settings
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if sig == signal.SIGXCPU:
        return problem("TimeoutError", f"the program used more than its CPU time (limit hard_kill_s = "
                                       f"{s.hard_kill_s:g})")
    if sig == signal.SIGSEGV:
        # NOTE: CPython overflows its C stack on data nested ~100,000 deep (hashing or comparing it)
        return problem("RecursionError", "the program crashed the interpreter: its data is nested too deeply")
    return problem("MemoryError", f"the program was stopped: it exceeded the worker's memory "
                                  f"(limit memory_limit_mb = {s.memory_limit_mb})")
