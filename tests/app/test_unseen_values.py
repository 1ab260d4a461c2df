"""Issue 21 (recording speed): the values of a first pass too big to draw, that no later pass can draw either, are
not encoded (``StreamingRecorder`` with ``max_pass_nodes``). The trace built is the same as with every value."""

from __future__ import annotations

from app.core.config import Settings
from app.runner.capture import run_capture
from app.runner.protocol import End, Events
from app.runner.worker import sandbox_limits
from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy

DRAWN = 200  # the builder's node limit here: the first pass below has ~1,500 nodes

# a first pass of many dead intermediates; what outlives it: a live result (`keep`) and its ancestors, a tensor a
# later graph takes (`mid`), one kept through `.data` after its tensor died (`alias`), and a graph node made in the
# first pass (`early`) that a later backward walks, drawing its inputs (`h`, dead by then)
PROGRAM = """import torch
x = torch.linspace(0, 1, 50)
w = torch.ones(50, requires_grad=True)
for i in range(150):
    h = x * 2 + i
    z = h.sum()
    if i == 100:
        keep = (h * 3).exp()
    if i == 120:
        mid = (x + 1) * 2
    if i == 130:
        alias = (h - 1).data
    if i == 140:
        early = w * h
loss = (w * x).sum()
loss.backward()
loss2 = (w * mid).sum() + (w * alias).sum()
loss2.backward()
early.sum().backward()
(w * keep).sum().backward()
print(keep.sum().item(), alias.sum().item())
"""


def capture(max_pass_nodes: int | None) -> list:
    msgs: list = []
    s = Settings()
    run_capture(PROGRAM, sandbox_limits(s), s.value_limit, s.max_events, msgs.append, stream=False,
                policy=RunPolicy(3, 2, 10_000), value_budget=s.max_answer_bytes, max_pass_nodes=max_pass_nodes)
    return msgs


def built(msgs: list) -> TraceBuilder:
    b = TraceBuilder(None, policy=RunPolicy(3, 2, 10_000), max_nodes=DRAWN)
    for m in msgs:
        if isinstance(m, Events):
            b.feed_all(m.events)
    b.finish()
    return b


def test_a_big_first_pass_ships_no_value_no_pass_draws_and_builds_the_same_trace():
    every, fewer = capture(None), capture(DRAWN)
    for msgs in (every, fewer):
        assert isinstance(msgs[-1], End) and msgs[-1].error is None, msgs[-1].error

    def op_values(msgs):
        return [e["value"] for m in msgs if isinstance(m, Events) for e in m.events
                if e["kind"] == "tensor" and e["origin"] == "op"]

    full, cut = op_values(every), op_values(fewer)
    assert None not in full
    # the dead intermediates of the first pass (shipped before the first backward) past the builder's limit are left
    # out, the others go without their values
    assert len(cut) < len(full) - 200 and cut.count(None) > 20
    a, b = built(every), built(fewer)
    assert a.passes[0]["graph"] is None and "not drawn" in a.passes[0]["folded"]
    assert len(a.passes) == 4 and all(p["graph"] is not None for p in a.passes[1:])
    assert repr(a.passes) == repr(b.passes) and a.steps == b.steps and a.reasons == b.reasons
    assert a.ops_used == b.ops_used and a.truncated == b.truncated
    # the later graphs draw first-pass tensors with their values: the live result, the input taken, the alias
    shown = {n.get("name"): n["value"] for p in b.passes[1:] for n in p["graph"]["nodes"] if n.get("name")}
    assert all(shown[name] is not None for name in ("keep", "mid", "alias", "h")), shown


def test_a_first_pass_within_the_limit_ships_every_value():
    msgs = capture(100_000)
    assert None not in [e["value"] for m in msgs if isinstance(m, Events) for e in m.events
                        if e["kind"] == "tensor" and e["origin"] == "op"]
