"""engine/tensor_composites.py's names in the sandbox: a program using them prints what PyTorch prints; what they
would make past the budgets is refused before it is made; their loops spend the program's steps; wrong arguments
are errors on their line."""
from __future__ import annotations

import pytest
from sandbox_testing import err, ok, same_as_cpython

PROGRAM = """import torch
torch.manual_seed(0)
a = torch.randn(2, 3, requires_grad=True)
b = torch.randn(3, 4)
m = torch.randn(3, 3, requires_grad=True)
y = torch.tensordot(a, b, dims=1).sum() + torch.inner(a, a).trace() + a.inner(a[0]).sum() + m.matrix_power(3).sum()
y = y + torch.trapezoid(a) .sum() + torch.trapezoid(a, dx=0.25, dim=0).sum()
y.backward()
print(y, a.grad, m.grad)
print(torch.cartesian_prod(torch.arange(2), torch.arange(3)), torch.combinations(torch.tensor([1., 2., 3.]), r=2))
print(torch.trapezoid(torch.tensor([1., 4., 9.]), torch.tensor([0., 1., 3.])), torch.matrix_power(torch.eye(2) * 2, -1))
"""


def test_the_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("call", [
    "torch.combinations(torch.arange(1000), r=4)",
    "torch.combinations(torch.arange(3000), with_replacement=True)",
    "torch.cartesian_prod(torch.arange(3000), torch.arange(3000))",
    "torch.tensordot(torch.ones(3000, 1), torch.ones(1, 3000), dims=1)",
    "torch.tensordot(torch.ones(3000), torch.ones(3000), dims=0)",
])
def test_what_they_would_make_past_the_element_budget_is_refused(call):
    e = err(f"import torch\nx = 1\n{call}")
    assert e["type"] == "LimitExceeded" and e["line"] == 3, e


def test_a_huge_power_spends_steps_not_time():
    out = ok("import torch\nprint(torch.matrix_power(torch.eye(2), 10 ** 18))")
    assert out == "tensor([[1., 0.],\n        [0., 1.]])\n"


@pytest.mark.parametrize("call", [
    "torch.tensordot(torch.ones(2), print)", "torch.inner([1.0], torch.ones(1))", "torch.matrix_power(torch.eye(2), 1.5)",
    "torch.trapezoid(torch.ones(3), dx='x')", "torch.combinations([1, 2])", "torch.cartesian_prod(torch.ones(2), 'ab')",
    "torch.tensordot(torch.ones(2, 2), torch.ones(2, 2), dims='ab')", "torch.trapezoid(torch.ones(3), torch.ones(3), dx=1.0)",
])
def test_wrong_arguments_are_type_errors_on_their_line(call):
    e = err(f"import torch\n{call}")
    assert e["type"] == "TypeError" and e["line"] == 2, e
