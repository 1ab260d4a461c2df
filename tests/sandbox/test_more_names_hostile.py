"""engine/tensor_more_names.py's names in the sandbox (issue 21 §3): a program using them prints what PyTorch prints;
budgets bound what they make and how long their loops run; wrong arguments are PyTorch's errors on their line."""
from __future__ import annotations

import dataclasses

import pytest
from sandbox_testing import DEFAULT_LIMITS, err, same_as_cpython

PROGRAM = """import torch
torch.manual_seed(0)
x = torch.randn(3, 4, requires_grad=True)
y = torch.fmax(x, torch.zeros(3, 4)) + x.fmin(torch.ones(1, 4)) + torch.copysign(x, -1.0) + x.rot90(2)
y = y + torch.take(x, torch.tensor([[0, 11], [5, 5], [1, 2]])).repeat(1, 2)
z = torch.baddbmm(torch.ones(3, 4), x.reshape(1, 3, 4), torch.eye(4).reshape(1, 4, 4), beta=0.5)
z.sum().backward(retain_graph=True)
y.sum().backward()
print(y, z, x.grad)
print(torch.rot90(x, 1).shape, [t.shape for t in torch.tensor_split(x, 3, dim=1)], torch.ravel(x).shape)
print(torch.column_stack([torch.arange(3), torch.ones(3, 2, dtype=torch.long)]))
print(torch.searchsorted(torch.tensor([1.0, 2.0, 4.0]), torch.tensor([0.5, 2.0, 5.0]), right=True))
print(torch.bucketize(torch.tensor([1, 5, 9]), torch.tensor([2, 4, 6, 8])), torch.signbit(torch.tensor([-0.0, 1.0])))
print(torch.float_power(torch.tensor([2, 3]), 2), torch.sinc(torch.tensor([0.0, 0.5])))
print(torch.logaddexp(torch.tensor([0.0, 1.0]), torch.tensor([0.0, -1.0])))
import torch.special as S
from torch.special import expit
p = torch.rand(10, requires_grad=True)
S.logit(p, eps=0.1).sum().backward()
print(torch.logit(p), p.logit(0.2), expit(torch.tensor([0.0, 2.0])), S.softmax(torch.tensor([1.0, 2.0]), 0), p.grad)
"""


def test_the_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("call", [
    "torch.fmax(torch.ones(3000, 1), torch.ones(1, 3000))",
    "torch.logaddexp(torch.ones(3000, 1), torch.ones(1, 3000))",
    "torch.copysign(torch.ones(3000, 1), torch.ones(1, 3000))",
    "torch.baddbmm(torch.ones(1, 1, 1), torch.ones(1, 3000, 1), torch.ones(1, 1, 3000))",
    "torch.take(torch.ones(2), torch.zeros(3000, 3000, dtype=torch.long))",
    "torch.float_power(torch.ones(3000, 1), torch.ones(1, 3000))",
    "torch.special.xlogy(torch.ones(3000, 1), torch.ones(1, 3000))",
])
def test_what_they_would_make_past_the_element_budget_is_refused(call):
    e = err(f"import torch\nx = 1\n{call}")
    assert e["type"] == "LimitExceeded" and e["line"] == 3, e


def test_a_product_past_the_work_budget_is_refused():
    e = err("import torch\na = torch.ones(1, 1000, 1000)\ntorch.baddbmm(torch.ones(1), a, torch.ones(1, 1000, 1000))")
    assert e["type"] == "LimitExceeded" and e["line"] == 3 and "multiply-adds" in e["message"], e


@pytest.mark.parametrize("call", [
    "torch.tensor_split(torch.ones(3), 10 ** 8)",
    "torch.tensor_split(torch.ones(3), list(range(10 ** 6)))",
    "torch.searchsorted(torch.ones(10 ** 6, 1), torch.ones(10 ** 6, 1))",
    "torch.column_stack([torch.ones(1)] * 10 ** 6)",
])
def test_their_loops_spend_the_programs_steps(call):
    e = err(f"import torch\n{call}", limits=dataclasses.replace(DEFAULT_LIMITS, max_steps=20_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 2 and "steps" in e["message"], e


@pytest.mark.parametrize("call", [
    "torch.fmax(torch.ones(2), 'x')", "torch.take(torch.ones(2), [0])", "torch.rot90([[1, 2]])",
    "torch.searchsorted(torch.ones(2), 'a')", "torch.column_stack(torch.ones(2))", "torch.copysign(print, 1.0)",
    "torch.float_power(torch.ones(2), print)", "torch.baddbmm(torch.ones(1), torch.ones(1, 1, 1), torch.ones(1, 1, 1), beta='x')",
    "torch.ones(2).sinc(2)", "torch.tensor_split(torch.ones(2), 'ab')", "torch.logit(torch.ones(2), eps='x')",
    "torch.special.logit([0.5])", "torch.special.expit('x')",
])
def test_wrong_arguments_are_type_errors_on_their_line(call):
    e = err(f"import torch\n{call}")
    assert e["type"] == "TypeError" and e["line"] == 2, e


def test_torch_special_reaches_its_names_alone():
    e = err("import torch\ntorch.special.bessel_j0(torch.ones(2))")
    assert e["type"] == "AttributeError" and "exists in PyTorch but is not available" in e["message"], e
    e = err("import torch.special as S\nS.torch")
    assert e["type"] == "AttributeError" and e["line"] == 2, e


def test_their_errors_are_pytorchs():
    e = err("import torch\ntorch.take(torch.ones(2, 3), torch.tensor([6]))")
    assert (e["type"], e["message"]) == ("IndexError", "out of range: tried to access index 6 on a tensor of 6 elements.")
    e = err("import torch\ntorch.rot90(torch.ones(2, 2), 1, [1, 1])")
    assert (e["type"], e["message"]) == ("RuntimeError", "expected rotation dims to be different, but got dim0 = 1 and dim1 = 1")
