"""The runner's export takes short ways (issue 21, speed): what it ships must equal what the plain rule gives,
event by event. The rule, written here once as it was before the short ways: split each captured event into
its pieces (an op's output tensor, then the op), and ship each piece bare past the value budget, light
(``lighten``, then encoded) in a pass not kept in full, else whole, every numpy snapshot encoded."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import app.runner.capture as capture
from app.core.config import Settings
from app.runner.capture import (
    SUMMARY_COST,
    VALUE_COST,
    StreamingRecorder,
    bare,
    event_cost,
    light_event,
    lighten,
    run_capture,
)
from app.runner.protocol import End, Events
from app.runner.worker import sandbox_limits
from app.trace.policy import RunPolicy
from engine.recorder import Recorder
from engine.trace_events import KINDS, OP, QUIET, TENSOR
from engine.trace_export import _clean, encode_value, export_event, export_values, split_event

# every kind of event: hooks, a custom Function, retain_grad, detach, in-place edits of .grad, an optimizer with
# state, a failed op, a second backward that fails, non-finite values, big values (summaries), a recurrent layer
PROGRAM = """import torch
import torch.nn as nn
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, ga, gb):
        x, = ctx.saved_tensors
        return ga * 2 + gb * 3
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5000), nn.Tanh(), nn.Linear(5000, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(4, 3)
x.requires_grad_()
b = torch.tensor([1.0, float('nan'), float('inf'), -float('inf')], requires_grad=True)
b.register_hook(lambda g: g * 2)
model.register_forward_hook(lambda mod, args, out: None)
for i in range(7):
    opt.zero_grad()
    h = model(x)
    h.retain_grad()
    u, v = Two.apply(b)
    loss = (h * h).mean() + (u * v).sum() + (b / 0.0).sum()
    loss.backward(retain_graph=True)
    h.detach()
    model[0].bias.grad.mul_(0.5)
    opt.step()
    with torch.no_grad():
        b -= 0.1 * b.grad
    b.grad.zero_()
    if i == 5:
        loss.backward()
        loss.backward()
rnn = nn.RNN(2, 3)
o, _ = rnn(torch.randn(3, 1, 2))
o.sum().backward()
torch.ones(3) + torch.ones(4)
"""


def reference_export(x, limit):
    """The plain encoding: every numpy snapshot anywhere in ``x`` encoded, everything copied."""
    if type(x) is np.ndarray:
        return encode_value(x, limit)
    if type(x) is dict:
        return {k: reference_export(v, limit) for k, v in x.items()}
    if type(x) is list:
        return [reference_export(v, limit) for v in x]
    return x


class ReferenceRecorder(StreamingRecorder):
    """Ships what the fast export ships, and checks it against the plain rule applied to a copy of the batch."""

    # every event goes: what is left out, and that it changes no answer, is test_pruned_first_pass.py's
    leave_out_unread = False

    def _export_batch(self, count):
        raw = copy.deepcopy(self.captured[:count])
        state = (self._value_bytes, dict(self._pass_cost), self.budget_reason, self._mark_idx, self._base)
        out = super()._export_batch(count)
        mine = (self._value_bytes, self._pass_cost, self.budget_reason, self._mark_idx, self._base)
        self._value_bytes, self._pass_cost, self.budget_reason, self._mark_idx, self._base = state
        expected = self._reference_batch(raw)
        assert repr(out) == repr(expected)  # the same values of the same types, keys in the same order
        assert mine == (self._value_bytes, self._pass_cost, self.budget_reason, self._mark_idx, self._base)
        self.checked += len(out)
        return out

    def _reference_batch(self, raw):
        limit, marks, policy, budget = self.value_limit, self._marks, self._policy, self._value_budget
        full_from = policy.tail_from(len(marks) + 1)
        out = []
        idx = self._mark_idx
        for i, e in enumerate(raw, self._base):
            while idx < len(marks) and marks[idx] <= i:
                idx += 1
            full = idx >= full_from or policy.kept_from_start(idx)  # a stream too: its settled passes go light
            for piece in split_event(e):
                if budget is not None and self._value_bytes > budget:
                    if self.budget_reason is None:
                        self.budget_reason = (f"values past the first {budget:,} bytes were left out "
                                              f"(limit max_answer_bytes = {budget:,})")
                    piece = lighten(piece)
                    if piece["kind"] == TENSOR:
                        piece = bare(piece)
                elif not full:
                    if budget is not None and piece["kind"] == TENSOR and piece.get("origin") != "op":
                        self._value_bytes += event_cost(piece, limit)
                    out.append(reference_export(lighten(piece), limit))
                    continue
                elif budget is not None:
                    kind = piece["kind"]
                    if kind == TENSOR:
                        v = piece["value"]
                        cost = ((v.size * VALUE_COST if v.size <= limit else SUMMARY_COST) if type(v) is np.ndarray
                                else SUMMARY_COST if type(v) is dict else 0)
                    else:
                        cost = 0 if kind == OP else event_cost(piece, limit)
                    if cost:
                        self._value_bytes += cost
                        if not policy.kept_from_start(idx) and (kind != TENSOR or piece["origin"] == "op"):
                            self._pass_cost[idx] = self._pass_cost.get(idx, 0) + cost
                out.append(reference_export(piece, limit))
        self._mark_idx = idx
        self._base += len(raw)
        return out


@pytest.mark.parametrize("stream,policy,budget,batch", [
    (True, RunPolicy(3, 2, 10_000), None, 20_000),
    (False, RunPolicy(1, 1, 10_000), 16_000_000, 500),  # light passes (a batch holds several)
    (False, RunPolicy(2, 1, 10_000, frozenset({4})), 60_000, 97),  # a pass asked for; the budget runs out
    (False, RunPolicy(1, 0, 5), 2_000, 13),  # a tiny budget; passes cut
])
def test_the_shipped_events_follow_the_plain_rule(monkeypatch, stream, policy, budget, batch):
    made = []

    def recorder(*a, **kw):
        rec = ReferenceRecorder(*a, **{**kw, "batch": batch})
        rec.checked = 0
        made.append(rec)
        return rec

    monkeypatch.setattr(capture, "StreamingRecorder", recorder)
    msgs: list = []
    run_capture(PROGRAM, sandbox_limits(Settings()), 64, 100_000, msgs.append, stream=stream, policy=policy,
                value_budget=budget)
    end = msgs[-1]
    assert isinstance(end, End) and end.error["type"] == "RuntimeError", end.error  # the failed op, last
    shipped = [e for m in msgs if isinstance(m, Events) for e in m.events]
    assert made[0].checked == len(shipped) > 300
    assert {e["kind"] for e in shipped} == KINDS - {QUIET}  # passes that run quietly: tests/app/test_quiet_passes.py


def test_exported_events_equal_the_plain_encoding():
    """``Recorder.events``, and the light form of every event, against the plain encoding of each piece."""
    import engine
    from sandbox import backend_for, run_program

    rec = Recorder(value_limit=64, max_events=100_000)
    run_program(PROGRAM, sandbox_limits(Settings()), backend_for(engine), recorder=rec)
    raw = copy.deepcopy(rec.captured)
    pieces = [p for e in raw for p in split_event(e)]
    assert repr(rec.events) == repr([reference_export(p, 64) for p in pieces])
    for p in pieces:
        assert repr(export_values(p, 64)) == repr(reference_export(p, 64))
        assert repr(light_event(p, 64)) == repr(reference_export(lighten(p), 64))
    assert {p["kind"] for p in pieces} == KINDS - {"step_stats", "forget", "quiet"}  # the runner adds those


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int64", "uint8", "bool"])
def test_a_scalar_encodes_as_its_list_form(dtype):
    """A 0-d array takes a short way in ``encode_value``: the same number as ``tolist`` then cleaning gives."""
    values = [0, 1, -3, 2.5, 1e300, float("nan"), float("inf"), -float("inf")]
    for v in values:
        with np.errstate(all="ignore"):
            arr = np.array(v).astype(dtype)
        listed = arr.astype(np.int64).tolist() if dtype == "bool" else arr.tolist()
        want = _clean(listed) if arr.dtype.kind == "f" and not math.isfinite(arr.sum()) else listed
        got = encode_value(arr, 64)
        assert repr(got) == repr(want)
    assert encode_value(np.array(2.5), 0) == {"summary": True, "shape": [], "min": 2.5, "max": 2.5, "mean": 2.5,
                                               "sample": [2.5]}


def test_export_event_keeps_summaries_and_scalars_as_they_are():
    summary = {"summary": True, "shape": [5000], "min": 0.0, "max": 1.0, "mean": 0.5, "sample": [0.0]}
    e = {"kind": "tensor", "value": summary, "shape": [5000]}
    assert export_event(e, 64) == e and export_event(e, 64)["value"] is summary
    assert export_values({"kind": "op", "inputs": ["t1"]}, 64) == {"kind": "op", "inputs": ["t1"]}
