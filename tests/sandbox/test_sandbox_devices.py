"""The lines every tutorial starts with, through the sandbox, printing what CPU-only torch prints (issue 9 §0-1)."""
from __future__ import annotations

import contextlib
import io

import pytest
from sandbox_testing import ok

TUTORIAL = '''import torch
import torch.nn as nn
from torch.autograd import Variable

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")
print(torch.cuda.is_available(), torch.cuda.device_count(), torch.backends.mps.is_available(),
      torch.accelerator.is_available())
if torch.backends.mps.is_available():
    device = "mps"
torch.manual_seed(0)
torch.set_default_device(device)
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
x = torch.randn(5, 4, device=device).to(device)
y = torch.randint(0, 2, (5,)).to(device)
x64 = x.to(torch.float64)
print(x64.dtype, x.to("cpu", torch.float16).dtype, x.to(x64).dtype, x.to(device=device, dtype=torch.int32).dtype)
w = Variable(torch.ones(3), requires_grad=True)
loss = nn.CrossEntropyLoss()(model(x), y)
loss.backward()
print(loss)
print(x.device, x.is_cuda, model[0].weight.device, model[0].weight.grad.device, torch.device(device))
print(w, torch.zeros(size=(2,)), torch.ones(2, 2, dtype=torch.int64, device="cpu"))
z = torch.empty(2, 3)
torch.matmul(torch.ones(2, 4), torch.ones(4, 3), out=z)
print(z)
torch.set_printoptions(precision=2)
print(torch.tensor([1.23456, 2.5]))
torch.set_printoptions(profile="default")
print(torch.arange(2000.0).reshape(40, 50))
'''


def test_tutorial_opening_runs_in_the_sandbox_as_in_torch():
    out = ok(TUTORIAL)
    assert out.startswith("Using cpu device\nFalse 0 False False\n")
    torch = pytest.importorskip("torch")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(TUTORIAL, {})  # the test's own program under real torch
    torch.set_printoptions(profile="default")
    torch.set_default_device(None)
    assert out == buf.getvalue()


@pytest.mark.parametrize("src, message", [
    ("x = torch.ones(2).cuda()", "Torch not compiled with CUDA enabled"),
    ("x = torch.zeros(2, device='cuda')", "Torch not compiled with CUDA enabled"),
    ("m = nn.Linear(2, 2).to('cuda')", "Torch not compiled with CUDA enabled"),
    ("x = nn.Linear(3, 2)(torch.zeros(4, 5))", "mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)"),
    ("x = torch.tensor([1, 2], requires_grad=True)",
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("x = torch.zeros(2, 3) + torch.zeros(2, 4)",
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    ("x = torch.zeros(2, 3).view(4)", "shape '[4]' is invalid for input of size 6"),
    ("x = torch.randn()", "randn() received an invalid combination of arguments - got (), but expected one of:"),
])
def test_beginner_errors_read_as_torch_writes_them(src, message):
    from sandbox_testing import err

    e = err("import torch\nimport torch.nn as nn\n" + src)
    assert e["message"].startswith(message), e
    assert e["line"] == 3
