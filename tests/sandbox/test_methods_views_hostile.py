"""Hostile programs against the names this round made reachable (Tensor.eq/ne/lt/le/gt/ge and torch's, new_zeros
and the other new_* factories, unbind, select, narrow, where/maximum/minimum as methods, exp_ and the other in-place
unary ops) and against in-place writes through views and bernoulli's nodes: sizes are refused before numpy
allocates, wrong types and indices raise PyTorch's errors with the program's line, nothing reaches the host."""
import pytest
from sandbox_testing import CLASSIC_LIMITS, err, leaks, ok, run


@pytest.mark.parametrize("expr, shape", [
    ("x.new_zeros(10**6, 10**6)", "[1000000, 1000000]"),
    ("x.new_ones((10**5, 10**5))", "[100000, 100000]"),
    ("x.new_full((10**9, 10**3), 1.0)", "[1000000000, 1000]"),
    ("x.new_empty(10**12)", "[1000000000000]"),
])
def test_new_factories_refuse_huge_sizes_before_allocating(expr, shape):
    e = err(f"import torch\nx = torch.ones(2)\ny = {expr}\n")
    assert e["type"] == "LimitExceeded" and shape in e["message"], e
    assert e["line"] == 3


@pytest.mark.parametrize("line, kind, words", [
    ("x.eq('a')", "TypeError", "eq() received an invalid combination of arguments"),
    ("x.gt(None)", "TypeError", "gt() received an invalid combination of arguments - got (NoneType)"),
    ("torch.lt(x, object)", "", ""),
    ("x.select(5, 0)", "IndexError", "Dimension out of range"),
    ("x.select(0, 10**30)", "IndexError", "out of range"),
    ("x.narrow(1, 2, 10**12)", "RuntimeError", "exceeds dimension size"),
    ("x.narrow(1, -10**12, 1)", "IndexError", "start out of range"),
    ("x.narrow(0, 0, -1)", "RuntimeError", "length must be non-negative"),
    ("torch.unbind(x, 7)", "IndexError", "Dimension out of range"),
    ("torch.tensor(1.0).unbind()", "IndexError", "no dimensions"),
    ("x.new_tensor('abc')", "", ""),
    ("x.pow_('a')", "", ""),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\n")
    assert e["line"] == 3, e
    if kind:
        assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


def test_unbind_of_a_long_dimension_is_bounded_by_the_budgets():
    out = run("import torch\nx = torch.zeros(10**6, 1)\nparts = torch.unbind(x)\nprint(len(parts))\n", CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded", out.error


def test_in_place_through_a_view_runs_in_the_sandbox_as_in_pytorch():
    out = ok("import torch\nx = torch.ones(2, 3, requires_grad=True)\ny = x * 2\nv = y[0]\nv += 1\nv.mul_(x[1])\n"
             "print(y, y.grad_fn, type(v.grad_fn).__name__)\n(y * y).sum().backward()\nprint(x.grad)\n")
    assert out == ("tensor([[3., 3., 3.],\n        [2., 2., 2.]], grad_fn=<CopySlices>) <CopySlices object at "
                   + out.split("<CopySlices object at ")[1].split(">")[0] + "> AsStridedBackward0\n"
                   "tensor([[12., 12., 12.],\n        [26., 26., 26.]])\n")  # PyTorch's


@pytest.mark.parametrize("source, kind, words", [
    ("x = torch.ones(3, requires_grad=True)\nx[0].add_(1)\n", "RuntimeError",
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ("x = torch.ones(3, requires_grad=True)\ny = (x * 2).expand(10**3, 3)\ny.add_(1)\n", "RuntimeError",
     "more than one element of the written-to tensor refers to a single memory location"),
    ("p = torch.full((3,), 0.5, requires_grad=True)\nb = torch.bernoulli(p, 0.3)\nb.sum().backward()\n", "RuntimeError",
     "derivative for aten::bernoulli is not implemented"),
    ("p = torch.full((3,), 1.5, requires_grad=True)\nb = torch.empty(3).bernoulli_(p)\n", "RuntimeError", ""),
])
def test_view_and_bernoulli_errors_are_pytorchs(source, kind, words):
    e = err("import torch\n" + source)
    assert e["type"] == kind and words in e["message"], e


def test_many_writes_through_views_stay_within_the_budgets():
    # each write records two nodes on the base: a loop of them stops on the graph budget, not on memory
    out = run("import torch\nx = torch.ones(100, 100, requires_grad=True)\ny = x * 1\n"
              "for i in range(10**6):\n    y[i % 100].add_(1)\n", CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded", out.error
