"""Hostile programs against nn.PReLU/F.prelu, nn.GLU/F.glu, nn.CosineSimilarity/F.cosine_similarity,
nn.PairwiseDistance/F.pairwise_distance and nn.GroupNorm/F.group_norm: a program using them prints what PyTorch
prints, wrong arguments raise with the program's line, sizes stay bounded, nothing reaches the host."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

pytest.importorskip("torch")

LAYERS = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.PReLU(8), nn.GLU(), nn.Linear(4, 6))
gn = nn.GroupNorm(3, 6)
x = torch.randn(5, 4)
h = gn(net(x).unsqueeze(-1)).squeeze(-1)
cos = nn.CosineSimilarity(dim=1)
pd = nn.PairwiseDistance(p=1.0, keepdim=True)
loss = (1 - cos(h, torch.ones(5, 6))).mean() + pd(h, torch.zeros(5, 6)).mean()
loss.backward()
print(net, gn, cos, pd)
print(round(loss.item(), 4), net[1].weight.grad.shape, gn.weight.grad.abs().sum() > 0)
print(net[1].num_parameters, net[1].init, net[2].dim, gn.num_groups, gn.num_channels, gn.eps, gn.affine)
print(F.prelu(torch.tensor([-1.0, 2.0]), torch.tensor([0.5])), F.glu(torch.arange(4.0)))
print(F.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]])))
print(F.pairwise_distance(torch.tensor([[1.0, 2.0]]), torch.tensor([[0.0, 0.0]])))
print(F.group_norm(torch.arange(8.0).reshape(1, 4, 2), 2))
print(cos.dim, cos.eps, pd.norm, pd.eps, pd.keepdim)
"""


def test_a_program_with_the_layers_prints_what_pytorch_prints():
    same_as_cpython(LAYERS)


HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nx = torch.ones(2, 4, 3)\n"


@pytest.mark.parametrize("line, kind, words", [
    ("F.glu(torch.ones(2, 3))", "RuntimeError", "Halving dimension must be even"),
    ("F.glu(x, 10 ** 20)", "IndexError", "Dimension out of range"),
    ("F.glu('x')", "TypeError", "must be Tensor"),
    ("F.prelu(x, torch.ones(3))", "RuntimeError", "Mismatch of parameter numbers"),
    ("F.prelu(x, [0.25])", "TypeError", "must be Tensor"),
    ("F.cosine_similarity(x, torch.ones(5))", "RuntimeError", "size of tensor a"),
    ("F.cosine_similarity(x, x, dim=7)", "IndexError", "Dimension out of range"),
    ("F.pairwise_distance(x, print)", "TypeError", "must be Tensor"),
    ("F.group_norm(x, 3)", "RuntimeError", "divisible by num_groups"),
    ("F.group_norm(x, 0)", "ZeroDivisionError", ""),
    ("nn.GroupNorm(3, 4)", "ValueError", "num_channels (4) must be divisible by num_groups (3)"),
    ("nn.PReLU(10 ** 12)", "LimitExceeded", "max_tensor_elements"),
    ("nn.GroupNorm(1, 10 ** 12)", "LimitExceeded", "max_tensor_elements"),
    ("nn.PReLU(4)(torch.ones(2, 3))", "RuntimeError", "Mismatch of parameter numbers"),
    ("nn.GLU(dim='a')(x)", "TypeError", ""),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(HEAD + f"y = {line}\n")
    assert e["line"] == 5, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("attribute", [
    "forward.__globals__", "__dict__", "__class__.__init__", "_parameters", "weight._data", "weight.__class__.__bases__",
    "forward.__func__", "reset_parameters.__self__",
])
@pytest.mark.parametrize("owner", ["nn.PReLU()", "nn.GLU()", "nn.CosineSimilarity()", "nn.PairwiseDistance()",
                                   "nn.GroupNorm(2, 4)"])
def test_the_modules_stay_closed(owner, attribute):
    e = err(HEAD + f"m = {owner}\ny = m.{attribute}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert e["line"] == 6 and not leaks(e["message"])


@pytest.mark.parametrize("name", ["prelu", "glu", "cosine_similarity", "pairwise_distance", "group_norm"])
def test_the_functions_stay_closed(name):
    for attribute in ("__globals__", "__code__", "__wrapped__", "__closure__", "__module__.__class__"):
        e = err(HEAD + f"y = F.{name}.{attribute}\nprint(y)\n")
        assert e["type"] in ("AttributeError", "SandboxViolation"), e
        assert e["line"] == 5 and not leaks(e["message"])
