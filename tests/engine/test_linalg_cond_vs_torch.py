"""torch.linalg.cond (engine/linalg.py): every order PyTorch 2.13 takes, batches, singular and empty matrices and its
errors, against PyTorch; the gradient against finite differences."""
import numpy as np
import pytest

import engine

ORDERS = [None, 2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"]
MATRICES = {
    "2x2": [[1.0, 2.0], [3.0, 4.0]],
    "3x3 ill-conditioned": [[1.0, 2.0, 3.0], [2.0, 4.001, 6.0], [1.0, 0.0, 1.0]],
    "batch": [[[2.0, 0.5], [0.5, 3.0]], [[1.0, -1.0], [2.0, 5.0]]],
    "singular": [[1.0, 2.0], [2.0, 4.0]],
}


@pytest.fixture
def pytorch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name", MATRICES)
@pytest.mark.parametrize("p", ORDERS, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_order_is_pytorchs(pytorch, name, p, dtype):
    if name == "singular" and p in (None, 2, -2, "nuc"):
        pytest.skip("from a singular value LAPACK leaves at rounding noise: the two libraries' noise differs")
    ours = engine.linalg.cond(engine.tensor(MATRICES[name], dtype=getattr(engine, dtype)), p)
    theirs = pytorch.linalg.cond(pytorch.tensor(MATRICES[name], dtype=getattr(pytorch, dtype)), p)
    assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    # NOTE: a smallest singular value (or an inverse) carries the rounding error times the condition number itself
    conditioning = np.max(np.maximum(theirs.numpy(), 1 / theirs.numpy()))
    rtol = (1e-6 if dtype == "float32" else 1e-13) * max(1.0, float(conditioning))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol)


def test_a_rectangular_matrix_takes_the_two_norm_only_and_empty_ones_give_zero(pytorch):
    R = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    for p in (None, -2):
        np.testing.assert_allclose(engine.linalg.cond(engine.tensor(R), p).numpy(),
                                   pytorch.linalg.cond(pytorch.tensor(R), p).numpy(), rtol=1e-6)
    for p in (1, "fro", "nuc"):
        assert engine.linalg.cond(engine.zeros(2, 0, 0), p).tolist() == pytorch.linalg.cond(pytorch.zeros(2, 0, 0),
                                                                                              p).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("args", [("R", 1), ("R", 1.0), ("R", "fro"), ("A", 3), ("A", "x"), ("v", None),
                                  ("R", float("inf"))], ids=str)
def test_errors_are_pytorchs(pytorch, args):
    def call(mod):
        inputs = {"R": mod.ones(2, 3), "A": mod.eye(2), "v": mod.ones(3)}
        try:
            mod.linalg.cond(inputs[args[0]], args[1])
        except Exception as e:  # noqa: BLE001 - the error is the answer
            return type(e).__name__, str(e)
        return None
    assert call(engine) == call(pytorch)


def test_the_gradient_matches_finite_differences():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for p in (None, "fro", 1):
        x = engine.tensor(a, requires_grad=True)
        engine.linalg.cond(x, p).backward()
        eps, numeric = 1e-6, np.zeros_like(a)
        for i in range(2):
            for j in range(2):
                hi, lo = a.copy(), a.copy()
                hi[i, j] += eps
                lo[i, j] -= eps
                numeric[i, j] = (engine.linalg.cond(engine.tensor(hi), p).item()
                                 - engine.linalg.cond(engine.tensor(lo), p).item()) / (2 * eps)
        np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-8)
