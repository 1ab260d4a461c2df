"""A training pass ends showing the gradients it made (issue 23 §3): in the standard loop (`opt.zero_grad()`
first) the next iteration's zero_grad opens the next pass instead of closing this one with every .grad None.
Real programs, recorded in the sandbox, built by the trace builder as the server builds them."""
from __future__ import annotations

import engine
from app.core.config import Settings
from app.runner.worker import sandbox_limits
from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy
from engine.recorder import Recorder
from sandbox import backend_for, run_program

BACKEND = backend_for(engine)
LIMITS = sandbox_limits(Settings())

HEAD = ("import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(8, 3)\ny = torch.randn(8, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(4):\n")
ZERO_FIRST = HEAD + "    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n"
ZERO_LAST = HEAD + "    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n    opt.zero_grad()\n"


def passes(source: str) -> list[dict]:
    rec = Recorder(value_limit=64, max_events=100_000)
    out = run_program(source, LIMITS, BACKEND, recorder=rec)
    assert out.error is None, out.error
    builder = TraceBuilder(None, policy=RunPolicy(10, 2, 10_000))
    builder.feed_all(rec.events)
    builder.finish()
    return builder.passes


def _replayed_grads(p: dict) -> dict:
    """Each parameter's .grad after the pass's last frame, as the page replays the frames."""
    grads: dict = {}
    for f in p["frames"]:
        if f["kind"] == "accumulate":
            grads[f["tensor"]] = f["after"]
        elif f["kind"] == "zero_grad":
            for t in f["tensors"]:
                grads[t] = None if f["set_to_none"] else 0
    return grads


def test_zero_grad_first_a_pass_ends_after_step_with_its_gradients():
    got = passes(ZERO_FIRST)
    assert len(got) == 4 and all(p["loss"] is not None for p in got)
    for i, p in enumerate(got):
        kinds = [f["kind"] for f in p["frames"]]
        assert kinds[-1] == "optim_step", kinds[-3:]
        assert i == 0 or kinds[0] == "zero_grad", "each later pass starts by clearing the gradients"
        grads = _replayed_grads(p)
        assert len(grads) == 2 and all(g is not None for g in grads.values()), (i, grads)
        params = [n for n in p["graph"]["nodes"] if n["role"] == "parameter"]
        assert params and all(n["grad"] is not None for n in params)


def test_zero_grad_last_the_next_pass_starts_with_the_clearing():
    got = passes(ZERO_LAST)
    assert len(got) == 4 and all(p["loss"] is not None for p in got)
    for p in got[:-1]:
        assert [f["kind"] for f in p["frames"]][-1] == "optim_step"
        assert all(g is not None for g in _replayed_grads(p).values())
    for p in got[1:]:
        assert p["frames"][0]["kind"] == "zero_grad"
    # the trailing zero_grad opens no pass: a step of the last one after its result, never the result
    last = got[-1]["frames"]
    result = [f for f in last if not f.get("after_result")]
    trailing = [f for f in last if f.get("after_result")]
    assert [f["kind"] for f in trailing] == ["zero_grad"] and result[-1]["kind"] == "optim_step"
    assert last[-1] is trailing[-1] and all(not f.get("after_result") for p in got[:-1] for f in p["frames"])
    assert all(g is not None for g in _replayed_grads({"frames": result}).values())
    assert all(n["grad"] is not None for n in got[-1]["graph"]["nodes"] if n["role"] == "parameter")


def test_a_trailing_clearing_and_what_follows_it_come_after_the_result():
    got = passes(ZERO_LAST + "print(model.weight[0, 0].item())\nopt.zero_grad(set_to_none=False)\n")
    assert len(got) == 4
    kinds = [(f["kind"], bool(f.get("after_result"))) for f in got[-1]["frames"]]
    first = kinds.index(("zero_grad", True))
    assert all(after for _, after in kinds[first:]) and not any(after for _, after in kinds[:first])
    assert kinds[first - 1] == ("optim_step", False)


def test_no_trailing_clearing_no_mark():
    for src in (ZERO_FIRST, ZERO_FIRST + "print(loss.item())\n"):
        assert not any(f.get("after_result") for p in passes(src) for f in p["frames"])


def test_manual_zero_of_a_grad_opens_the_next_pass():
    src = ("import torch\nw = torch.tensor(2.0, requires_grad=True)\nfor i in range(3):\n"
           "    loss = (w * 3.0) ** 2\n    loss.backward()\n    with torch.no_grad():\n        w -= 0.01 * w.grad\n"
           "    w.grad.zero_()\n")
    got = passes(src)
    assert len(got) == 3
    for p in got[:-1]:
        kinds = [f["kind"] for f in p["frames"]]
        assert "inplace" in kinds and "zero_grad" not in kinds[1:], kinds
        assert all(g is not None and g != 0 for g in _replayed_grads(p).values())
