"""nn.ConvTranspose2d / F.conv_transpose2d in a sandboxed program (a decoder's upsampling): it runs as PyTorch's, the
sizes a program picks are bounded before anything is made, bad arguments raise on its line, nothing reaches outside."""
import pytest
from sandbox_testing import err, leaks, ok


def test_a_decoder_upsamples():
    out = ok("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
             "dec = nn.Sequential(nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.ReLU(), "
             "nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1), nn.Sigmoid())\n"
             "y = dec(torch.randn(2, 8, 7, 7))\ny.mean().backward()\n"
             "print(y.shape, dec[0].weight.grad.shape, dec[0])\n")
    assert out == ("torch.Size([2, 1, 28, 28]) torch.Size([8, 4, 4, 4]) "
                   "ConvTranspose2d(8, 4, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))\n")


@pytest.mark.parametrize("line, kind", [
    ("nn.ConvTranspose2d(4, 4, 3, stride=10**4)(torch.ones(1, 4, 50, 50))", "LimitExceeded"),
    ("nn.ConvTranspose2d(10**4, 10**4, 50)", "LimitExceeded"),
    ("F.conv_transpose2d(torch.ones(1, 4, 3, 3), torch.ones(4, 2, 3, 3), stride=1, output_padding=1)", "RuntimeError"),
    ("F.conv_transpose2d(torch.ones(1, 3, 3, 3), torch.ones(4, 2, 3, 3))", "RuntimeError"),
    ("F.conv_transpose2d('a', torch.ones(4, 2, 3, 3))", "TypeError"),
    ("nn.ConvTranspose2d(4, 2, 3, padding_mode='reflect')", "ValueError"),
    ("nn.ConvTranspose2d(4, 2, 3).forward.__globals__", "AttributeError"),
    ("F.conv_transpose2d.__code__", "AttributeError"),
])
def test_transposed_convolutions_are_bounded_and_sealed(line, kind):
    e = err(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])
