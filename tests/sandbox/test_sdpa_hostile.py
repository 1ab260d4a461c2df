"""F.scaled_dot_product_attention in a sandboxed program: the attention matrix a program's shapes ask for is bounded
before it is made, bad arguments raise on the program's line, and nothing reaches outside."""
import pytest
from sandbox_testing import err, leaks, ok


def test_a_causal_attention_layer_runs():
    out = ok("import torch\nimport torch.nn.functional as F\nq = torch.ones(1, 2, 3, 4, requires_grad=True)\n"
             "y = F.scaled_dot_product_attention(q, q, q, is_causal=True)\ny.sum().backward()\n"
             "print(y.shape, q.grad.shape, y[0, 0, 0])\n")
    assert out == "torch.Size([1, 2, 3, 4]) torch.Size([1, 2, 3, 4]) tensor([1., 1., 1., 1.], grad_fn=<SelectBackward0>)\n"


@pytest.mark.parametrize("line, kind", [
    ("F.scaled_dot_product_attention(torch.ones(1, 10**5, 1), torch.ones(1, 10**5, 1), torch.ones(1, 10**5, 1))",
     "LimitExceeded"),
    ("F.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(3, 3, dtype=torch.bool), is_causal=True)",
     "RuntimeError"),
    ("F.scaled_dot_product_attention(q, torch.ones(2, 3, 5), q)", "RuntimeError"),
    ("F.scaled_dot_product_attention(q, q, q, enable_gqa=True)", "NotImplementedError"),
    ("F.scaled_dot_product_attention('a', q, q)", "TypeError"),
    ("F.scaled_dot_product_attention(q, q, q, dropout_p=2.0)", "ValueError"),
    ("F.scaled_dot_product_attention.__globals__", "AttributeError"),
    ("F.scaled_dot_product_attention(q, q, q).grad_fn.__class__.__mro__", "AttributeError"),
])
def test_attention_is_bounded_and_sealed(line, kind):
    e = err(f"import torch\nimport torch.nn.functional as F\nq = torch.ones(2, 3, 4)\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])
