"""max_events counts per pass (issue 21): a long loop never stops on the run's total, one pass past the limit
stops the run with LimitExceeded on its line, in the sandbox (run_capture) and in-process (Recorder)."""
from __future__ import annotations

import pytest

import engine
from app.core.config import Settings
from app.runner.capture import run_capture
from app.runner.protocol import End, Events
from app.runner.worker import capture_budgets, sandbox_limits
from app.trace.policy import RunPolicy
from engine.limits import LimitExceeded
from engine.recorder import Recorder

LOOP = ("import torch\nw = torch.zeros(2, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n"
        "for i in range(3000):\n    loss = ((w - 1) ** 2).sum()\n    opt.zero_grad()\n    loss.backward()\n"
        "    opt.step()\nprint(w.detach())\n")
# one pass (no backward at all) of ~4 events an iteration
HUGE_PASS = "import torch\nx = torch.ones(3)\ns = 0\nfor i in range(5000):\n    y = x * 2 + 1\n    s = s + 1\nprint(s)\n"


def capture(source: str, max_events: int, stream: bool = False, quiet: bool = True) -> list:
    s = Settings()
    msgs: list = []
    run_capture(source, sandbox_limits(s), s.value_limit, max_events, msgs.append, stream=stream,
                policy=RunPolicy.from_settings(s), **{**capture_budgets(s), "quiet_passes": quiet})
    assert isinstance(msgs[-1], End)
    return msgs


@pytest.mark.parametrize("stream", [False, True])
def test_a_long_loop_finishes_whatever_its_total_events(stream):
    msgs = capture(LOOP, max_events=200, stream=stream, quiet=False)  # every pass recorded, then shipped
    end = msgs[-1]
    assert end.error is None, end.error
    assert end.stdout == "tensor([1.0000, 1.0000])\n"
    events = [e for m in msgs if isinstance(m, Events) for e in m.events]
    assert sum(e["kind"] == "backward_end" for e in events) == 3000
    assert len(events) > 100 * 200, "the run recorded far more than max_events, all of it"


@pytest.mark.parametrize("stream", [False, True])
def test_one_pass_past_max_events_stops_on_its_line(stream):
    end = capture(HUGE_PASS, max_events=1000, stream=stream)[-1]
    assert end.error is not None and end.error["type"] == "LimitExceeded"
    assert "max_events = 1,000" in end.error["message"] and "this pass" in end.error["message"]
    assert end.error["line"] == 5


def test_the_in_process_recorder_counts_per_pass():
    engine.reset_run_state()
    w = engine.zeros(2, requires_grad=True)
    with Recorder(value_limit=16, max_events=50) as rec:
        for _ in range(100):
            ((w - 1) ** 2).sum().backward()
        assert rec.n_events > 50 * 20 and rec.pass_events == 0
        x = engine.ones(3)
        with pytest.raises(LimitExceeded, match="max_events = 50"):
            for _ in range(100):
                x = x * 2
