"""Hostile programs against torch.linalg's solvers and factorisations (engine/linalg_solve.py): a program using them
prints what PyTorch prints; wrong inputs raise with the program's line (a singular or indefinite matrix as
torch.linalg.LinAlgError, which the program can catch); sizes and work a program picks (a full SVD of a long
matrix, a huge solve) are refused before they are made; what they return reaches nothing outside."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

PROGRAM = """import torch
torch.manual_seed(0)
X = torch.randn(8, 3, dtype=torch.float64)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
sol = torch.linalg.lstsq(X, y)
print(sol.solution.T, sol.rank, sol.residuals.shape)
A = X.T @ X + torch.eye(3, dtype=torch.float64)
print(torch.linalg.solve(A, torch.ones(3, dtype=torch.float64)),
      torch.allclose(torch.linalg.solve(A, A, left=False), torch.eye(3, dtype=torch.float64)))
L = torch.linalg.cholesky(A)
print(L, torch.cholesky(A, upper=True).T - L)
w, V = torch.linalg.eigh(A)
print(w, torch.linalg.eigvalsh(A), (V.abs() - torch.linalg.eigh(A).eigenvectors.abs()).abs().max())
print(torch.linalg.slogdet(-A), torch.slogdet(A).logabsdet, torch.linalg.matrix_rank(X[:, :1] @ X[:1, :]))
U, S, Vh = torch.linalg.svd(X, full_matrices=False)
print(S, U.shape, Vh.shape, torch.linalg.svd(X).U.shape, torch.svd(X).V.shape, torch.svd(X, compute_uv=False).U.abs().sum())
print(torch.linalg.pinv(X).shape, torch.pinverse(X[:3]).shape, X.pinverse().shape)
print(torch.cov(X.T), torch.corrcoef(X.T).diagonal(), torch.cov(torch.tensor([[1, 2, 4], [3, 5, 9]])))
Xg = X.clone().requires_grad_(True)
loss = torch.linalg.lstsq(Xg, y).solution.sum() + torch.linalg.pinv(Xg).sum() + torch.linalg.svdvals(Xg).sum()
loss.backward()
print(round(loss.item(), 8), round(Xg.grad.sum().item(), 8))
try:
    torch.linalg.solve(torch.zeros(2, 2), torch.ones(2))
except torch.linalg.LinAlgError as e:
    print("caught:", type(e).__name__)
try:
    torch.linalg.cholesky(-torch.eye(2))
except RuntimeError as e:
    print("caught:", isinstance(e, torch.linalg.LinAlgError))
"""


def test_a_program_using_them_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("line, kind, words", [
    ("torch.linalg.solve(A, torch.ones(4))", "RuntimeError", "Incompatible shapes"),
    ("torch.linalg.solve(torch.ones(2, 3), torch.ones(2))", "RuntimeError", "square"),
    ("torch.linalg.solve(A.int(), torch.ones(3))", "RuntimeError", "floating point"),
    ("torch.linalg.lstsq(A, torch.ones(4, 1))", "RuntimeError", "should match"),
    ("torch.linalg.lstsq(A, torch.ones(3, 1), driver='x')", "RuntimeError", "driver"),
    ("torch.linalg.eigh(A, UPLO='X')", "RuntimeError", "UPLO"),
    ("torch.linalg.svd(torch.ones(3))", "RuntimeError", "at least 2 dimensions"),
    ("torch.linalg.pinv('a')", "TypeError", "must be Tensor"),
    ("torch.cov(torch.ones(2, 2, 2))", "RuntimeError", "two or fewer dimensions"),
    ("torch.cov(torch.ones(2, 2), correction='a')", "TypeError", "correction"),
    ("torch.linalg.qr(A, mode='x')", "RuntimeError", "unrecognized mode"),
    ("torch.linalg.qr(torch.ones(3))", "RuntimeError", "at least 2 dimensions"),
    ("torch.linalg.qr(torch.ones(3, 2, requires_grad=True), mode='r').R.sum().backward()", "RuntimeError",
     "mode='r'"),
])
def test_wrong_inputs_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nA = torch.eye(3)\ny = {line}\n")
    assert e["line"] == 3, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "torch.linalg.svd(torch.ones(10**5, 2))",  # the full U: 10**10 elements
    "torch.svd(torch.ones(3, 10**5), some=False)",
    "torch.linalg.solve(torch.eye(3000), torch.ones(3000))",
    "torch.linalg.pinv(torch.ones(3000, 3000))",
    "torch.linalg.lstsq(torch.ones(3000, 2000), torch.ones(3000, 1))",
    "torch.linalg.eigh(torch.eye(3000))",
    "torch.linalg.cholesky(torch.eye(3000))",
    "torch.cov(torch.ones(20000, 2))",
    "torch.linalg.qr(torch.ones(100000, 2), mode='complete')",  # Q: 10**10 elements
    "torch.qr(torch.ones(1, 1500, 1300))",
])
def test_sizes_and_work_a_program_picks_are_refused_first(line):
    e = err(f"import torch\ny = {line}\n")
    assert e["type"] == "LimitExceeded" and e["line"] == 2, e


@pytest.mark.parametrize("line", [
    "torch.linalg.eigh(A).__class__.__bases__", "torch.linalg.lstsq(A, A)._asdict()", "torch.linalg.solve.__globals__",
    "torch.linalg.svd(A).U.grad_fn.__class__.__mro__", "torch.linalg.__dict__", "torch.linalg.__getattr__",
    "type(torch.linalg.slogdet(A)).__init__", "torch.cov.__code__", "torch.linalg.qr(A)._make",
    "A.qr().Q.grad_fn._saved_self", "torch.qr.__wrapped__",
])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import torch\nA = torch.eye(3, requires_grad=True)\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 3 and not leaks(e["message"])
