"""Hostile programs against nn.ReflectionPad1d/2d, ReplicationPad1d/2d, ZeroPad1d/2d, ConstantPad1d/2d: wrong
arguments raise with the program's line, huge paddings are refused before anything is allocated, and the modules
reach nothing outside."""
import pytest
from sandbox_testing import err, leaks


@pytest.mark.parametrize("line, kind", [
    ("torch.nn.ReflectionPad1d(5)(x)", "RuntimeError"),
    ("torch.nn.ReflectionPad2d('a')", "TypeError"),
    ("torch.nn.ReplicationPad1d((1, 2, 3))", "TypeError"),
    ("torch.nn.ConstantPad2d(1, 'v')", "TypeError"),
    ("torch.nn.ZeroPad1d(1.5)", "TypeError"),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind):
    e = err(f"import torch\nx = torch.ones(2, 3, requires_grad=True)\ny = {line}\n")
    assert e["line"] == 3 and e["type"] == kind, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "torch.nn.ZeroPad2d(10**5)(torch.ones(1, 2, 2))",
    "torch.nn.ConstantPad1d(10**10, 1.)(torch.ones(2, 2))",
    "torch.nn.ReplicationPad2d(10**5)(torch.ones(1, 1, 2, 2))",
])
def test_huge_paddings_are_refused_before_they_are_made(line):
    e = err(f"import torch\ny = {line}\n")
    assert e["type"] == "LimitExceeded" and e["line"] == 2, e


@pytest.mark.parametrize("line", [
    "torch.nn.ZeroPad2d(1).forward.__func__", "torch.nn.ReflectionPad1d(1).__class__.__mro__",
    "torch.nn.ConstantPad1d(1, 0).forward.__globals__",
])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 3 and not leaks(e["message"])
