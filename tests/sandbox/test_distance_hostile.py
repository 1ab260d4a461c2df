"""Hostile programs against the distance names the word-embeddings tutorial brought: F.cosine_similarity,
F.pairwise_distance, torch.cosine_similarity / torch.pairwise_distance and nn.CosineSimilarity /
nn.PairwiseDistance. Wrong arguments raise with the program's line, huge broadcasts stay within the budgets,
the modules' attributes are as closed as every module's, nothing reaches the host; a program using them prints
what it prints in-process. Also makemore's `p.data += -lr * p.grad`, once per step for many steps: the run
counts each parameter once, not once per step."""
import pytest
from sandbox_testing import CLASSIC_LIMITS, err, leaks, run, same_as_cpython

DISTANCES = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
emb = torch.randn(6, 4, requires_grad=True)
sims = F.cosine_similarity(emb[2].unsqueeze(0), emb)
best = torch.topk(sims, 3)
print(sims, best.indices.tolist(), [round(v, 4) for v in best.values.tolist()])
d = F.pairwise_distance(emb, emb[0], p=1.0, keepdim=True)
(sims.sum() + d.sum()).backward()
print(d, d.grad_fn.name(), sims.grad_fn.name(), emb.grad)
print(torch.cosine_similarity(emb, emb, 0), torch.pairwise_distance(emb[0], emb[1]))
cos, pdist = nn.CosineSimilarity(dim=0, eps=1e-6), nn.PairwiseDistance()
print(cos, pdist, cos(emb, emb), pdist(emb, emb))
print(F.cosine_similarity(torch.zeros(2, 3), torch.ones(2, 3)), F.cosine_similarity(torch.tensor(2.0), torch.tensor(3.0), 0))
try:
    F.cosine_similarity(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long))
except RuntimeError as e:
    print("refused:", e)
"""


def test_a_program_with_the_distances_prints_what_it_prints_in_process():
    same_as_cpython(DISTANCES)


@pytest.mark.parametrize("line, kind, words", [
    ("F.cosine_similarity(x, [1.0, 2.0, 3.0])", "TypeError", "argument 'x2' (position 2) must be Tensor, not list"),
    ("F.cosine_similarity('a', x)", "TypeError", "argument 'x1' (position 1) must be Tensor, not str"),
    ("F.cosine_similarity(x, x, 10**9)", "IndexError", "Dimension out of range"),
    ("F.cosine_similarity(x, x, 2**70)", "IndexError", "Dimension out of range"),
    ("F.cosine_similarity(x, x, dim=1.5)", "TypeError", "argument 'dim' must be int, not float"),
    ("F.cosine_similarity(x, x, 1, 'eps')", "TypeError", "argument 'eps' (position 4) must be float, not str"),
    ("F.cosine_similarity(x, torch.ones(2, 4))", "RuntimeError", "must match the size of tensor b"),
    ("F.cosine_similarity(x.long(), x.int())", "RuntimeError", "common dtype is Long"),
    ("torch.cosine_similarity(x, x, foo=1)", "TypeError", "unexpected keyword argument 'foo'"),
    ("F.pairwise_distance(x, x, 'p')", "TypeError", "argument 'p' (position 3) must be float, not str"),
    ("F.pairwise_distance(x, x, 2, 1e-6, 'yes')", "TypeError", "argument 'keepdim' (position 5) must be bool"),
    ("F.pairwise_distance(x, torch.ones(4))", "RuntimeError", "must match the size of tensor b"),
    ("F.pairwise_distance(x > 0, x > 0)", "RuntimeError", "with two bool tensors is not supported"),
    ("torch.pairwise_distance(x, x, 2, 1e-6, False, 5)", "TypeError", "positional arguments"),
    ("nn.CosineSimilarity(dim=5)(x, x)", "IndexError", "Dimension out of range"),
    ("nn.PairwiseDistance(p='x')(x, x)", "TypeError", "argument 'p' (position 3) must be float, not str"),
    ("nn.CosineSimilarity(foo=1)", "TypeError", "unexpected keyword argument 'foo'"),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nx = torch.ones(2, 3)\n"
            f"y = {line}\n")
    assert e["line"] == 5, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "F.cosine_similarity(torch.ones(10**5, 1), torch.ones(1, 10**5))",
    "F.pairwise_distance(torch.ones(10**5, 1), torch.ones(1, 10**5))",
    "nn.CosineSimilarity(dim=0)(torch.ones(10**5, 1), torch.ones(1, 10**5))",
    "torch.cosine_similarity(torch.ones(1, 1, 10**4), torch.ones(10**4, 1, 1), 0)",
])
def test_huge_broadcasts_stay_within_the_budgets(line):
    e = err(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {line}\n",
            limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e


@pytest.mark.parametrize("attribute", [
    "__dict__", "__class__.__subclasses__", "forward.__globals__", "__init__.__code__", "_modules.__class__.__init__",
    "__reduce_ex__", "__class__.__mro__",
])
@pytest.mark.parametrize("owner", ["nn.CosineSimilarity()", "nn.PairwiseDistance()"])
def test_the_modules_are_as_closed_as_every_module(owner, attribute):
    e = err(f"import torch\nimport torch.nn as nn\nm = {owner}\ny = m.{attribute}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert not leaks(e["message"])


@pytest.mark.parametrize("expr", ["F.cosine_similarity.__globals__", "F.pairwise_distance.__code__",
                                  "torch.cosine_similarity.__module__.__class__", "F.cosine_similarity.__wrapped__",
                                  "F._floating_pair", "F._canonical_dim", "F.no_grad", "F.broadcast_tensors",
                                  "F.dtypes", "F.numbers"])
def test_the_functions_open_nothing_else(expr):
    e = err(f"import torch\nimport torch.nn.functional as F\ny = {expr}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert not leaks(e["message"])


def test_a_training_loop_updating_data_counts_each_parameter_once():
    # 300 steps of `p.data += -lr * p.grad` on 120,000 parameter elements: 36,000,000 if each step counted them again
    out = run("import torch\nW = torch.randn(300, 400, requires_grad=True)\nfor i in range(300):\n"
              "    W.grad = None\n    (W * W).sum().backward()\n    W.data += -0.001 * W.grad\n"
              "print(W.shape, round(W.abs().max().item(), 3) < 5)\n")
    assert out.error is None, out.error
    assert out.stdout == "torch.Size([300, 400]) True\n"


def test_growing_a_tensor_through_data_is_counted():
    # each w holds 100,000 elements after its assignment: twenty of them are past max_live_elements = 1,000,000
    e = err("import torch\nws = []\nfor i in range(20):\n    w = torch.zeros(1)\n    w.data = torch.zeros(100_000)\n"
            "    ws.append(w)\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and "max_live_elements" in e["message"], e
