"""The one backward loop (engine/backward.py) against PyTorch: a plain `loss.backward()`, `autograd.grad` (the
gradients captured) and a custom Function with two outputs, through hooks, retain_grad, fan-in and broadcasting."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def _twice(lib):
    class Twice(lib.autograd.Function):
        """Two outputs from one node (a node with several outputs below the root)."""

        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    return Twice


def _program(lib, seen, multi=False):
    rng = np.random.default_rng(1)
    w = lib.tensor(rng.normal(size=(4, 3)).astype(np.float32), requires_grad=True)
    b = lib.tensor(rng.normal(size=(3,)).astype(np.float32), requires_grad=True)
    x = lib.tensor(rng.normal(size=(5, 4)).astype(np.float32))
    h = (x @ w + b).relu()
    h.retain_grad()
    h.register_hook(lambda g: seen.append(g.sum().item()) or g * 0.5)
    p, q = _twice(lib).apply(h) if multi else (h * 2, h * 3)
    loss = (p * q + h).sum() + (h * h).mean()  # fan-in into h, broadcasting of b
    return loss, (w, b), h


@pytest.mark.parametrize("multi", [False, True])
def test_backward_and_grad_match_torch(multi):
    for how in ("backward", "grad"):
        results = []
        for lib in (engine, torch):
            seen = []
            loss, params, h = _program(lib, seen, multi)
            if how == "backward":
                loss.backward()
                grads = [p.grad for p in params] + [h.grad]
            else:  # NOTE: not h: torch captures a non-leaf's gradient before its tensor hooks, the engine after
                grads = list(lib.autograd.grad(loss, [*params]))
            results.append(([g.detach().numpy() for g in grads], seen))
        (mine, seen_mine), (theirs, seen_theirs) = results
        for a, b in zip(mine, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(seen_mine, seen_theirs, rtol=1e-6)


def test_backward_frees_the_graph_unless_retained():
    loss, _, _ = _program(engine, [])
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
