"""A long run's memory is bounded (issue 21 §2): the trace builder keeps the passes the page shows in full (the
first, the last, any asked for) and the loss points of the rest; the entries of ids the program dropped go
(``forget`` events, app/trace/forgetting.py). Counts retained objects, never time."""
from __future__ import annotations

import pytest

from app.core.config import Settings
from app.runner.capture import FORGET_AFTER, StreamingRecorder, run_capture
from app.runner.protocol import End, Events
from app.runner.worker import capture_budgets, sandbox_limits
from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy
from engine.trace_events import FORGET

REGRESSION = ("import torch\ntorch.manual_seed(0)\nx = torch.linspace(0, 1, 20).unsqueeze(1)\ny = 3 * x + 2\n"
              "w = torch.zeros(1, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\n"
              "opt = torch.optim.SGD([w, b], lr=0.1)\nfor step in range(N):\n    pred = x * w + b\n"
              "    loss = ((pred - y) ** 2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
              "print(round(loss.item(), 4))\n")
# ids a later pass names again: a view the engine hands back again, losses held and stacked after the loop, an old
# graph walked again by a later backward, `x.data`, a hidden state carried over, a detached running average
LATE = ("import torch\ntorch.manual_seed(0)\nw = torch.randn(3, requires_grad=True)\ndata = torch.randn(4, 3)\n"
        "opt = torch.optim.SGD([w], lr=0.05)\nlosses = []\nfirst = None\navg = torch.zeros(())\nh = torch.zeros(3)\n"
        "for i in range(30):\n    batch = data[(i % 2) * 2:(i % 2) * 2 + 2]\n    h = torch.tanh(batch.sum(0) * w + h.detach())\n"
        "    loss = (h ** 2).sum()\n    if i == 4:\n        first = loss * 2\n    losses.append(loss)\n"
        "    opt.zero_grad()\n    loss.backward(retain_graph=True)\n    opt.step()\n"
        "    avg = 0.9 * avg + 0.1 * loss.detach()\n    alias = w.data\n    scratch = (w.detach() * 2).exp().sum()\n"
        "first.backward(retain_graph=True)\ntotal = torch.stack(losses).sum() + avg + alias.sum()\ntotal.backward()\n")


class KeepEverything(TraceBuilder):
    """The builder as it was before it forgot anything: the reference every graph is compared with."""

    def feed(self, e):
        if e.get("kind") != FORGET:
            super().feed(e)


def build(source: str, n: int | None = None, passes=(), builder=TraceBuilder, tail: int | None = None):
    s = Settings(max_passes=100_000, **({} if tail is None else {"full_passes_tail": tail}))
    policy = RunPolicy.from_settings(s, passes)
    b = builder(None, policy=policy, max_nodes=s.max_drawn_nodes)
    recorders = []
    init = StreamingRecorder.__init__

    def spy(self, *a, **kw):
        init(self, *a, **kw)
        recorders.append(self)

    def send(m):
        if isinstance(m, Events):
            b.feed_all(m.events)
        elif isinstance(m, End):
            assert m.error is None, m.error

    StreamingRecorder.__init__ = spy
    try:
        run_capture(source.replace("range(N)", f"range({n})"), sandbox_limits(s), s.value_limit, s.max_events, send,
                    stream=False, policy=policy, **capture_budgets(s))
    finally:
        StreamingRecorder.__init__ = init
    b.finish()
    return b, recorders[0]


def retained(b: TraceBuilder) -> int:
    return len(b.tensors) + len(b.ops) + len(b.seq) + len(b.names) + len(b.cur_value) + len(b.consumers) + \
        len(b.value_hist) + len(b.grad_hist) + len(b._unreachable)


def test_what_a_long_run_keeps_does_not_grow_with_its_passes():
    short, rec_short = build(REGRESSION, 60)
    long, rec_long = build(REGRESSION, 600)
    assert len(long.steps) == len(long.passes) == 600, "every pass keeps its loss point"
    assert retained(long) == retained(short) < 400
    # the run process: the ids it still watches stay few (the last passes' and the survivors')
    assert len(rec_long._aging) <= FORGET_AFTER and len(rec_long._survivors) < 300
    assert len(rec_long._born) <= len(rec_short._born) + 20


@pytest.mark.parametrize("passes", [(), (7, 12)])
@pytest.mark.parametrize("tail", [None, 0, 1])
def test_the_passes_drawn_are_those_drawn_with_every_entry_kept(passes, tail, monkeypatch):
    pruned, _ = build(LATE, passes=passes, tail=tail)
    # every event shipped: what the builder forgets is its own doing (the runner leaves out most of it otherwise)
    monkeypatch.setattr(StreamingRecorder, "leave_out_unread", False)
    forgetting, _ = build(LATE, passes=passes, tail=tail)
    keeping, _ = build(LATE, passes=passes, builder=KeepEverything, tail=tail)
    assert forgetting.result_parts() == keeping.result_parts() == pruned.result_parts()
    drawn = [p["index"] for p in forgetting.passes if p["graph"]]
    assert set(passes) <= set(drawn) and 0 in drawn
    assert len(forgetting.tensors) < len(keeping.tensors), "it forgot something"
    if tail == 0:
        return
    last = forgetting.passes[-1]["graph"]
    stacked = next(n for n in last["nodes"] if n["kind"] == "op" and n["op"] == "stack")
    assert sum(e["target"] == stacked["id"] for e in last["edges"]) == 30, "every loss held since pass 0 is drawn"


def test_the_lenet_example_draws_what_it_drew():
    with open("examples/20_lenet_digits.py", encoding="utf-8") as f:
        source = f.read()
    for passes in ((), (5,)):
        forgetting, _ = build(source, passes=passes)
        keeping, _ = build(source, passes=passes, builder=KeepEverything)
        assert forgetting.result_parts() == keeping.result_parts()
