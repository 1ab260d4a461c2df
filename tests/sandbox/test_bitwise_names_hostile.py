"""torch.bitwise_* / the << >> operators / their in-place forms and torch.result_type / promote_types / can_cast in
the sandbox: reachable as in PyTorch (programs print what it prints), refused past budgets, wrong arguments raised
with the program's line, nothing reaching the host through them."""
from __future__ import annotations

import pytest
from sandbox_testing import err, leaks, same_as_cpython

torch = pytest.importorskip("torch")

PROGRAM = """import torch
a = torch.tensor([1, -3, 64, 127], dtype=torch.int8)
b = torch.tensor([True, False, True, False])
print(a << 2, a >> torch.tensor([0, 1, 7, 8]), 2 << a.abs(), torch.bitwise_left_shift(a, 1), a.bitwise_right_shift(2))
print(torch.bitwise_and(a, 3), torch.bitwise_or(3, a), a.bitwise_xor(b), torch.bitwise_not(a), ~b, b.bitwise_not())
c = a.clone()
c &= 5
c <<= 1
c >>= 1
c |= b
c ^= 3
print(c, c.clone().bitwise_and_(7), c.clone().bitwise_not_(), b.clone().logical_and_(a), a.clone().logical_or_(b))
print(a.bitwise_left_shift_(1), a.bitwise_right_shift_(torch.tensor([1, 2, 3, 9])), a.bitwise_xor_(2**8 + 1))
print(torch.result_type(torch.tensor(5), a), torch.result_type(2.5, a), torch.promote_types(torch.int32, torch.float16))
print(torch.can_cast(torch.float32, torch.int8), torch.can_cast(torch.int8, torch.uint8))
print((torch.tensor(5) - a).dtype, (torch.tensor(5.0, dtype=torch.float64) + torch.ones(2)).dtype)
for bad in (lambda: torch.ones(2) << 1, lambda: ~torch.ones(2), lambda: b.bitwise_and_(a), lambda: b << b):
    try:
        bad()
    except (NotImplementedError, TypeError, RuntimeError) as e:
        print(type(e).__name__, e)
"""


def test_a_program_with_the_names_prints_what_pytorch_prints():
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("call", [
    "torch.bitwise_and(torch.ones(3000, 1).long(), torch.ones(1, 3000).long())",
    "torch.ones(3000, 1).long() << torch.ones(1, 3000).long()",
    "1 >> torch.ones(1, 3000).long().expand(3000, 3000).contiguous()",
    "torch.bitwise_xor(torch.ones(3000, 1).bool(), torch.ones(1, 3000).bool())",
])
def test_hostile_broadcast_past_the_element_budget_is_refused(call):
    e = err(f"import torch\ny = {call}\n")
    assert e["type"] == "LimitExceeded", e


@pytest.mark.parametrize("line, kind, words", [
    ("torch.bitwise_and(t, 'x')", "TypeError", "bitwise_and() received an invalid combination of arguments"),
    ("torch.bitwise_not(1)", "TypeError", "bitwise_not(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.bitwise_left_shift(print, t)", "TypeError", "invalid combination of arguments"),
    ("t << 10**30", "OverflowError", "int too big to convert"),
    ("2**70 >> t", "OverflowError", "int too big to convert"),
    ("t.float() << 1", "NotImplementedError", "\"lshift_cpu\" not implemented for 'Float'"),
    ("~t.double()", "TypeError", "~ (operator.invert) is only implemented on integer and Boolean-type tensors"),
    ("t.bool().bitwise_or_(t)", "RuntimeError", "result type Char can't be cast to the desired output type Bool"),
    ("torch.result_type(t)", "TypeError", "result_type() received an invalid combination of arguments"),
    ("torch.result_type(t, [1])", "TypeError", "got (Tensor, list)"),
    ("torch.promote_types(1, torch.int8)", "TypeError", "argument 'type1' (position 1) must be torch.dtype, not int"),
    ("torch.can_cast(torch.int8, print)", "TypeError", "argument 'to' (position 2) must be torch.dtype"),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nt = torch.tensor([1, 2], dtype=torch.int8)\ny = {line}\n")
    assert e["line"] == 3, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "torch.bitwise_and.__globals__", "torch.bitwise_left_shift.__code__", "torch.result_type.__globals__",
    "torch.can_cast.__closure__", "t.bitwise_and_.__func__", "t.__lshift__.__globals__", "torch.promote_types.__module__",
    "t.bitwise_not.__self__.__class__.__bases__", "torch.bitwise_not.__wrapped__",
])
def test_the_functions_reach_nothing_outside_the_sandbox(line):
    e = err(f"import torch\nt = torch.tensor([1, 2], dtype=torch.int8)\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert e["line"] == 3 and not leaks(e["message"])


def test_a_loop_of_in_place_shifts_stops_at_its_budget():
    e = err("import torch\nt = torch.ones(100000, dtype=torch.int64)\nwhile True:\n    t <<= 1\n    t >>= 1\n")
    assert e["type"] == "LimitExceeded", e
