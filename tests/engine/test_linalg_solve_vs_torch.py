"""torch.linalg's solvers and factorisations (engine/linalg_solve.py) against torch 2.13: solve, lstsq, pinv, eigh /
eigvalsh, cholesky, slogdet, matrix_rank, svd (and torch.svd / torch.cholesky / torch.slogdet / torch.pinverse),
torch.cov / torch.corrcoef: values, grad_fn names and the gradients of a loss through each. Singular and eigen vectors
are compared up to their sign (LAPACK builds may choose either), through sign-free losses."""
import numpy as np
import pytest

import engine as fg

torch = pytest.importorskip("torch")
rng = np.random.default_rng(77)
TALL = rng.normal(size=(6, 3))
WIDE = rng.normal(size=(3, 5))
RHS = rng.normal(size=(6, 2))
SPD = TALL.T @ TALL + np.eye(3)
SQUARE = rng.normal(size=(3, 3)) + 3 * np.eye(3)
BATCH = rng.normal(size=(2, 3, 3)) + 3 * np.eye(3)

# (name, data of each input, fn(lib, *inputs) -> a tensor whose weighted sum is the loss)
CASES = [
    ("solve matrix", (SQUARE, RHS[:3]), lambda L, a, b: L.linalg.solve(a, b)),
    ("solve vector", (SQUARE, RHS[:3, 0]), lambda L, a, b: L.linalg.solve(a, b)),
    ("solve batch", (BATCH, RHS[:3]), lambda L, a, b: L.linalg.solve(a, b)),
    ("solve right", (SQUARE, TALL[:2].copy()), lambda L, a, b: L.linalg.solve(a, b, left=False)),
    ("lstsq", (TALL, RHS), lambda L, a, b: L.linalg.lstsq(a, b).solution),
    ("lstsq vector", (TALL, RHS[:, 0]), lambda L, a, b: L.linalg.lstsq(a, b).solution),
    ("pinv tall", (TALL,), lambda L, a: L.linalg.pinv(a)),
    ("pinv wide", (WIDE,), lambda L, a: L.linalg.pinv(a)),
    ("pinverse", (WIDE,), lambda L, a: L.pinverse(a)),
    ("eigvalsh", (SPD,), lambda L, a: L.linalg.eigvalsh(a)),
    ("eigh values", (SPD,), lambda L, a: L.linalg.eigh(a).eigenvalues),
    ("eigh vectors", (SPD,), lambda L, a: L.linalg.eigh(a, UPLO="U").eigenvectors ** 2),
    ("cholesky", (SPD,), lambda L, a: L.linalg.cholesky(a)),
    ("cholesky upper", (SPD,), lambda L, a: L.linalg.cholesky(a, upper=True)),
    ("torch.cholesky", (SPD,), lambda L, a: L.cholesky(a)),
    ("slogdet", (SQUARE,), lambda L, a: L.linalg.slogdet(a).logabsdet),
    ("slogdet negative", (-SQUARE,), lambda L, a: L.slogdet(a)[1]),
    ("svd values", (TALL,), lambda L, a: L.linalg.svd(a).S),
    ("svd U", (TALL,), lambda L, a: L.linalg.svd(a, full_matrices=False).U ** 2),
    ("svd Vh", (WIDE,), lambda L, a: L.linalg.svd(a, full_matrices=False).Vh ** 2),
    ("svd full U", (TALL,), lambda L, a: L.linalg.svd(a).U[:, :3] ** 2),
    ("torch.svd V", (TALL,), lambda L, a: L.svd(a).V ** 2),
    ("cov", (TALL.T.copy(),), lambda L, a: L.cov(a)),
    ("cov correction 0", (WIDE,), lambda L, a: L.cov(a, correction=0)),
    ("cov vector", (TALL[:, 0].copy(),), lambda L, a: L.cov(a)),
    ("corrcoef", (TALL.T.copy(),), lambda L, a: L.corrcoef(a)),
]


@pytest.mark.parametrize("name, data, fn", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_grad_fns_and_gradients_match_torch(name, data, fn, dtype):
    got = {}
    for lib in (torch, fg):
        inputs = [lib.tensor(d, dtype=getattr(lib, dtype), requires_grad=True) for d in data]
        out = fn(lib, *inputs)
        weights = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) + 1
        (out * weights).sum().backward()
        got[lib] = (out.detach().numpy(), [x.grad.numpy() for x in inputs], out.grad_fn.name())
    tol = 2e-4 if dtype == "float32" else 1e-9
    (t_out, t_grads, t_fn), (e_out, e_grads, e_fn) = got[torch], got[fg]
    assert e_fn == t_fn
    assert e_out.dtype == t_out.dtype and e_out.shape == t_out.shape
    np.testing.assert_allclose(e_out, t_out, rtol=tol, atol=tol)
    for t, e in zip(t_grads, e_grads):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


def test_lstsq_reports_what_the_cpu_driver_reports():
    for driver in (None, "gelsy", "gelsd"):
        t = torch.linalg.lstsq(torch.tensor(TALL), torch.tensor(RHS), driver=driver)
        e = fg.linalg.lstsq(fg.tensor(TALL), fg.tensor(RHS), driver=driver)
        assert type(e).__name__ == type(t).__name__ == "linalg_lstsq"
        for field in ("solution", "residuals", "rank", "singular_values"):
            tv, ev = getattr(t, field), getattr(e, field)
            assert str(ev.dtype) == str(tv.dtype) and tuple(ev.shape) == tuple(tv.shape), field
            np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-9, atol=1e-9)


def test_rank_of_a_rank_deficient_matrix_and_its_pseudo_inverse():
    low = TALL[:, :1] @ TALL[:1, :]  # rank 1
    for lib in (torch, fg):
        assert lib.linalg.matrix_rank(lib.tensor(low)).item() == 1
    np.testing.assert_allclose(fg.linalg.pinv(fg.tensor(low)).numpy(), torch.linalg.pinv(torch.tensor(low)).numpy(),
                               rtol=1e-9, atol=1e-12)


def test_results_print_as_torchs_named_tuples():
    t, e = torch.linalg.eigh(torch.tensor(SPD)), fg.linalg.eigh(fg.tensor(SPD))
    assert repr(e.eigenvalues) == repr(t.eigenvalues) and type(e).__name__ == type(t).__name__
    assert type(fg.linalg.slogdet(fg.tensor(SQUARE))).__name__ == type(torch.linalg.slogdet(torch.tensor(SQUARE))).__name__
    assert type(fg.svd(fg.tensor(TALL))).__name__ == type(torch.svd(torch.tensor(TALL))).__name__ == "svd"
    assert repr(fg.linalg.slogdet(fg.tensor(-SQUARE)).sign) == repr(torch.linalg.slogdet(torch.tensor(-SQUARE)).sign)


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.linalg.solve(L.zeros(2, 2), L.ones(2)), RuntimeError),  # singular: LinAlgError, a RuntimeError
    (lambda L: L.linalg.solve(L.ones(2, 3), L.ones(2)), RuntimeError),
    (lambda L: L.linalg.solve(L.eye(2), L.ones(3)), RuntimeError),
    (lambda L: L.linalg.cholesky(-L.eye(2)), RuntimeError),
    (lambda L: L.linalg.eigh(L.ones(2, 3)), RuntimeError),
    (lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 1)), RuntimeError),
    (lambda L: L.linalg.svd(L.ones(3)), RuntimeError),
    (lambda L: L.linalg.pinv(L.tensor([[1, 2]])), RuntimeError),
    (lambda L: L.linalg.eigh(L.eye(2), UPLO="X"), RuntimeError),
    (lambda L: L.cov(L.ones(2, 2, 2)), RuntimeError),
])
def test_wrong_inputs_raise_as_torch_raises(call, kind):
    for lib in (torch, fg):
        with pytest.raises(kind):
            call(lib)


def test_a_singular_solve_is_caught_as_linalg_error():
    for lib in (torch, fg):
        with pytest.raises(lib.linalg.LinAlgError):
            lib.linalg.solve(lib.zeros(2, 2), lib.ones(2))
