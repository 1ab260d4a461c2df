"""torch.hypot / xlogy / heaviside in the sandbox (issue 21 §3): reachable as in PyTorch, refused past budgets."""
from __future__ import annotations

import pytest
from sandbox_testing import err, ok

torch = pytest.importorskip("torch")

PROGRAM = """import torch
a = torch.tensor([3., 0., -1.], requires_grad=True)
b = torch.tensor([4., 1., 2.])
h = torch.hypot(a, b)
h.sum().backward()
print(h, a.grad, a.xlogy(b), torch.heaviside(b, b), torch.xlogy(2, b))
"""


def test_the_program_prints_what_pytorch_prints():
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(PROGRAM.replace("import torch\n", ""), "<program>", "exec"), {"torch": torch})  # noqa: S102
    assert ok(PROGRAM) == out.getvalue()


@pytest.mark.parametrize("call", ["torch.hypot(torch.ones(3000, 1), torch.ones(1, 3000))",
                                  "torch.xlogy(torch.ones(3000, 1), torch.ones(1, 3000))",
                                  "torch.heaviside(torch.ones(3000, 1), torch.ones(1, 3000))"])
def test_hostile_broadcast_past_the_element_budget_is_refused(call):
    e = err(f"import torch\n{call}")
    assert e["type"] == "LimitExceeded", e


@pytest.mark.parametrize("call", ["torch.hypot(torch.ones(2), 'x')", "torch.heaviside(torch.ones(2), 1.0)",
                                  "torch.xlogy(torch.ones(2), [1])", "torch.ones(2).hypot(print)"])
def test_hostile_wrong_types_are_type_errors(call):
    e = err(f"import torch\n{call}")
    assert e["type"] == "TypeError", e


def test_heaviside_backward_is_pytorchs_error():
    e = err("import torch\nx = torch.ones(2, requires_grad=True)\ntorch.heaviside(x, x.detach()).sum().backward()")
    assert (e["type"], e["message"]) == ("RuntimeError", "derivative for aten::heaviside is not implemented")


@pytest.mark.parametrize("use", ["torch.ones(2, dtype=torch.bfloat16)", "torch.ones(2).to(torch.bfloat16)"])
def test_bfloat16_is_a_name_and_its_tensors_are_refused_with_the_reason(use):
    # a program may name it (nanoGPT's dtype table), never compute in it (tests/sandbox/test_redteam_amp_compile.py)
    assert ok("import torch\nprint(torch.bfloat16)") == "torch.bfloat16\n"
    e = err(f"import torch\nx = {use}")
    assert e["type"] == "TypeError", e
    assert "numpy has no bfloat16" in e["message"]
