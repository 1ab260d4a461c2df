"""F.interpolate's linear / bilinear / bicubic modes and nn.Upsample / UpsamplingBilinear2d inside programs: what a
UNet's decoder or an image-resizing demo does prints PyTorch's stdout; huge sizes and scale factors are refused by the
engine's limits before anything is allocated; bad modes and dims give PyTorch's errors; nothing reaches outside."""
import pytest
from sandbox_testing import err, leaks, ok

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 2, 3, 4, requires_grad=True)
up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
y = up(x)
print(up, y.shape, y.grad_fn.name())
print(F.interpolate(x, size=(5, 5), mode='bicubic', align_corners=True)[0, 0, 0])
print(nn.UpsamplingBilinear2d(scale_factor=2)(x)[0, 1, -1])
print(F.interpolate(torch.arange(4.).view(1, 1, 4), scale_factor=1.5, mode='linear'))
(y ** 2).sum().backward()
print(x.grad[0, 0])
"""


def test_a_program_prints_what_pytorch_prints():
    torch = pytest.importorskip("torch")  # noqa: F841 — the expected output is PyTorch's
    from sandbox_testing import same_as_cpython

    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("line, kind", [
    ("F.interpolate(torch.ones(1, 1, 4, 4), scale_factor=10 ** 4, mode='bilinear')", "LimitExceeded"),
    ("F.interpolate(torch.ones(1, 1, 4, 4), size=(3000, 3000), mode='bicubic')", "LimitExceeded"),
    ("F.interpolate(torch.ones(1, 1, 4), size=10 ** 9, mode='linear')", "LimitExceeded"),
    ("F.interpolate(torch.ones(1, 1, 4), scale_factor=1e300, mode='linear')", "LimitExceeded"),
    ("F.interpolate(torch.ones(1, 1, 4), scale_factor=2, mode='bilinear')", "NotImplementedError"),
    ("F.interpolate(torch.ones(1, 1, 4, 4), scale_factor=2, mode='trilinear')", "NotImplementedError"),
    ("F.interpolate(torch.ones(1, 1, 4, 4), scale_factor=2, mode='bilinear', antialias=True)", "NotImplementedError"),
    ("F.interpolate(torch.ones(1, 1, 4, 4), scale_factor=2, mode=print)", "NotImplementedError"),
    ("F.interpolate(torch.ones(1, 1, 4, 4), size=(0, 3), mode='bilinear')", "RuntimeError"),
    ("nn.Upsample(scale_factor=2, mode='bicubic')(torch.ones(1, 1, 4))", "NotImplementedError"),
])
def test_what_it_is_handed_is_bounded(line, kind):
    e = err(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {line}\n")
    assert e["type"] == kind, e
    assert e["line"] == 4 and not leaks(e["message"])


def test_a_large_resize_and_its_gradient_stay_within_the_budgets():
    out = ok("import torch\nimport torch.nn.functional as F\nx = torch.ones(1, 1, 4, 4, requires_grad=True)\n"
             "y = F.interpolate(x, size=(1000, 1000), mode='bilinear')\ny.sum().backward()\n"
             "print(y.shape, round(x.grad.sum().item(), -2))\n")
    assert out == "torch.Size([1, 1, 1000, 1000]) 1000000.0\n"


def test_a_wide_nearest_resize_differentiates_without_a_dense_matrix():
    # (its backward once multiplied by a one-hot n_out x n_in matrix: 1.9 million x 1,000 float64s, 15 GB)
    out = ok("import torch\nimport torch.nn.functional as F\nx = torch.ones(1, 1, 1, 1000, requires_grad=True)\n"
             "F.interpolate(x, size=(1, 1_900_000)).sum().backward()\nprint(x.grad[0, 0, 0, :2])\n")
    assert out == "tensor([1901., 1900.])\n"


@pytest.mark.parametrize("line", ["F.interpolate.__globals__", "nn.Upsample(scale_factor=2).forward.__func__",
                                  "F.interpolate(torch.ones(1, 1, 4), scale_factor=2, mode='linear').grad_fn.__class__"
                                  ".__mro__", "nn.UpsamplingBilinear2d.__init__.__globals__"])
def test_what_it_returns_reaches_nothing_outside(line):
    e = err(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "NameError", "TypeError"), e
    assert not leaks(e["message"])
