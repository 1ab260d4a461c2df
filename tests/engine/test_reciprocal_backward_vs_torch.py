"""`1 / x` as PyTorch computes it: reciprocal(x) * 1, whose gradient is derivatives.yaml's -grad * (result * result),
in that order, bit for bit (a hand-written logistic regression's weights drifted in the last bit after one step when
the engine multiplied (-grad * result) * result). The gradient is checked against finite differences too."""
import numpy as np
import pytest

import engine


def _inputs():
    rng = np.random.default_rng(11)
    return (rng.standard_normal(400) * 3 + 5).astype(np.float32), rng.standard_normal(400).astype(np.float32)


@pytest.mark.parametrize("form", ["1 / x", "x.reciprocal()", "2.5 / x"])
def test_the_gradient_is_pytorchs_to_the_bit(form):
    torch = pytest.importorskip("torch")
    x, g = _inputs()
    grads = []
    for mod in (engine, torch):
        t = mod.tensor(x, requires_grad=True)
        eval(form, {"x": t}).backward(mod.tensor(g))  # noqa: S307 - the test's own three forms
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[0].view(np.uint32), grads[1].view(np.uint32))


def test_the_gradient_matches_finite_differences():
    x = engine.tensor([0.5, 2.0, -3.0], dtype=engine.float64, requires_grad=True)
    (1 / x).sum().backward()
    eps = 1e-6
    numeric = [(1 / (v + eps) - 1 / (v - eps)) / (2 * eps) for v in (0.5, 2.0, -3.0)]
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6)
