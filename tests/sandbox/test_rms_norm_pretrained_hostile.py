"""nn.RMSNorm, F.rms_norm and nn.Embedding.from_pretrained in the sandbox: what a program prints is PyTorch's; the
class attribute reached is that one alone; budgets and wrong arguments are refused on their line."""
from __future__ import annotations

import pytest
from sandbox_testing import err, same_as_cpython

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
vectors = torch.randn(5, 4)
emb = nn.Embedding.from_pretrained(vectors, freeze=False)
norm = nn.RMSNorm(4)
x = norm(emb(torch.tensor([[1, 2], [4, 4]])))
x.sum().backward()
print(norm, emb, x, emb.weight.grad, F.rms_norm(vectors, [4], eps=1e-3))
print(nn.EmbeddingBag.from_pretrained(vectors, mode='max')(torch.tensor([[0, 3]])))
"""


def test_the_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("expr", ["nn.Linear.from_pretrained", "nn.Embedding.__init__", "nn.Embedding.mro",
                                  "nn.Embedding.forward", "nn.Embedding.reset_parameters", "nn.RMSNorm.from_pretrained"])
def test_no_other_class_attribute_is_reachable(expr):
    e = err(f"import torch\nimport torch.nn as nn\nx = {expr}")
    assert e["type"] == "AttributeError" and e["line"] == 3, e


@pytest.mark.parametrize("call, kind", [
    ("nn.Embedding.from_pretrained([[1.0, 2.0]])", "TypeError"),
    ("nn.Embedding.from_pretrained(print)", "TypeError"),
    ("nn.EmbeddingBag.from_pretrained('table')", "TypeError"),
    ("nn.Embedding.from_pretrained(torch.ones(3))", "AssertionError"),
    ("nn.RMSNorm(10 ** 9)", "LimitExceeded"),
    ("nn.RMSNorm([4000, 4000])", "LimitExceeded"),
    ("F.rms_norm(torch.ones(2, 3), [4])", "RuntimeError"),
    ("F.rms_norm(torch.ones(2, 3), [3], eps='x')", "TypeError"),
])
def test_wrong_or_oversized_arguments_are_refused_on_their_line(call, kind):
    e = err(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n{call}")
    assert e["type"] == kind and e["line"] == 4, e
