"""Code after the last backward() (issue 21 §2): it adds a pass only when it runs a forward of its own (an op
with a grad_fn takes another one's output, or a backward follows); otherwise it is the last pass's update phase.
Real programs, recorded in the sandbox, built by the trace builder as the server builds them."""
from __future__ import annotations

import pytest

import engine
from app.core.config import Settings
from app.runner.worker import sandbox_limits
from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy
from engine.recorder import Recorder
from sandbox import backend_for, run_program

BACKEND = backend_for(engine)
LIMITS = sandbox_limits(Settings())

LOOP = ("import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(8, 3)\ny = torch.randn(8, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(4):\n"
        "    loss = ((model(x) - y) ** 2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n")


def steps(source: str) -> list[dict]:
    rec = Recorder(value_limit=64, max_events=100_000)
    out = run_program(source, LIMITS, BACKEND, recorder=rec)
    assert out.error is None, out.error
    builder = TraceBuilder(None, policy=RunPolicy(3, 2, 10_000))
    builder.feed_all(rec.events)
    builder.finish()
    assert [p["index"] for p in builder.passes] == list(range(len(builder.steps)))
    return builder.steps


@pytest.mark.parametrize("tail", [
    "",
    "print(loss.item())\n",
    "with torch.no_grad():\n    pred = model(x)\nprint(pred.shape)\n",
    "print(model.weight[:, 0].item(), model.weight[0, 1].item(), model.bias[0].item())\n",  # lone graph ops, read
    "w = model.weight * 1.0\nprint(w.shape)\n",  # one op with a grad_fn: no graph of its own
    "for p in model.parameters():\n    print(p.sum().item())\n",
])
def test_code_after_the_last_backward_adds_no_pass(tail):
    got = steps(LOOP + tail)
    assert len(got) == 4 and all(s["loss"] is not None for s in got), got


@pytest.mark.parametrize("tail", [
    "pred = model(x)\nprint(pred.shape)\n",  # a forward with grad, never backwarded: it records a graph
    "z = (model.weight * 2.0).sum()\n",
])
def test_a_final_forward_that_records_a_graph_is_a_pass_of_its_own(tail):
    got = steps(LOOP + tail)
    assert len(got) == 5 and got[-1]["loss"] is None and all(s["loss"] is not None for s in got[:4]), got


def test_reads_between_steps_go_with_the_next_forward_as_before():
    src = LOOP.replace("    opt.step()\n", "    opt.step()\n    print(model.weight[0, 0].item())\n")
    got = steps(src)
    assert len(got) == 4 and all(s["loss"] is not None for s in got), got
