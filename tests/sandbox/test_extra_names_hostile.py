"""engine/tensor_extra_names.py's names in the sandbox (issue 21 §3): a program using them prints what PyTorch prints;
budgets bound what they make and how long their Python loops run; wrong arguments are errors on their line."""
from __future__ import annotations

import dataclasses

import pytest
from sandbox_testing import DEFAULT_LIMITS, err, same_as_cpython

PROGRAM = """import torch
torch.manual_seed(0)
x = torch.randint(0, 4, (3, 9)).float().requires_grad_()
m = torch.mode(x, 1)
k = x.kthvalue(4, dim=0, keepdim=True)
lo, hi = torch.aminmax(x)
(m.values.sum() + k.values.sum() + hi - lo + torch.msort(x)[0].sum()).backward()
print(m, k, lo, hi, x.grad)
p = torch.rand(5) * 1.8 - 0.9
print(torch.erfinv(p), torch.special.erfc(p), p.erfc(), torch.special.erfinv(p))
w = torch.empty(4).uniform_(-0.5, 0.5)
w.erfinv_()
print(w, torch.aminmax(x, dim=1))
print(torch.gcd(torch.tensor([12, -18, 0]), torch.tensor([8, 6, 0])), torch.tensor([4, 6]).lcm(torch.tensor(6)))
print(torch.isin(torch.arange(6), torch.tensor([1, 4])), torch.isin(torch.tensor([1, 2]), 2, invert=True))
print(torch.vander(torch.tensor([1.0, 2.0, 3.0])), torch.vander(torch.tensor([2, 3]), N=4, increasing=True))
a = torch.tensor([0.5, 1.5, 4.0], requires_grad=True)
g = torch.lgamma(a) + a.digamma() + torch.special.gammaln(a) + torch.special.psi(a) + torch.polygamma(1, a)
g.sum().backward()
print(g, a.grad, torch.lgamma(torch.tensor([0, -1, 3])), torch.special.polygamma(2, torch.tensor([2.0])))
"""


def test_the_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("call", [
    "torch.vander(torch.ones(4000), N=4000)",
    "torch.gcd(torch.ones(3000, 1, dtype=torch.long), torch.ones(1, 3000, dtype=torch.long))",
])
def test_what_they_would_make_past_the_element_budget_is_refused(call):
    e = err(f"import torch\nx = 1\n{call}")
    assert e["type"] == "LimitExceeded" and e["line"] == 3, e


@pytest.mark.parametrize("call", [
    "torch.mode(torch.randint(0, 1000, (1, 200_000)).float(), 1)",
    "torch.kthvalue(torch.ones(20_000, 5), 2, 1)",
    "torch.mode(torch.randint(0, 9, (20_000, 10)).float(), 1)",
    "torch.polygamma(3, torch.rand(2_000_000) + 0.5)",
])
def test_long_picks_spend_the_programs_steps(call):
    # their rows are sorted (polygamma's zeta summed) in Python: the run's step or time budget stops them midway
    e = err(f"import torch\n{call}", limits=dataclasses.replace(DEFAULT_LIMITS, max_steps=200))
    assert e["type"] == "LimitExceeded" and e["line"] == 2, e
    assert "steps" in e["message"] or "longer than" in e["message"], e


@pytest.mark.parametrize("call", [
    "torch.kthvalue(torch.ones(3), 'a')", "torch.kthvalue([1, 2], 1)", "torch.mode(torch.ones(3), 'x')",
    "torch.aminmax(torch.ones(3), dim='x')", "torch.gcd(torch.ones(2, dtype=torch.long), 3)", "torch.erfinv('x')",
    "torch.vander(torch.ones(3), N='x')", "torch.isin('a', 'b')", "torch.special.erfc([0.5])", "torch.msort(print)",
    "torch.polygamma(1.5, torch.ones(2))", "torch.lgamma('x')", "torch.special.psi(3)",
])
def test_wrong_arguments_are_type_errors_on_their_line(call):
    e = err(f"import torch\n{call}")
    assert e["type"] == "TypeError" and e["line"] == 2, e


@pytest.mark.parametrize("call", ["torch.kthvalue(torch.ones(3), 5)", "torch.mode(torch.ones(2, 0), 1)",
                                  "torch.gcd(torch.ones(2), torch.ones(2))", "torch.vander(torch.ones(2, 2))"])
def test_bad_values_are_torch_s_errors_on_their_line(call):
    e = err(f"import torch\nx = 0\n{call}")
    assert e["type"] in ("RuntimeError", "IndexError", "NotImplementedError") and e["line"] == 3, e


INFERENCE = """import torch
print(torch.is_inference_mode_enabled())
with torch.inference_mode():
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    with torch.inference_mode(False):
        print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    print(torch.is_inference_mode_enabled())
@torch.inference_mode()
def f():
    return torch.is_inference_mode_enabled()
@torch.inference_mode(False)
def g():
    return torch.is_inference_mode_enabled()
print(f(), g(), torch.is_inference_mode_enabled())
try:
    with torch.inference_mode():
        raise ValueError("inside")
except ValueError:
    print(torch.is_inference_mode_enabled())
"""


def test_inference_mode_is_reported_as_pytorch_reports_it():
    pytest.importorskip("torch")
    assert same_as_cpython(INFERENCE).split() == "False True False False True True True False False False".split()
