"""Every pass of a training run is reachable: a middle pass, sent as a summary, is recorded on
demand (``POST /api/run`` with ``passes``) and is the same pass the first run computed."""

from __future__ import annotations

import pytest
from flowgrad_testing import canonical_ids

TRAIN = ("import torch\ntorch.manual_seed(0)\nw = torch.randn(3, requires_grad=True)\n"
         "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(40):\n    opt.zero_grad()\n"
         "    loss = (w * w).sum()\n    loss.backward()\n    opt.step()\n")


def drawn(trace):
    return [p["index"] for p in trace["passes"] if p["graph"]]


def test_a_middle_pass_is_recorded_on_demand_and_is_the_same_pass(run):
    first = run(TRAIN)
    assert drawn(first) == [0, 1, 2, 38, 39]
    again = run(TRAIN, passes=[20])
    assert drawn(again) == [0, 1, 2, 20, 38, 39]
    p20 = again["passes"][20]
    assert p20["loss"] == first["passes"][20]["loss"] == first["steps"][20]["loss"]
    kinds = [f["kind"] for f in p20["frames"]]
    assert "backward_begin" in kinds and "optim_step" in kinds
    # the rest of the answer is the first run's: same output, same summaries, same drawn passes
    assert again["stdout"] == first["stdout"] and again["steps"] == first["steps"]
    # (up to the ids of what it recorded after the middle passes that ran quietly: app/runner/quiet.py)
    assert again["passes"][2] == first["passes"][2]
    assert canonical_ids(again["passes"][39]) == canonical_ids(first["passes"][39])
    # the value of w at pass 20's forward: w after 20 SGD steps of w ← w − 0.1·2w = 0.8²⁰ w₀
    w0 = next(n for n in first["passes"][0]["graph"]["nodes"] if n.get("name") == "w")["value"]
    w20 = next(n for n in p20["graph"]["nodes"] if n.get("name") == "w")["value"]
    assert w20 == pytest.approx([0.8 ** 20 * v for v in w0], rel=1e-4)


def test_several_passes_and_the_limits(client, run):
    t = run(TRAIN, passes=[5, 30, 5])
    assert drawn(t) == [0, 1, 2, 5, 30, 38, 39]
    assert drawn(run(TRAIN, passes=[1000])) == [0, 1, 2, 38, 39]  # past the end: nothing more
    for bad in ([1, 2, 3, 4, 5], [-1], ["x"], 7):
        r = client.post("/api/run", json={"source": TRAIN, "passes": bad})
        assert r.status_code == 422, bad
