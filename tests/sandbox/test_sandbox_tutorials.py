"""Tutorial-style PyTorch programs run in the sandbox on the engine.

Deterministic programs are also run by real PyTorch (when installed) and must print the same.
"""
from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import pytest
from sandbox_testing import err, ok, run

try:
    import torch as real_torch
except Exception:  # pragma: no cover
    real_torch = None


def torch_stdout(source: str) -> str:
    """What real PyTorch prints for a (trusted, test-authored) program."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim

    env = {"__name__": "__main__", "torch": torch, "nn": nn, "F": F, "optim": optim, "math": math}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<tutorial>", "exec"), env)  # noqa: S102 — our own test programs, not user input
    return buf.getvalue()


AUTOGRAD_BASICS = """\
import torch
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
a = x + y
z = a ** 2
z.backward()
print(z)
print(x.grad, y.grad, a.grad)
print(x.is_leaf, a.is_leaf, z.requires_grad, z.grad_fn.name())
"""

NON_LEAF_AND_RETAIN = """\
import torch
w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
h = w * 2
h.retain_grad()
out = (h ** 2).sum()
out.backward()
print(h.grad, w.grad)
print(out.grad_fn.name(), [f[0].name() for f in out.grad_fn.next_functions if f[0] is not None])
"""

ACCUMULATION = """\
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
y.backward(retain_graph=True)
print(x.grad)
y.backward()
print(x.grad)
x.grad.zero_()
print(x.grad)
"""

MANUAL_DESCENT = """\
import torch
xs = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
ys = torch.tensor([[3.0], [5.0], [7.0], [9.0]])
w = torch.tensor([[0.5]], requires_grad=True)
b = torch.tensor([0.0], requires_grad=True)
lr = 0.05
for epoch in range(50):
    pred = xs @ w + b
    loss = ((pred - ys) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if epoch % 10 == 0:
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}")
print(f"w = {w.item():.3f}, b = {b.item():.3f}")
"""

NO_GRAD_DETACH = """\
import torch
x = torch.ones(2, 2, requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, y.grad_fn)
z = (x * 3).detach()
print(z.requires_grad, z.is_leaf)
with torch.enable_grad():
    q = x.sum()
print(q.requires_grad, q)
print(x.shape, x.size(0), x.dim(), x.numel(), x.dtype)
"""

MODULE_TRAINING = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

class Net(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(h)

torch.manual_seed(0)
model = Net()
print(model)
opt = optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.MSELoss()
X = torch.randn(32, 2)
Y = X[:, :1] * X[:, 1:]
losses = []
for step in range(100):
    opt.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(losses[-1] < losses[0])
for name, p in model.named_parameters():
    print(name, tuple(p.shape), p.grad is not None)
print(sum(p.numel() for p in model.parameters()))
"""

SEQUENTIAL_CLASSIFIER = """\
import torch
from torch import nn, optim

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
X = torch.randn(30, 4)
y = torch.tensor([i % 3 for i in range(30)])
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=0.05)
for epoch in range(60):
    optimizer.zero_grad()
    logits = model(X)
    loss = criterion(logits, y)
    loss.backward()
    optimizer.step()
with torch.no_grad():
    pred = model(X).argmax(dim=1)
    acc = (pred == y).float().mean().item()
print(f"final loss {loss.item():.3f}, accuracy {acc:.2f}")
print(model[0].weight.shape, len(list(model.parameters())), optimizer.param_groups[0]['lr'])
"""

HELPERS_AND_LISTS = """\
import torch
import torch.nn as nn

class Block(nn.Module):
    scale = 2.0

    def __init__(self, n):
        super(Block, self).__init__()
        self.layers = nn.ModuleList([nn.Linear(n, n) for _ in range(3)])
        self.n = n

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        return x * self.scale

    def act(self, x):
        return torch.tanh(x)

def count_params(m):
    return sum(p.numel() for p in m.parameters())

b = Block(3)
out = b(torch.ones(2, 3))
print(out.shape, count_params(b), b.n, isinstance(b, nn.Module), isinstance(b, Block))
print(len(b.layers), type_name := 'Block')
"""

BACKWARD_TWICE = """\
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x * x
y.backward()
y.backward()
"""

DETERMINISTIC = [AUTOGRAD_BASICS, NON_LEAF_AND_RETAIN, ACCUMULATION, MANUAL_DESCENT, NO_GRAD_DETACH]
ALL = DETERMINISTIC + [MODULE_TRAINING, SEQUENTIAL_CLASSIFIER, HELPERS_AND_LISTS]


@pytest.mark.parametrize("source", ALL, ids=lambda s: s.split("\n")[1][:30])
def test_tutorial_runs(source):
    out = run(source)
    assert out.error is None, out.error
    assert out.stdout


@pytest.mark.skipif(real_torch is None, reason="real PyTorch not installed")
@pytest.mark.parametrize("source", DETERMINISTIC, ids=lambda s: s.split("\n")[1][:30])
def test_tutorial_prints_what_pytorch_prints(source):
    assert ok(source) == torch_stdout(source)


def test_contract_program():
    out = run(AUTOGRAD_BASICS)
    assert out.stdout.splitlines()[0] == "tensor(25., grad_fn=<PowBackward0>)"
    g = out.globals
    assert set(g) == {"x", "y", "a", "z"}
    assert g["x"].grad.item() == 10.0 and g["a"].grad is None


def test_backward_twice_is_pytorchs_error_with_line_and_state_kept():
    out = run(BACKWARD_TWICE)
    e = out.error
    assert e["type"] == "RuntimeError" and e["line"] == 5
    assert e["message"].startswith("Trying to backward through the graph a second time")
    assert out.globals["x"].grad.item() == 4.0


def test_module_training_output():
    out = ok(MODULE_TRAINING)
    lines = out.splitlines()
    assert lines[:4] == ["Net(", "  (fc1): Linear(in_features=2, out_features=8, bias=True)",
                         "  (fc2): Linear(in_features=8, out_features=1, bias=True)", ")"]
    assert "True" in lines[4]
    assert lines[5:] == ["fc1.weight (8, 2) True", "fc1.bias (8,) True", "fc2.weight (1, 8) True",
                         "fc2.bias (1,) True", "33"]



def test_engine_errors_keep_their_type_and_message():
    e = err("import torch\ntorch.tensor([1.0, 2.0]) @ torch.tensor([1.0, 2.0, 3.0])")
    assert e["type"] == "RuntimeError" and e["line"] == 2
    e = err("import torch\nx = torch.ones(2, 3)\ny = x.view(4, 5)")
    assert e["type"] == "RuntimeError" and e["line"] == 3
    e = err("import torch\nx = torch.ones(3)\nx.item()")
    assert e["type"] == "RuntimeError" and "cannot be converted to Scalar" in e["message"]


def test_bare_torch_names():
    out = ok("x = tensor([1.0, 2.0])\nprint(exp(zeros(2)), relu(x - 1.5), Linear(2, 1).weight.shape)")
    assert out == "tensor([1., 1.]) tensor([0.0000, 0.5000]) torch.Size([1, 2])\n"


def test_torch_attributes_through_allowlists():
    out = ok("import torch\nx = torch.arange(6.0).reshape(2, 3)\nprint(x.T.shape, x.sum(dim=0), x.mean().item(),"
             " x.max().item(), x.tolist())")
    assert out == "torch.Size([3, 2]) tensor([3., 5., 7.]) 2.5 5.0 [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]\n"


def test_fstring_with_tensor_specs():
    assert ok("import torch\nl = torch.tensor(0.123456)\nprint(f'{l:.3f} {l.item():.2e}')") == "0.123 1.23e-01\n"


def test_user_module_errors_name_the_user_class():
    e = err("import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "m = M()\nm.nope")
    assert e["message"] == "'M' object has no attribute 'nope'" and e["line"] == 6
    e = err("import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\nm = M()\nm(torch.ones(1))")
    assert e["type"] == "NotImplementedError" and "forward" in e["message"] and "M" in e["message"]


def test_module_attribute_assignment_before_super_init():
    e = err("import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        self.l = nn.Linear(1, 1)\n"
            "m = M()")
    assert e["type"] == "AttributeError" and e["line"] == 4


def test_optimizer_param_groups_can_be_changed():
    src = ("import torch\nm = torch.nn.Linear(1, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
           "opt.param_groups[0]['lr'] = 0.01\nprint(opt.param_groups[0]['lr'])")
    assert ok(src) == "0.01\n"


def test_parameter_data_and_grad_can_be_set():
    src = ("import torch\nm = torch.nn.Linear(1, 1)\nm.weight.data = torch.tensor([[2.0]])\n"
           "m.bias.data.fill_(0.5)\nprint(m(torch.tensor([[1.0]])).item())")
    assert ok(src) == "2.5\n"


def test_type_of_engine_objects():
    out = ok("import torch\nx = torch.ones(2)\nprint(type(x), type(x) is torch.Tensor, type(torch.nn.Linear(1, 1)))")
    assert out == "<class 'torch.Tensor'> True <class 'torch.nn.modules.linear.Linear'>\n"


EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.py"))
KNOWN_ENGINE_DIFFS: dict[str, str] = {  # example file -> why the engine's output may differ from PyTorch
    # NOTE: PyTorch itself prints a different step-9 loss and other predictions with 1 and with 2 threads here
    "20_lenet_digits.py": "float32 conv sums in another order than PyTorch's; 12 SGD steps at lr 0.2, momentum 0.9 "
                          "amplify the last bit into the 4th decimal and the predictions",
}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_run_in_the_sandbox(path):
    out = run(path.read_text())
    if "error" in path.stem:
        assert out.error is not None and out.error["type"] == "RuntimeError", out.error
        assert isinstance(out.error["line"], int)
    else:
        assert out.error is None, out.error
    assert out.stdout


@pytest.mark.skipif(real_torch is None, reason="real PyTorch not installed")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_print_what_pytorch_prints(path, request):
    source = path.read_text()  # seeded examples too: the engine draws PyTorch's random numbers
    if path.name in KNOWN_ENGINE_DIFFS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_ENGINE_DIFFS[path.name], strict=False))
    out = run(source)
    try:
        expected = torch_stdout(source)
    except RuntimeError:
        expected = None  # the program ends in an error: compare what was printed before it
    if expected is None:
        assert out.error is not None
    else:
        assert out.stdout == expected
