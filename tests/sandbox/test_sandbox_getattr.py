"""`hasattr` and `getattr(obj, name[, default])`: the attribute policy of `obj.name` for every kind of value,
compared with CPython and PyTorch, and their hostile uses (issue 21 §3)."""
from __future__ import annotations

import pytest
from sandbox_testing import err, leaks, ok, run, same_as_cpython

GETATTR_PROGRAM = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
    def forward(self, x):
        return self.fc(x)
class P:
    z = 3
    def __init__(self):
        self.a = 1
    @property
    def bad(self):
        raise AttributeError("nope")
    def m(self):
        return 5
    def __len__(self):
        return 2
net = Net()
t = torch.ones(2, requires_grad=True)
p = P()
print(hasattr(net, "fc"), hasattr(net, "weight"), hasattr(net.fc, "weight"), hasattr(net, "parameters"))
print(getattr(net.fc, "out_features"), getattr(net, "nope", None), getattr(p, "a"), getattr(p, "z"), getattr(p, "m")())
print(hasattr(p, "bad"), getattr(p, "bad", "dflt"), hasattr(P, "z"), hasattr(P, "m"), hasattr(t, "grad"))
print(hasattr(torch.backends, "mps"), hasattr(torch.cuda, "is_available"))
print(hasattr([1], "__len__"), hasattr(3, "__len__"), hasattr(p, "__len__"), getattr(p, "__len__")(), hasattr(net, "__call__"))
print(hasattr(len, "__call__"), hasattr(P, "__call__"), hasattr(p, "__call__"), hasattr(t, "__len__"), hasattr(t, "__iter__"))
print(getattr([1, 2, 3], "__len__")(), getattr({"a": 1}, "__getitem__")("a"))
print(hasattr(p, "__iter__"), getattr(t, "shape"), getattr(torch, "float32"), hasattr((x for x in []), "__next__"))
for name in ("weight", "bias", "nothing"):
    print(name, getattr(net.fc, name, "missing") is not None)
def has_one_axis(X):  # d2l's plot helper
    return (hasattr(X, "ndim") and X.ndim == 1 or isinstance(X, list) and not hasattr(X[0], "__len__"))
print(has_one_axis(torch.ones(3)), has_one_axis([1, 2]), has_one_axis([[1], [2]]))
try:
    getattr(p, "zzz")
except AttributeError as e:
    print("AE", e)
try:
    hasattr(p, 1)
except TypeError as e:
    print("TE", e)
"""


def test_getattr_and_hasattr_as_pytorch():
    pytest.importorskip("torch")
    same_as_cpython(GETATTR_PROGRAM)


@pytest.mark.parametrize("source", [
    "x = [1]\ngetattr(x, '__class__').__mro__",
    "import torch\ngetattr(torch.ones(1), '__cla' + 'ss__')",
    "getattr(print, '__name__')",
    "import torch\nt = torch.ones(2)\ngetattr(t, '_data')",
    "import torch\nt = torch.ones(2)\ngetattr(t, '__dict__')",
    "import torch\nm = torch.nn.Linear(1, 1)\ngetattr(m, '_parameters')",
    "import torch\nm = torch.nn.Linear(1, 1)\ngetattr(getattr(m, 'forward'), '__self__')",
    "getattr(print, '__globals__')",
    "getattr(print, 'fn')",
    "class A:\n    pass\ngetattr(A(), '__dict__')",
    "class A:\n    pass\ngetattr(A, '__subclasses__')",
    "import torch\ngetattr(torch, 'x' * 10 ** 6)",
    "getattr((x for x in []), 'gi_frame')",
    "getattr(1, 'real', 2, 3)",
])
def test_getattr_reaches_nothing_obj_name_cannot(source):
    e = err(source)
    assert e["type"] in ("AttributeError", "TypeError"), e
    assert len(e["message"]) < 400 and not leaks(e["message"]), e


def test_hasattr_is_false_for_what_a_program_cannot_reach():
    assert ok("import torch\nt = torch.ones(2)\nprint(hasattr(t, '_data'), hasattr(t, '__dict__'), "
              "hasattr(print, 'fn'), hasattr(torch, '_C'), hasattr(torch, 'x' * 10 ** 6))") == \
        "False False False False False\n"


def test_hasattr_runs_property_getters_within_limits():
    e = err("class A:\n    @property\n    def x(self):\n        while True:\n            pass\nhasattr(A(), 'x')")
    assert e["type"] == "LimitExceeded"
    out = run("class A:\n    @property\n    def x(self):\n        return 1 / 0\nhasattr(A(), 'x')")
    assert out.error["type"] == "ZeroDivisionError" and out.error["line"] == 4
