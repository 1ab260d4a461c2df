"""Hostile programs against the names issue 21 §3 added last: torch.std_mean / torch.var_mean and
torch.linalg.LinAlgError. Wrong arguments raise with the program's line, the class's attributes stay closed as
every class's do, nothing reaches the host; programs using them print what PyTorch prints."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

STD_MEAN_AND_LINALG_ERROR = """import torch
x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.25]], requires_grad=True)
s, m = torch.std_mean(x, dim=1)
v, m2 = torch.var_mean(x, 0, keepdim=True, correction=0)
(s * 2 + m ** 2 + v.sum() * m2.sum()).sum().backward()
print(s, m, v, m2, s.grad_fn.name(), m.grad_fn.name(), x.grad)
print(torch.std_mean(x, unbiased=False), torch.var_mean(x, True))
try:
    torch.linalg.inv(torch.ones(2, 2))
except torch.linalg.LinAlgError as e:
    print("caught", type(e), type(e).__name__, isinstance(e, RuntimeError), e)
    print(type(e) is torch.linalg.LinAlgError, type(e) == torch.linalg.LinAlgError, type(e) is RuntimeError)
try:
    torch.inverse(torch.zeros(3, 3))
except RuntimeError as e:
    print("caught as RuntimeError", isinstance(e, torch.linalg.LinAlgError), e.args)
try:
    raise torch.linalg.LinAlgError("mine")
except (ValueError, torch.linalg.LinAlgError) as e:
    print("raised", repr(e), str(e))
print(torch.linalg.LinAlgError, torch.linalg.LinAlgError.__name__)
try:
    torch.linalg.inv(torch.eye(2))
except torch.linalg.LinAlgError:
    print("not reached")
else:
    print("invertible")
"""


def test_a_program_with_std_mean_and_linalg_error_prints_what_pytorch_prints():
    same_as_cpython(STD_MEAN_AND_LINALG_ERROR)


@pytest.mark.parametrize("line, kind, words", [
    ("torch.std_mean(x, 10**9)", "IndexError", "Dimension out of range"),
    ("torch.var_mean(x, dim=(0, 0))", "RuntimeError", "appears multiple times"),
    ("torch.std_mean(x.long())", "RuntimeError", "std_mean only support floating point and complex dtypes"),
    ("torch.var_mean(x.int())", "RuntimeError", "var_mean only support floating point and complex dtypes"),
    ("torch.std_mean('a')", "TypeError", "std_mean(): argument 'input' (position 1) must be Tensor, not str"),
    ("torch.var_mean(x, foo=1)", "TypeError", "var_mean() got an unexpected keyword argument 'foo'"),
    ("torch.std_mean(x, 0, True, False, 3)", "TypeError", "positional arguments"),
    ("torch.linalg.LinAlgError(x=1)", "TypeError", "_LinAlgError() takes no keyword arguments"),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nx = torch.ones(2, 3, requires_grad=True)\ny = {line}\n")
    assert e["line"] == 3, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("attribute", [
    "__subclasses__", "mro", "__init__", "__dict__", "__bases__", "__mro__", "__module__", "__call__", "__new__",
    "__reduce_ex__", "__subclasshook__", "with_traceback",
])
@pytest.mark.parametrize("owner", ["torch.linalg.LinAlgError", "RuntimeError"])
def test_the_class_is_as_closed_as_every_class(owner, attribute):
    e = err(f"import torch\ny = {owner}.{attribute}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "e.__traceback__", "e.__class__.__init__", "e.__class__.__subclasses__()", "e.with_traceback(None)",
    "e.__dict__", "e.__reduce__()", "type(e).__bases__", "type(e).__globals__", "e.__cause__.__class__",
    "torch.std_mean.__globals__", "torch.var_mean.__code__", "torch.std_mean(x)[0].grad_fn.__class__.__bases__",
])
def test_a_caught_linalg_error_does_not_reach_outside_the_sandbox(line):
    e = err("import torch\nx = torch.ones(2, 2)\ntry:\n    torch.linalg.inv(x)\nexcept torch.linalg.LinAlgError as e:\n"
            f"    y = {line}\n    print(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 6 and not leaks(e["message"])


def test_a_loop_raising_the_class_stops_at_its_budget():
    e = err("import torch\nwhile True:\n    try:\n        raise torch.linalg.LinAlgError('x' * 1000)\n"
            "    except torch.linalg.LinAlgError as e:\n        pass\n")
    assert e["type"] == "LimitExceeded", e


SMALL_INTS = """import torch
t = torch.tensor([1, 2, 100, 7, -3], dtype=torch.int8)
u = torch.tensor([1, 2, 100, 7, 253], dtype=torch.uint8)
for x in (t, u, t.short()):
    print(5 - x, 5 % x, 300 - x, 300 % x, 300 // x, x.fmod(300), torch.sub(5, x))
    print(x < 1000, x > -1000, x == 300, 1000 > x, x.lt(1000), torch.ge(x, -129), x >= 2**63)
print(2 ** t, (-1) ** t, 1 ** t, t ** t)
print(t & 300, 300 | u, u ^ -1, 5 ^ t, (t > 2) & (t < 50), (t > 2) & 3)
try:
    t.float() & t
except NotImplementedError as e:
    print("refused:", e)
try:
    t < 2**64
except OverflowError as e:
    print("refused:", e)
"""


def test_small_int_tensors_wrap_as_pytorch_prints():
    same_as_cpython(SMALL_INTS)


@pytest.mark.parametrize("line, words", [
    ("t < 2**64", "int too big to convert"), ("2**70 - t", "int too big to convert"),
    ("t % 10**100", "int too big to convert"), ("t == -2**63 - 1", "can't convert negative int to unsigned"),
    ("torch.ones(2) * 2**64", "int too big to convert"), ("t.lt(-10**30)", "can't convert negative int to unsigned"),
])
def test_ints_past_64_bits_are_refused_with_the_programs_line(line, words):
    e = err(f"import torch\nt = torch.tensor([1, 2], dtype=torch.int8)\ny = {line}\n")
    assert e["type"] == "OverflowError" and words in e["message"] and e["line"] == 3, e
    assert not leaks(e["message"])


def test_negative_integer_powers_of_huge_tensors_stay_within_the_budgets():
    e = err("import torch\nt = -torch.arange(10**9, dtype=torch.int16)\ny = 2 ** t\n")
    assert e["type"] == "LimitExceeded", e
