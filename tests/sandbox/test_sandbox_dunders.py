"""Program classes with Python's protocols (`__call__`, `__len__`/`__getitem__`, `__iter__`/`__next__`,
`__contains__`, `__repr__`/`__str__`, comparisons, `__hash__`, operators), compared with CPython and
PyTorch, and the hostile versions of each (issue 21 §3)."""
from __future__ import annotations

import pytest
from sandbox_testing import CLASSIC_LIMITS, err, make_limits, ok, run, same_as_cpython

HAND_WRITTEN_LAYERS = """import torch
g = torch.Generator().manual_seed(2147483647)
class Linear:
    def __init__(self, fan_in, fan_out, bias=True):
        self.weight = torch.randn((fan_in, fan_out), generator=g) / fan_in**0.5
        self.bias = torch.zeros(fan_out) if bias else None
    def __call__(self, x):
        self.out = x @ self.weight
        if self.bias is not None:
            self.out += self.bias
        return self.out
    def parameters(self):
        return [self.weight] + ([] if self.bias is None else [self.bias])
class BatchNorm1d:
    def __init__(self, dim, eps=1e-5, momentum=0.1):
        self.eps = eps
        self.training = True
        self.gamma = torch.ones(dim)
        self.beta = torch.zeros(dim)
    def __call__(self, x):
        xmean = x.mean(0, keepdim=True)
        xvar = x.var(0, keepdim=True)
        xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
        self.out = self.gamma * xhat + self.beta
        return self.out
    def parameters(self):
        return [self.gamma, self.beta]
class Tanh:
    def __call__(self, x):
        self.out = torch.tanh(x)
        return self.out
    def parameters(self):
        return []
layers = [Linear(10, 20, bias=False), BatchNorm1d(20), Tanh(), Linear(20, 5)]
parameters = [p for layer in layers for p in layer.parameters()]
for p in parameters:
    p.requires_grad = True
x = torch.randn(8, 10, generator=g)
for layer in layers:
    x = layer(x)
loss = x.square().mean()
loss.backward()
print(sum(p.nelement() for p in parameters), callable(layers[0]), callable(Linear), f"{loss.item():.6f}")
print([tuple(layer.out.shape) for layer in layers], layers[0].weight.grad.abs().sum().item() > 0)
"""


def test_hand_written_layers_as_pytorch():
    pytest.importorskip("torch")
    same_as_cpython(HAND_WRITTEN_LAYERS)


MAP_STYLE_DATASET = """import torch
from torch.utils.data import DataLoader
class Squares:
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32).reshape(n, 1)
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i], self.x[i] ** 2
ds = Squares(7)
print(len(ds), ds[3], bool(ds))
for xb, yb in DataLoader(ds, batch_size=3):
    print(xb.squeeze(1).tolist(), yb.squeeze(1).tolist())
print(sum(1 for _ in ds), [y.item() for _, y in ds][:3])
class Empty:
    def __len__(self):
        return 0
print(bool(Empty()), len(Empty()))
"""


def test_map_style_dataset_without_the_base_class():
    pytest.importorskip("torch")
    same_as_cpython(MAP_STYLE_DATASET)


MICROGRAD_VALUE = """import math
class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self.backward_fn = lambda: None
        self.prev = set(_children)
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def backward_fn():
            self.grad += out.grad
            other.grad += out.grad
        out.backward_fn = backward_fn
        return out
    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def backward_fn():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out.backward_fn = backward_fn
        return out
    def __pow__(self, other):
        out = Value(self.data**other, (self,), f'**{other}')
        def backward_fn():
            self.grad += (other * self.data**(other-1)) * out.grad
        out.backward_fn = backward_fn
        return out
    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')
        def backward_fn():
            self.grad += (1 - t**2) * out.grad
        out.backward_fn = backward_fn
        return out
    def backward(self):
        topo = []
        visited = set()
        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v.prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v.backward_fn()
    def __neg__(self):
        return self * -1
    def __radd__(self, other):
        return self + other
    def __sub__(self, other):
        return self + (-other)
    def __rsub__(self, other):
        return other + (-self)
    def __rmul__(self, other):
        return self * other
    def __truediv__(self, other):
        return self * other**-1
    def __rtruediv__(self, other):
        return other * self**-1
    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"
x1, x2, w1, w2, b = Value(2.0), Value(0.0), Value(-3.0), Value(1.0), Value(6.8813735870195432)
n = x1*w1 + x2*w2 + b
o = n.tanh()
o.backward()
print(o, x1, w1)
a = Value(3.0)
print(2 * a, a - 1, 1 - a, 2 / a, a / 2, -a, sum([a, a, a]), [a], str(a), f"{a}", "%s|%r" % (a, a))
a += 1
print(a, {a: 1}[a])
"""


def test_micrograd_value_operators_as_cpython():
    same_as_cpython(MICROGRAD_VALUE)


PROTOCOLS = """class Count:
    def __init__(self, n):
        self.n = n
        self.i = 0
    def __iter__(self):
        return self
    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i
print(list(Count(4)), 3 in Count(5), next(Count(0), 'done'), sorted(Count(3), reverse=True), max(Count(4)))
class Gen:
    def __iter__(self):
        yield 1
        yield 2
print(list(Gen()), [x * 2 for x in Gen()], 2 in Gen(), tuple(Gen()))
class Seq:
    def __getitem__(self, i):
        if i > 2:
            raise IndexError(i)
        return i * 10
print(list(Seq()), 20 in Seq(), 5 in Seq(), Seq()[1])
class Bag:
    def __init__(self):
        self.items = {}
    def __setitem__(self, k, v):
        self.items[k] = v
    def __getitem__(self, k):
        return self.items[k]
    def __delitem__(self, k):
        del self.items[k]
    def __contains__(self, k):
        return k in self.items
    def __len__(self):
        return len(self.items)
b = Bag()
b['a'] = 1
b['b'] = 2
b['a'] += 5
del b['b']
print(b['a'], 'a' in b, 'b' in b, 'b' not in b, len(b))
class P:
    def __init__(self, x):
        self.x = x
    def __eq__(self, o):
        return isinstance(o, P) and o.x == self.x
    def __lt__(self, o):
        return self.x < o.x
    def __str__(self):
        return f"P{self.x}"
print(P(1) == P(1), P(1) != P(2), P(2) > P(1), sorted([P(3), P(1), P(2)])[0].x, P(1) in [P(2), P(1)])
print(P(1), str(P(2)), [P(3)] != [P(3)], min(P(5), P(4)))
class H(P):
    def __hash__(self):
        return self.x * 7
print(len({H(1), H(1), H(2)}), {H(3): 'three'}[H(3)])
class Plain:
    pass
p = Plain()
print(bool(p), p == p, p != Plain(), callable(p), len({p, p}))
class Truth:
    def __bool__(self):
        return False
print(bool(Truth()), not Truth(), 1 if Truth() else 2, Truth() or 'other')
class Base:
    def __add__(self, o):
        return 'Base.add'
    def __radd__(self, o):
        return 'Base.radd'
class Child(Base):
    def __radd__(self, o):
        return 'Child.radd'
class Other:
    def __radd__(self, o):
        return 'Other.radd'
print(Base() + Child(), Base() + Other(), 1 + Base(), Child() + Base())
class Num:
    def __init__(self, v):
        self.v = v
    def __iadd__(self, o):
        self.v += o
        return self
    def __abs__(self):
        return abs(self.v)
n = Num(-3)
m = n
n += 1
print(m is n, n.v, abs(n))
"""


def test_protocols_as_cpython():
    same_as_cpython(PROTOCOLS)


@pytest.mark.parametrize("source", [
    "class A:\n    pass\nlen(A())",
    "class A:\n    pass\nA()[0]",
    "class A:\n    pass\na = A()\na[0] = 1",
    "class A:\n    pass\nA()()",
    "class A:\n    pass\nfor x in A():\n    pass",
    "class A:\n    pass\n1 in A()",
    "class A:\n    pass\nnext(A())",
    "class A:\n    pass\nA() + 1",
    "class A:\n    pass\n1 - A()",
    "class A:\n    pass\nA() < A()",
    "class A:\n    pass\n-A()",
    "class A:\n    pass\nabs(A())",
    "class A:\n    def __len__(self):\n        return -1\nlen(A())",
    "class A:\n    def __len__(self):\n        return 'ten'\nlen(A())",
    "class A:\n    def __len__(self):\n        return 2 ** 70\nlen(A())",
    "class A:\n    def __len__(self):\n        return 1.5\nbool(A())",
    "class A:\n    def __bool__(self):\n        return 1\nif A():\n    pass",
    "class A:\n    def __iter__(self):\n        return [1]\nlist(A())",
    "class A:\n    def __repr__(self):\n        return 5\nprint([A()])",
    "class A:\n    def __str__(self):\n        return None\nprint(A())",
    "class A:\n    def __hash__(self):\n        return 'h'\n{A()}",
    "class A:\n    def __eq__(self, o):\n        return True\n{A(): 1}",
    "class A:\n    def __next__(self):\n        raise ValueError('inner')\nnext(A())",
    "class A:\n    def __getitem__(self, i):\n        return [][i]\nprint(A()[3])",
])
def test_missing_and_broken_protocols_as_cpython(source):
    same_as_cpython(source)


@pytest.mark.parametrize("source", [
    # endless or recursive protocols meet the step, loop, call-depth or item limits (never catchable)
    "class A:\n    def __iter__(self):\n        return self\n    def __next__(self):\n        return 1\nfor x in A():\n"
    "    pass",
    "class A:\n    def __iter__(self):\n        return self\n    def __next__(self):\n        return 1\nlist(A())",
    "class A:\n    def __iter__(self):\n        return self\n    def __next__(self):\n        return 1\n2 in A()",
    "class A:\n    def __iter__(self):\n        return self\n    def __next__(self):\n        return 1\nsorted(A())",
    "class A:\n    def __getitem__(self, i):\n        return i\nlist(A())",
    "class A:\n    def __getitem__(self, i):\n        return self[i]\nA()[0]",
    "class A:\n    def __call__(self, x):\n        return self(x)\nA()(1)",
    "class A:\n    def __len__(self):\n        return len(self)\nlen(A())",
    "class A:\n    def __repr__(self):\n        return repr(self)\nprint(A())",
    "class A:\n    def __eq__(self, o):\n        return self == o\nA() == 1",
    "class A:\n    def __add__(self, o):\n        return self + o\nA() + 1",
    "class A:\n    def __bool__(self):\n        return not self\nbool(A())",
    "class A:\n    def __hash__(self):\n        return len({self})\n{A()}",
    "class A:\n    def __len__(self):\n        return 10 ** 15\n    def __getitem__(self, i):\n        return i\nlist(A())",
    "class A:\n    def __len__(self):\n        return 10 ** 15\n    def __getitem__(self, i):\n        return i\n"
    "import torch\nfrom torch.utils.data import DataLoader\nfor b in DataLoader(A(), batch_size=4, shuffle=True):\n"
    "    pass",
    "class A:\n    def __repr__(self):\n        return 'x' * 10 ** 7\nprint(A())",
    "class A:\n    def __call__(self):\n        try:\n            return self()\n        except RecursionError:\n            return 0\nA()()",
])
def test_hostile_protocols_stay_within_limits(source):
    e = err(source, limits=CLASSIC_LIMITS)
    assert e["type"] in ("LimitExceeded", "RecursionError", "MemoryError"), e


def test_dataloader_over_an_endless_dataset_stops_at_the_step_limit():
    src = ("import torch\nfrom torch.utils.data import DataLoader\nclass A:\n    def __len__(self):\n        return 10 ** 9\n"
           "    def __getitem__(self, i):\n        return torch.zeros(1)\nfor b in DataLoader(A(), batch_size=1000):\n"
           "    pass")
    e = err(src, limits=make_limits(max_steps=20_000))
    assert e["type"] == "LimitExceeded" and "step" in e["message"], e


def test_numpy_and_tensors_never_read_program_sequences():
    e = err("import torch\nclass A:\n    def __len__(self):\n        return 10 ** 9\n    def __getitem__(self, i):\n"
            "        return 1.0\ntorch.tensor(A())")
    assert (e["type"], e["message"]) == ("RuntimeError", "Could not infer dtype of A")
    e = err("import numpy as np\nclass A:\n    def __len__(self):\n        return 10 ** 9\n"
            "    def __getitem__(self, i):\n        return 1.0\nnp.array(A())")
    assert e["type"] == "TypeError", e


def test_module_and_dataset_classes_keep_the_engine_protocols():
    for base in ("torch.nn.Module", "torch.utils.data.Dataset"):
        e = err(f"import torch\nclass A({base}):\n    def __call__(self, x):\n        return x")
        assert e["type"] == "NotImplementedError" and "'__call__'" in e["message"], e
    e = err("class A(ValueError):\n    def __len__(self):\n        return 1")
    assert e["type"] == "NotImplementedError"
    e = err("class Mixin:\n    def __len__(self):\n        return 1\nimport torch\nclass A(Mixin, torch.nn.Module):\n"
            "    pass")
    assert e["type"] == "NotImplementedError"
    assert ok("import torch\nclass A(torch.nn.Module):\n    def __repr__(self):\n        return 'A!'\n"
              "print(A(), [A()], torch.nn.Sequential(A()))") == "A! [A!] Sequential(\n  (0): A!\n)\n"
    assert ok("import torch\nclass D(torch.utils.data.Dataset):\n    def __len__(self):\n        return 2\n"
              "    def __getitem__(self, i):\n        return [10, 20][i]\n    def __str__(self):\n        return 'D'\n"
              "print(D(), list(D()))") == "D [10, 20]\n"


def test_protocol_errors_carry_the_program_line():
    e = err("class A:\n    def __getitem__(self, i):\n        return 1 / 0\nx = 1\nA()[0]")
    assert (e["type"], e["line"]) == ("ZeroDivisionError", 3)
    out = run("class A:\n    def __len__(self):\n        raise KeyError('k')\ntry:\n    len(A())\nexcept KeyError as e:\n"
              "    print('caught', e)")
    assert out.error is None and out.stdout == "caught 'k'\n"
