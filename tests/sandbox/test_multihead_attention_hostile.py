"""nn.MultiheadAttention in a sandboxed program: a self-attention block trains and prints what PyTorch prints (to the
digits it shows); sizes a program picks are bounded, bad arguments raise on its line, and nothing reaches outside."""
import pytest
from sandbox_testing import err, leaks, ok

PROGRAM = """import torch
import torch.nn as nn
torch.manual_seed(0)
attn = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
x = torch.randn(4, 5, 8)
mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
opt = torch.optim.SGD(attn.parameters(), lr=0.1)
for step in range(3):
    out, weights = attn(x, x, x, attn_mask=mask)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.4f}", weights.shape)
print(attn, [n for n, _ in attn.named_parameters()])
"""


def test_a_self_attention_block_trains():
    pytest.importorskip("torch")
    import contextlib
    import io

    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        exec(compile(PROGRAM, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102 - our own test program
    assert ok(PROGRAM) == expected.getvalue()


@pytest.mark.parametrize("line, kind", [
    ("nn.MultiheadAttention(10**6, 1)", "LimitExceeded"),
    ("nn.MultiheadAttention(8, 3)", "AssertionError"),
    ("nn.MultiheadAttention(8, 2, kdim=4)", "NotImplementedError"),
    ("m(torch.ones(2, 10**5, 8), torch.ones(2, 10**5, 8), torch.ones(2, 10**5, 8))", "LimitExceeded"),
    ("m(torch.ones(3, 2, 8), torch.ones(3, 2, 8), torch.ones(3, 2, 8), is_causal=True)", "RuntimeError"),
    ("m(torch.ones(3, 2, 4), torch.ones(3, 2, 4), torch.ones(3, 2, 4))", "AssertionError"),
    ("m(torch.ones(3, 2, 8), torch.ones(3, 2, 8), torch.ones(3, 2, 8), attn_mask=torch.ones(5, 5))", "RuntimeError"),
    ("m._attend", "AttributeError"), ("m.forward.__globals__", "AttributeError"),
    ("m.out_proj.__class__.__mro__", "AttributeError"),
])
def test_attention_modules_are_bounded_and_sealed(line, kind):
    e = err(f"import torch\nimport torch.nn as nn\nm = nn.MultiheadAttention(8, 2)\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line, kind", [
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 10**7)", "LimitExceeded"),
    ("nn.TransformerEncoder(nn.Linear(2, 2), 2)", "TypeError"),
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), -1)", "TypeError"),
    ("nn.TransformerEncoderLayer(8, 2, 16, activation='tanh')", "RuntimeError"),
    ("nn.Transformer(8, 2, custom_encoder=nn.Linear(8, 8))", "NotImplementedError"),
    ("nn.Transformer(8, 2, num_encoder_layers=10**7)", "LimitExceeded"),
    ("nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 10**7)", "LimitExceeded"),
    ("nn.TransformerDecoder(nn.TransformerEncoderLayer(8, 2, 16), 2)", "TypeError"),
    ("nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2.5)", "TypeError"),
    ("nn.Transformer(8, 2, 1, 1, 16)(torch.ones(3, 2, 8), torch.ones(3, 4, 8))", "RuntimeError"),
    ("nn.Transformer(8, 2, 1, 1, 16)(torch.ones(3, 2, 8), torch.ones(3, 2, 6))", "RuntimeError"),
    ("nn.TransformerDecoderLayer(8, 2, 16)(torch.ones(3, 2, 8), 'memory')", "AttributeError"),
    ("nn.Transformer.generate_square_subsequent_mask(10**6)", "LimitExceeded"),
    ("nn.Linear.generate_square_subsequent_mask(3)", "AttributeError"),
    ("nn.Transformer.__init__", "AttributeError"), ("nn.Transformer.generate_square_subsequent_mask.__globals__",
                                                    "AttributeError"),
])
def test_transformer_layers_are_bounded_and_sealed(line, kind):
    e = err(f"import torch\nimport torch.nn as nn\nm = nn.MultiheadAttention(8, 2)\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])
