"""nn.InstanceNorm1d / 2d and F.instance_norm in the sandbox: a GAN-style program prints what PyTorch prints; sizes
past the budgets and wrong arguments are refused on their line."""
from __future__ import annotations

import pytest
from sandbox_testing import err, same_as_cpython

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.InstanceNorm2d(4, affine=True), nn.ReLU())
x = torch.randn(2, 1, 5, 5)
y = net(x)
y.mean().backward()
print(net, y[0, 0], net[1].weight.grad, F.instance_norm(torch.arange(12.).reshape(1, 2, 6)))
norm = nn.InstanceNorm1d(3, track_running_stats=True)
norm(torch.randn(4, 3, 7))
print(norm.running_mean, norm.running_var, norm.eval()(torch.ones(3, 7)))
"""


def test_the_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("call, kind", [
    ("nn.InstanceNorm2d(10 ** 9, affine=True)", "LimitExceeded"),
    ("nn.InstanceNorm2d(3)(torch.ones(3000, 3, 40, 40))", "LimitExceeded"),
    ("nn.InstanceNorm2d(3)(torch.ones(2, 3, 1, 1))", "ValueError"),
    ("nn.InstanceNorm1d(3)(torch.ones(2, 3, 4, 5))", "ValueError"),
    ("nn.InstanceNorm2d(3)('image')", "AttributeError"),
    ("F.instance_norm(torch.ones(2, 3, 4), weight=torch.ones(2))", "RuntimeError"),
])
def test_sizes_and_wrong_arguments_are_refused_on_their_line(call, kind):
    e = err(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n{call}")
    assert e["type"] == kind and e["line"] == 4, e
