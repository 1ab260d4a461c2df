"""Real beginner programs through POST /api/run (issue 9 §5-6): an MNIST-sized MLP and LeNet-5 on a batch of
64 images run within the limits, their passes are drawn, and `variables` carries every element of every value
and gradient (the page asks for summaries with `values: "summary"`)."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "programs"
MNIST_MLP = (PROGRAMS_DIR / "mnist_mlp.py").read_text()
LENET5 = (PROGRAMS_DIR / "lenet5_batch64.py").read_text()

PROGRAMS = {"mnist_mlp": (MNIST_MLP, 3, {"model.0.weight": [128, 784], "model.2.bias": [10], "x": [64, 784]}),
            "lenet5": (LENET5, 2, {"model.conv1.weight": [6, 1, 5, 5], "model.fc1.weight": [120, 400],
                                   "x": [64, 1, 28, 28]})}


def _shape(v):
    shape = []
    while isinstance(v, list):
        shape.append(len(v))
        v = v[0]
    return shape


def _losses(stdout):
    return [float(m) for m in re.findall(r"^\d+ (\S+)$", stdout, re.M)]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_runs_is_drawn_and_variables_are_complete(run, settings, name):
    source, steps, shapes = PROGRAMS[name]
    d = run(source)
    assert d["error"] is None, d["error"]
    losses = _losses(d["stdout"])
    assert len(losses) == steps and all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0]
    assert len(d["passes"]) == steps and all(p["graph"] is not None for p in d["passes"])
    assert not d["truncated"], d["truncated_reason"]
    variables = d["variables"]
    for var, shape in shapes.items():
        info = variables[var]
        assert info["shape"] == shape and _shape(info["value"]) == shape, var  # every element, no summary
        if var != "x":
            assert _shape(info["grad"]) == shape, var
    # the values are the tensors' own: the last step's SGD update is in the weights
    assert all(isinstance(v["value"], (list, float, int)) for v in variables.values())


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_page_can_ask_for_summaries(run, settings, name):
    source, _, shapes = PROGRAMS[name]
    d = run(source, values="summary")
    assert d["error"] is None
    for var, shape in shapes.items():
        info = d["variables"][var]
        if math.prod(shape) > settings.value_limit:
            assert info["value"]["summary"] is True and info["value"]["shape"] == shape
    small = [v for v in d["variables"].values() if math.prod(v["shape"]) <= settings.value_limit]
    assert small and all(not isinstance(v["value"], dict) for v in small)  # small values stay whole


def test_variables_match_torch(run):
    torch = pytest.importorskip("torch")
    d = run(MNIST_MLP)
    ns = {}
    exec(MNIST_MLP.replace("print(step, loss.item())", "pass"), ns)  # the test's own program under real torch
    model = ns["model"]
    for name, p in model.named_parameters():
        mine = d["variables"][f"model.{name}"]
        np.testing.assert_allclose(np.array(mine["value"]), p.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.array(mine["grad"]), p.grad.numpy(), rtol=1e-3, atol=1e-5)
    assert torch.equal(torch.tensor(d["variables"]["y"]["value"]), ns["y"])


def test_full_answer_stays_within_max_answer_bytes(client, settings):
    r = client.post("/api/run", json={"source": MNIST_MLP})
    assert r.status_code == 200 and len(r.content) <= settings.max_answer_bytes


def test_unknown_values_mode_is_refused(client):
    r = client.post("/api/run", json={"source": "x = 1", "values": "everything"})
    assert r.status_code == 422
