"""Child side of a run (inside the forked, rlimited process): run the program under the recorder
and ship the raw capture to the worker in pieces.

Messages sent on ``out`` (a ``multiprocessing`` connection):
``("events", [event, ...])`` at every backward's end and every ~2,000 events,
``("stdout", text)`` batched, and last ``("end", {"stdout", "error", "variables"})``.
A ``step_stats`` event (loss, parameter and gradient L2 norms over the leaves this backward
reached) follows every ``backward_end``; it is computed here from the real arrays.
"""

from __future__ import annotations

import math
import time

import numpy as np

from engine.recorder import Recorder, encode_value, export_event, split_event
from engine.trace_events import (
    ACCUMULATE,
    BACKWARD_BEGIN,
    BACKWARD_DONE,
    BACKWARD_STEP,
    STEP_STATS,
    TENSOR,
    json_number,
    opens_pass,
)

FLUSH_EVENTS = 2_000
FLUSH_SECONDS = 0.05


def _small(v) -> bool:
    return not isinstance(v, np.ndarray) or v.size <= 1


def light_event(e: dict, limit: int) -> dict:
    """An event of a summary-only pass: ids and structure kept, bulky values dropped (never encoded).

    What later passes need is kept: leaf and scalar values, ``.grad`` after accumulation, in-place
    and optimizer values.
    """
    k = e["kind"]
    if k == TENSOR and e.get("origin") == "op" and not _small(e.get("value")):
        return {**e, "value": None}
    if k == BACKWARD_STEP:
        out = {**e, "upstream": None, "contributions": [{**c, "grad": None} for c in e.get("contributions") or []]}
        out.pop("upstream_parts", None)
        return out
    if k == BACKWARD_BEGIN:
        return {**e, "gradient": None}
    if k == ACCUMULATE:
        return export_event({**e, "incoming": None, "before": None}, limit)
    return export_event(e, limit)


class StreamingRecorder(Recorder):
    """Ships events as they come (stream) or in few large batches with summary passes kept light.

    Non-streaming runs send every ``batch`` events and at the end; events of passes that can no
    longer be among the first ``head`` or last ``tail`` passes (the ones with full graphs) are sent
    light, which skips encoding their values. Passes are counted like the trace builder does
    (``engine.trace_events.opens_pass``).
    """

    def __init__(self, send, *, stream: bool = True, head: int = 3, tail: int = 2, batch: int = 20_000, **kw):
        super().__init__(**kw)
        self._send = send
        self._stream = stream
        self._head = head
        self._tail = tail
        self._batch = batch if not stream else FLUSH_EVENTS
        self._marks: list[int] = []  # raw index where pass 1, 2, ... start
        self._after_bw = False
        self._sent = 0  # raw events shipped
        self._sent_exported = 0  # exported events shipped (stream mode)
        self._leaves: dict[int, object] = {}
        self._loss: float | None = None
        self._stdout: list[str] = []
        self._stdout_bytes = 0
        self._last_flush = time.monotonic()

    # ---- shipping ----
    def flush(self, final: bool = False) -> None:
        if self._stdout:
            self._send(("stdout", "".join(self._stdout)))
            self._stdout.clear()
        if self._sent < len(self.captured):  # raw events not shipped yet (one raw op event exports as two)
            if self._stream:
                events = self.events
                self._send(("events", events[self._sent_exported :]))
                self._sent_exported = len(events)
                self._sent = len(self.captured)
            else:
                self._send(("events", self._export_batch()))
        self._last_flush = time.monotonic()

    def _export_batch(self) -> list[dict]:
        raw, limit, marks = self.captured, self.value_limit, self._marks
        n_passes = len(marks) + 1
        full_from = n_passes - self._tail - 1  # passes from here on may still be in the tail
        out = []
        idx = 0
        for i in range(self._sent, len(raw)):
            while idx < len(marks) and marks[idx] <= i:
                idx += 1
            full = idx < self._head or idx >= full_from
            for piece in split_event(raw[i]):
                out.append(export_event(piece, limit) if full else light_event(piece, limit))
        self._sent = len(raw)
        return out

    def emit(self, event):
        if self._after_bw and opens_pass(event):
            self._marks.append(len(self.captured))
            self._after_bw = False
        super().emit(event)
        if event["kind"] in BACKWARD_DONE:
            self._after_bw = True
        if len(self.captured) - self._sent >= self._batch:
            self.flush()

    def on_print(self, text: str) -> None:
        if not self._stream:
            return  # the whole stdout goes with "end"
        self._stdout.append(text)
        if time.monotonic() - self._last_flush > FLUSH_SECONDS:
            self.flush()

    # ---- per-step statistics ----
    def on_backward_begin(self, root, g, retain):
        self._leaves = {}
        try:
            self._loss = float(root._data) if np.size(root._data) == 1 else None
        except Exception:  # noqa: BLE001
            self._loss = None
        super().on_backward_begin(root, g, retain)

    def on_accumulate(self, t, g, before):
        self._leaves[id(t)] = t
        super().on_accumulate(t, g, before)

    def _stats(self) -> None:
        pn = gn = 0.0
        for t in self._leaves.values():
            try:
                pn += float(np.sum(np.square(t._data, dtype=np.float64)))
                if t._grad is not None:
                    gn += float(np.sum(np.square(t._grad._data, dtype=np.float64)))
            except Exception:  # noqa: BLE001
                pass
        has = bool(self._leaves)
        self.emit({"kind": STEP_STATS, "loss": json_number(self._loss),
                   "param_norm": json_number(math.sqrt(pn)) if has else None,
                   "grad_norm": json_number(math.sqrt(gn)) if has else None})
        self._leaves = {}

    def on_backward_end(self, retain):
        super().on_backward_end(retain)
        self._stats()
        if self._stream:
            self.flush()

    def on_backward_error(self, root, error):
        super().on_backward_error(root, error)
        self._stats()
        if self._stream:
            self.flush()


def tensor_info(t, limit: int) -> dict:
    grad = t._grad
    gf = t._grad_fn
    return {
        "shape": [int(s) for s in np.shape(t._data)],
        "dtype": str(t.dtype).replace("torch.", ""),
        "value": encode_value(np.asarray(t._data), limit),
        "grad": None if grad is None else encode_value(np.asarray(grad._data), limit),
        "requires_grad": bool(t._requires_grad),
        "is_leaf": gf is None,
        "grad_fn": None if gf is None else type(gf).__name__,
    }


def extract_variables(top: dict, limit: int) -> dict:
    """Every top-level tensor, and every named parameter of every top-level module (prefixed)."""
    from engine.nn import Module
    from engine.tensor import Tensor

    out: dict[str, dict] = {}
    for name, obj in top.items():
        try:
            if isinstance(obj, Tensor):
                out[name] = tensor_info(obj, limit)
            elif isinstance(obj, Module):
                for pname, p in obj.named_parameters(prefix=name):
                    out[pname] = tensor_info(p, limit)
        except Exception:  # noqa: BLE001 - a broken user object is skipped, not fatal
            continue
    return out


def run_capture(source: str, limits, value_limit: int, max_events: int, send, *, stream: bool = True,
                head: int = 3, tail: int = 2) -> None:
    """Run ``source`` and ship everything through ``send``; never raises."""
    import engine
    from sandbox import backend_for, run_program

    rec = StreamingRecorder(send, stream=stream, head=head, tail=tail, value_limit=value_limit,
                            max_events=max_events)
    error = None
    variables: dict = {}
    stdout = ""
    try:
        outcome = run_program(source, limits, backend_for(engine), recorder=rec, on_print=rec.on_print)
        stdout, error = outcome.stdout, outcome.error
        try:
            rec.name_modules(outcome.globals)
        except Exception:  # noqa: BLE001
            pass
        variables = extract_variables(outcome.globals, value_limit)
    except MemoryError:
        error = {"type": "MemoryError", "message": "the program ran out of memory", "line": None, "column": None}
    except Exception:  # noqa: BLE001 - an engine bug must not leak a traceback
        error = {"type": "InternalError", "message": "the run failed inside flowgrad", "line": None, "column": None}
    rec._stdout.clear()  # the whole stdout goes with "end"
    try:
        rec.flush(final=True)
    except Exception:  # noqa: BLE001
        pass
    send(("end", {"stdout": stdout, "error": error, "variables": variables, "truncated": rec.truncated}))
