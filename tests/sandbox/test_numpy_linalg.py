"""`np.linalg` inside programs prints what real NumPy prints (the same text run by CPython is the reference);
tensors reach it as arrays, and torch.linalg's norms in programs print what real torch prints."""
from __future__ import annotations

import importlib.util

import pytest
from sandbox_testing import ok, same_as_cpython

PROGRAMS = {
    "norms": """
import numpy as np
A = np.array([[4., 1.], [2., 3.]])
b = np.array([1., 2.])
print(np.linalg.norm(A), np.linalg.norm(A, 'nuc'), np.linalg.norm(A, 2), np.linalg.norm(b), np.linalg.norm(A, axis=1))
print(np.linalg.norm(A, ord=np.inf), np.linalg.norm(A, 1, keepdims=True), np.linalg.norm(b, ord=1))
""",
    "solve_inv_det": """
import numpy as np
A = np.array([[4., 1.], [2., 3.]])
print(np.linalg.inv(A))
print(np.linalg.det(A), np.linalg.det(np.eye(3, dtype=np.float32)))
print(np.linalg.solve(A, np.array([1., 2.])))
print(A @ np.linalg.inv(A))
""",
    "eigh_svd": """
import numpy as np
A = np.array([[4., 1.], [2., 3.]])
w, v = np.linalg.eigh(A @ A.T)
print(w, v)
print(np.linalg.eigh(np.eye(2)))
U, S, Vh = np.linalg.svd(A)
print(U, S, Vh)
r = np.linalg.svd(A, full_matrices=False)
print(r.S, type(r).__name__)
print(np.linalg.svd(A, compute_uv=False))
""",
    "lstsq_regression": """
import numpy as np
np.random.seed(0)
X = np.stack([np.ones(20), np.linspace(0, 1, 20)], 1)
y = 2 + 3 * X[:, 1] + np.random.randn(20) * 0.1
w, res, rank, sv = np.linalg.lstsq(X, y, rcond=None)
print(w, res, rank, sv)
""",
    "imports": """
from numpy.linalg import norm
import numpy.linalg as la
import numpy as np
print(norm(np.ones(3)), la.det(np.eye(3)))
try:
    la.inv(np.zeros((2, 2)))
except ValueError as e:  # (a program sees numpy's LinAlgError as the ValueError it subclasses)
    print(e)
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numpy_linalg_prints_as_numpy(name):
    same_as_cpython(PROGRAMS[name])


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_torch_linalg_in_programs_prints_as_torch():
    source = """import torch
A = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
n = torch.linalg.norm(A, 'nuc')
print(n, torch.linalg.matrix_norm(A, 2), torch.linalg.vector_norm(A, 1), torch.linalg.matrix_norm(A, -1))
n.backward()
print(A.grad)
print(A.norm(p='nuc'), torch.amax(A, 1), torch.linalg.svdvals(A))
g, = torch.autograd.grad(torch.linalg.matrix_norm(A, 2), A, create_graph=True)
print(torch.autograd.grad(g.sum(), A)[0])
"""
    from sandbox_testing import cpython

    expected, error = cpython(source)
    assert error is None
    assert ok(source) == expected
