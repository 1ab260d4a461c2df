"""Hostile programs against nn.EmbeddingBag / F.embedding_bag (engine/ops_embedding_bag.py): outputs past the budgets
are refused before numpy runs, bad indices and offsets get PyTorch's errors on the program's line, what flowgrad does
not support says so, long bags and repeated indices stay within the time budget, nothing leaks; the module prints
and trains as PyTorch's."""
import pytest
from sandbox_testing import CLASSIC_LIMITS, DEFAULT_LIMITS, err, leaks, ok, run

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("line", [
    "F.embedding_bag(torch.zeros(10, dtype=torch.long), torch.ones(5, 1000), torch.zeros(20_000, dtype=torch.long))",
    "nn.EmbeddingBag(10**6, 100)",
    "F.embedding_bag(torch.zeros(200, 600, dtype=torch.long), torch.ones(3, 1000), mode='max')",
])
def test_outputs_past_the_budgets_are_refused(line):
    e = err(HEAD + f"y = {line}", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e


@pytest.mark.parametrize("line,kind", [
    ("F.embedding_bag(torch.tensor([1, 99]), torch.ones(5, 2), torch.tensor([0]))", "RuntimeError"),
    ("F.embedding_bag(torch.tensor([1, 2]), torch.ones(5, 2), torch.tensor([1]))", "RuntimeError"),
    ("F.embedding_bag(torch.tensor([1, 2]), torch.ones(5, 2), torch.tensor([0, 2, 1]))", "RuntimeError"),
    ("F.embedding_bag(torch.tensor([1, 2]), torch.ones(5, 2))", "ValueError"),
    ("F.embedding_bag(torch.tensor([1, 2]), torch.ones(5, 2), torch.tensor([0]), mode='x' * 10**4)", "LimitExceeded"),
    ("F.embedding_bag(torch.tensor([1, 2]), torch.ones(5, 2), [0])", "TypeError"),
    ("F.embedding_bag([1, 2], torch.ones(5, 2), torch.tensor([0]))", "TypeError"),
    ("F.embedding_bag(torch.tensor([1., 2]), torch.ones(5, 2), torch.tensor([0]))", "RuntimeError"),
    ("nn.EmbeddingBag(5, 2, sparse=True)(torch.tensor([[1, 2]]))", "NotImplementedError"),
    ("nn.EmbeddingBag(5, 2, max_norm=1.0)(torch.tensor([[1, 2]]))", "NotImplementedError"),
    ("nn.EmbeddingBag(5, 2, mode='sum')(torch.tensor([1, 2]), torch.tensor([0]), torch.ones(2))", "NotImplementedError"),
    ("nn.EmbeddingBag(5, 2, padding_idx=9)", "AssertionError"),
])
def test_bad_arguments_get_pytorchs_errors_on_their_line(line, kind):
    e = err(HEAD + f"y = {line}", limits=CLASSIC_LIMITS)
    assert e["type"] == kind and e["line"] == 4, e
    assert len(e["message"]) < 2_000 and not leaks(e["message"])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_one_long_bag_of_one_index_stays_within_the_budgets(mode):
    # 100,000 occurrences of one row: the gradient's order is one sort, not a Python step per occurrence
    out = run(HEAD + f"w = torch.randn(3, 4, requires_grad=True)\nidx = torch.zeros(100_000, dtype=torch.long)\n"
              f"F.embedding_bag(idx, w, torch.tensor([0, 50_000]), mode='{mode}').sum().backward()\nprint(w.grad[0])",
              DEFAULT_LIMITS)
    assert out.error is None, out.error
    assert out.stdout.startswith("tensor([")


def test_the_module_is_sealed_and_prints_as_pytorchs():
    out = ok(HEAD + "torch.manual_seed(0)\nbag = nn.EmbeddingBag(6, 2, mode='max')\nprint(bag, type(bag))\n"
                    "y = bag(torch.tensor([[0, 5], [2, 2]]))\nprint(y.grad_fn.name(), y.shape)")
    assert out == ("EmbeddingBag(6, 2, mode='max') <class 'torch.nn.modules.sparse.EmbeddingBag'>\n"
                   "EmbeddingBagBackward0 torch.Size([2, 2])\n")
    for stmt in ["bag.forward.__globals__", "bag._parameters", "F.embedding_bag.__code__", "y.grad_fn._saved"]:
        e = err(HEAD + f"bag = nn.EmbeddingBag(6, 2)\ny = bag(torch.tensor([[0, 5]]))\nz = {stmt}")
        assert e["type"] in ("AttributeError", "SyntaxError"), (stmt, e)
