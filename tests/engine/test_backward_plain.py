"""The plain backward loop (engine/backward_plain.py) against run_backward's general loop, bit for bit."""
import numpy as np
import pytest

import engine
from engine import autograd


class _Twice(engine.autograd.Function):
    """Two outputs from one node (a `_multi` node below the root)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3


def _program(seen, multi=False):
    rng = np.random.default_rng(1)
    w = engine.tensor(rng.normal(size=(4, 3)).astype(np.float32), requires_grad=True)
    b = engine.tensor(rng.normal(size=(3,)).astype(np.float32), requires_grad=True)
    x = engine.tensor(rng.normal(size=(5, 4)).astype(np.float32))
    h = (x @ w + b).relu()
    h.retain_grad()
    h.register_hook(lambda g: seen.append(g.sum().item()) or g * 0.5)
    p, q = _Twice.apply(h) if multi else (h * 2, h * 3)
    loss = (p * q + h).sum() + (h * h).mean()  # fan-in into h, broadcasting of b
    return loss, (w, b), h


@pytest.mark.parametrize("multi", [False, True])
def test_plain_loop_runs_and_matches_the_general_loop(monkeypatch, multi):
    calls = []
    plain = autograd.run_plain_backward
    monkeypatch.setattr(autograd, "run_plain_backward", lambda *a: calls.append(plain(*a)) or calls[-1])
    seen_plain, seen_general = [], []
    loss, params, h = _program(seen_plain, multi)
    loss.backward()
    assert calls == [not multi]  # a node with several outputs: the general loop runs it, from the start
    loss2, params2, h2 = _program(seen_general, multi)
    grads = engine.autograd.grad(loss2, [*params2, h2])  # capture: the general loop
    assert len(calls) == 1
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), g.numpy())
    assert seen_plain == seen_general
    np.testing.assert_array_equal(h.grad.numpy(), grads[2].numpy())


def test_plain_loop_frees_the_graph_unless_retained():
    loss, _, _ = _program([])
    loss.backward(retain_graph=True)
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as e:
        assert "Trying to backward through the graph a second time" in str(e)
    else:
        raise AssertionError("a freed graph ran again")
