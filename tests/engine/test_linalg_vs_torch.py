"""torch.linalg.norm / vector_norm / matrix_norm / svdvals, Tensor.norm('nuc'), torch.amax / amin against PyTorch:
values, grad_fn names, gradients, second derivatives (create_graph through the SVD) and error messages."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
A0, B0 = rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 4))
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])

VALID = [
    "L.norm(A)", "L.norm(A, 'nuc')", "L.norm(A, 2)", "L.norm(A, -2)", "L.matrix_norm(A)", "L.matrix_norm(A, 1)",
    "L.matrix_norm(A, float('inf'))", "L.matrix_norm(A, -1)", "L.matrix_norm(A, float('-inf'))", "L.vector_norm(A)",
    "L.vector_norm(A, 1, dim=1)", "L.norm(A, dim=1)", "A.norm(p='nuc')", "A.norm(p='fro')", "A.norm(p='fro', dim=(0, 1))",
    "T.norm(A, 'nuc')", "L.norm(A[0])", "L.norm(A[0], 3)", "L.svdvals(A)", "L.vector_norm(A, float('inf'))",
    "L.norm(B, 'nuc', dim=(0, 2))", "L.norm(B, 2, dim=(2, 1), keepdim=True)", "L.matrix_norm(B, 'nuc', keepdim=True)",
    "L.matrix_norm(B, 1, dim=(2, 0), keepdim=True)", "L.matrix_norm(B, float('inf'), dim=(0, 2))", "T.amax(A, 1)",
    "T.amin(A, (0, 1))", "T.amax(A)", "L.matrix_norm(B, -2)", "L.norm(A, dim=(0, 1))", "T.amax(A, (), True)",
    "L.vector_norm(A.float(), 2, dtype=T.float64)", "L.matrix_norm(A.float(), 'nuc', dtype=T.float64)", "L.norm(B)", "L.svdvals(B)", "T.amax(C, 1)", "T.amin(C, 0)",
    "L.norm(C, float('inf'))", "A.norm('nuc', dim=(1, 0))",
]
INVALID = [
    "T.ones(3).norm('nuc')", "L.norm(A, 'nuc', dim=1)", "L.matrix_norm(A[0])", "L.norm(A, 3)",
    "L.norm(T.ones(2, 2, 2), 'fro')", "L.matrix_norm(A, 3)", "L.vector_norm(A, 'fro')",
    "L.norm(T.ones(2, 2, dtype=T.long))", "L.norm(A, 'abc')", "L.matrix_norm(A, dim=(0, 1, 2))",
    "L.matrix_norm(A.long())", "L.matrix_norm(A.long(), 'nuc')", "L.norm(A[0], 'fro')", "L.norm(A[0], 'nuc')",
    "L.vector_norm(A.long())", "T.amax(T.zeros(0, 3), 0)", "L.matrix_norm(A, dim=(0, 5))", "L.vector_norm(A, 2, 5)",
    "L.norm(A, dim=(0, 1, 2))", "L.svdvals(A[0])", "A.norm('nuc', dim=1)", "L.matrix_norm(A, 0)",
    "L.norm(A, dim=(0, 0))", "L.matrix_norm(A, dim=(0, 0))", "L.vector_norm(A, 2, dtype=T.float32)",
    "L.matrix_norm(A, 1, dtype=T.float32)",
]


def _run(T, expr):
    L = T.linalg  # noqa: F841 — read by the expression
    A, B, C = (T.tensor(x, requires_grad=True) for x in (A0, B0, TIES))
    try:
        y = eval(expr)  # test-only: the expressions above, written against both libraries
    except (RuntimeError, TypeError, IndexError) as e:
        return type(e).__name__, str(e)
    w = np.random.default_rng(5).standard_normal(tuple(y.shape))
    (y * T.tensor(w, dtype=y.dtype)).sum().backward()
    grads = [t.grad.numpy() if t.grad is not None else None for t in (A, B, C)]
    return y.detach().numpy(), type(y.grad_fn).__name__, grads, str(y.dtype)


@pytest.mark.parametrize("expr", VALID + INVALID)
def test_linalg_matches_torch(expr):
    got, want = _run(engine, expr), _run(torch, expr)
    if isinstance(want[0], str):
        assert got == want
        return
    assert got[0].shape == want[0].shape and got[1] == want[1] and got[3] == want[3]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
    for g, w in zip(got[2], want[2]):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ord_", ["nuc", 2, -2])
def test_second_derivative_through_the_svd_matches_torch(ord_):
    def program(T):
        A = T.tensor(A0, requires_grad=True)
        g, = T.autograd.grad(T.linalg.matrix_norm(A, ord_), A, create_graph=True)
        h, = T.autograd.grad((g * T.tensor(B0[0])).sum(), A)
        return g.detach().numpy(), h.numpy()

    (g1, h1), (g2, h2) = program(engine), program(torch)
    np.testing.assert_allclose(g1, g2, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(h1, h2, rtol=1e-6, atol=1e-8)


def test_printing_matches_torch():
    e = engine.tensor(A0[:2, :2].tolist(), requires_grad=True)
    t = torch.tensor(A0[:2, :2].tolist(), requires_grad=True)
    for fn in (lambda L, m: L.norm(m, "nuc"), lambda L, m: L.matrix_norm(m, 2), lambda L, m: L.svdvals(m)):
        assert repr(fn(engine.linalg, e)) == repr(fn(torch.linalg, t))
