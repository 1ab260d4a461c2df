"""In-place index assignment as PyTorch does it (makemore part 4's `dlogits[range(n), Yb] -= 1`): advanced,
boolean and mixed indices, repeated indices in `+=` (index_put without accumulate: the last write wins)."""
from __future__ import annotations

import pytest
from sandbox_testing import err, same_as_cpython

INDEX_ASSIGN = """import torch
torch.manual_seed(0)
n = 4
logits = torch.randn(n, 5)
Yb = torch.tensor([1, 4, 1, 0])
dlogits = torch.softmax(logits, 1)
dlogits[range(n), Yb] -= 1
dlogits /= n
print(dlogits.sum(1).abs().max().item() < 1e-6, dlogits[0, 1].item() < 0)
t = torch.zeros(3, 4)
t[[0, 2]] += 5
t[t > 4] = 1
t[:, torch.tensor([0, 0, 3])] *= 2
print(t)
a = torch.zeros(5)
a[torch.tensor([0, 0, 1, 1, 1])] += 1
print(a)
b = torch.arange(6.).reshape(2, 3)
b[b % 2 == 0] = -1
b[1, [0, 2]] += torch.tensor([10., 20.])
print(b)
c = torch.zeros(2, 3, dtype=torch.long)
c[0] = torch.tensor([1, 2, 3])
c[:, 1] += 7
print(c)
"""


def test_index_assignment_as_pytorch():
    pytest.importorskip("torch")
    same_as_cpython(INDEX_ASSIGN)


@pytest.mark.parametrize("source", [
    "import torch\nt = torch.zeros(3)\nt[[0, 5]] += 1",
    "import torch\nt = torch.zeros(3)\nt[torch.ones(4, dtype=torch.bool)] = 1",
    "import torch\nt = torch.zeros(3)\nt[[0] * 10 ** 8] = 1",
    "import torch\nt = torch.zeros(3)\nt[range(10 ** 9)] -= 1",
    "import torch\nt = torch.zeros(3, requires_grad=True)\nt[[0, 1]] += 1",
])
def test_index_assignment_under_hostile_input(source):
    e = err(source)
    assert e["type"] in ("IndexError", "LimitExceeded", "RuntimeError", "ValueError"), e
