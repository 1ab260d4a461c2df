"""Names starting with one '_' (issue 21 §3, micrograd as written): a program reads and sets `_x` attributes
on the instances and classes it defined itself, never on tensors, engine modules, numpy, functions or
modules, and never the '_' names nn.Module, Dataset or torch.autograd.Function use themselves; `_x`
parameters, locals and keyword arguments of the program's own functions work; `__x` stays refused."""
from __future__ import annotations

import pytest
from sandbox_testing import err, ok, run, same_as_cpython

REFUSAL = "attributes starting with '_' such as '{}' are not allowed in flowgrad programs"

# Karpathy's micrograd (engine.py and nn.py as published; `_op=` passed by keyword once) and a tiny MLP trained a few steps: only math and
# random, so plain CPython runs the very same text
MICROGRAD = '''
import math
import random


class Value:
    """ stores a single scalar value and its gradient """

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        # internal variables used for autograd graph construction
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op  # the op that produced this node, for graphviz / debugging / etc

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only supporting int/float powers for now"
        out = Value(self.data**other, (self,), f'**{other}')

        def _backward():
            self.grad += (other * self.data**(other-1)) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(0 if self.data < 0 else self.data, (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = (math.exp(2*self.data) - 1)/(math.exp(2*self.data) + 1)
        out = Value(t, (self,), _op='tanh')

        def _backward():
            self.grad += (1 - t**2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []
        visited = set()
        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()

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


class Module:

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []


class Neuron(Module):

    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.uniform(-1,1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum((wi*xi for wi,xi in zip(self.w, x)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):

    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):

    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i+1], nonlin=i!=len(nouts)-1) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


random.seed(1337)
x = Value(-4.0)
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
print(y, x, y._op, sorted(c._op for c in y._prev), len(x._prev))
e = Value(0.5).tanh()
e.backward()
print(e._op, e)

model = MLP(3, [4, 4, 1])
print(model, len(model.parameters()))
xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]
for k in range(5):
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data += -0.05 * p.grad
    # (micrograd's topological order follows a set of Values, i.e. object addresses, in CPython too: the
    # sums' order, so the last bits, differ from run to run)
    print(k, f'{loss.data:.10f}', loss._op, f'{model.layers[0].neurons[0].w[0].data:.10f}')
'''


def test_micrograd_value_and_mlp_train_as_in_cpython():
    out = same_as_cpython(MICROGRAD)
    assert out.count("\n") == 8 and "Value(data=-20.0, grad=1)" in out and "Value(data=-4.0, grad=46.0)" in out


def test_micrograd_course_program_runs_against_engine_autograd():
    # the course program's Value against the engine's torch: the numbers micrograd's README checks
    out = ok(MICROGRAD.split("random.seed")[0] + """
import torch
a = Value(-4.0)
b = Value(2.0)
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
g.backward()
t = torch.tensor(-4.0, dtype=torch.float64, requires_grad=True)
u = (2 * t + 2 + t).relu() + (2 * t + 2 + t) * t
u.backward()
print(f'{g.data:.4f}', f'{a.grad:.4f}', f'{b.grad:.4f}', t.grad.item())
""")
    assert out == "24.7041 138.8338 645.5773 -22.0\n"


def test_single_underscore_names_parameters_and_class_attributes_as_cpython():
    same_as_cpython("""
class Counter:
    _instances = 0
    def __init__(self, _start=0, *, _step=1):
        Counter._instances += 1
        self._n = _start
        self._step = _step
    def _bump(self):
        self._n += self._step
        return self._n
    @property
    def value(self):
        return self._n
class Twice(Counter):
    def _bump(self):
        super()._bump()
        return super()._bump()
_c = Counter(_start=5, _step=2)
_c._bump()
t = Twice(_step=3)
t._bump()
print(_c.value, _c._n, t._n, Counter._instances, Twice._instances, getattr(t, '_step'), hasattr(t, '_zz'))
print(getattr(t, '_missing', 'dflt'), Counter(**{'_start': 7})._n)
try:
    t._nothing
except AttributeError as e:
    print('AttributeError:', e)
_ = [i for i in range(3)]
print(_)
""")


def test_program_class_holding_a_tensor_in_an_underscore_attribute():
    out = ok("""
import torch
class Holder:
    def __init__(self, t):
        self._t = t
    def total(self):
        return self._t.sum()
h = Holder(torch.arange(4.0, requires_grad=True))
h._t = h._t * 2
s = h.total()
s.backward()
print(s.item(), h._t.grad_fn is not None)
""")
    assert out == "12.0 True\n"


@pytest.mark.parametrize(("expr", "name"), [
    ("t._data", "_data"), ("t._version", "_version"), ("t._grad_fn", "_grad_fn"), ("t._base", "_base"),
    ("t.grad_fn._saved_self", "_saved_self"), ("np.ones(2)._x", "_x"), ("math._sqrt", "_sqrt"),
    ("torch._C", "_C"), ("nn.Linear(2, 2)._parameters", "_parameters"), ("f._cache", "_cache"),
    ("print._self", "_self"), ("(1)._x", "_x"), ("[1]._x", "_x"), ("'s'._formatter_parser", "_formatter_parser"),
    ("Holder.get._x", "_x"), ("Holder().get._x", "_x"), ("torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)._x", "_x"),
    ("type(t)._make_subclass", "_make_subclass"), ("getattr(t, '_data')", "_data"),
    ("getattr(math, '_x', 1) if False else getattr(np, '_core')", "_core"),
])
def test_underscore_attributes_of_everything_else_refused_with_the_line(expr, name):
    e = err(f"""import math
import numpy as np
import torch
import torch.nn as nn
def f(): pass
class Holder:
    def get(self): return 1
t = torch.ones(2, requires_grad=True) * 3
x = {expr}
""")
    assert (e["type"], e["message"], e["line"]) == ("AttributeError", REFUSAL.format(name), 9)


@pytest.mark.parametrize("stmt", ["t._data = 1", "t._version += 1", "np.ones(2)._x = 1", "math._x = 1",
                                  "nn.Linear(2, 2)._parameters = {}", "f._x = 1", "torch._x = 1"])
def test_setting_underscore_attributes_on_everything_else_refused(stmt):
    e = err(f"import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\ndef f(): pass\n"
            f"t = torch.ones(2)\n{stmt}\n")
    assert (e["type"], e["line"]) == ("AttributeError", 7)
    assert e["message"].startswith(REFUSAL.format(stmt.split(".")[-1].split(" ")[0]))


def test_hasattr_on_engine_internals_is_false_and_catchable():
    out = ok("""import torch
t = torch.ones(2)
try:
    t._data
except AttributeError as e:
    print('refused:', e)
print(hasattr(t, '_data'), hasattr(t, '_version'), getattr(t, '_data', 'no'))
""")
    assert out == f"refused: {REFUSAL.format('_data')}\nFalse False no\n"


MODULE_SUBCLASS = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self._w = nn.Parameter(torch.ones(2))
        self._scale = 2.0
        self._inner = nn.Linear(2, 1)
    def forward(self, x):
        return self._inner(x * self._w * self._scale)
    def _peek(self):
        return {stmt}
net = Net()
"""


def test_module_subclass_own_underscore_attributes_register_like_pytorch():
    out = ok(MODULE_SUBCLASS.format(stmt="self._scale") + """
print(net._peek(), [n for n, _ in net.named_parameters()], net._inner.out_features)
y = net(torch.ones(1, 2)).sum()
y.backward()
print(net._w.grad.shape, list(net.state_dict()))
""")
    assert out == ("2.0 ['_w', '_inner.weight', '_inner.bias'] 1\ntorch.Size([2]) ['_w', '_inner.weight', "
                   "'_inner.bias']\n")


@pytest.mark.parametrize("name", ["_parameters", "_modules", "_buffers", "_forward_hooks", "_forward_pre_hooks",
                                  "_backward_hooks", "_non_persistent_buffers_set", "_version", "_apply",
                                  "_get_name", "_call_impl", "_fg_cls", "_state_dict_hooks", "_named_members"])
def test_module_subclass_cannot_read_or_overwrite_the_modules_own_names(name):
    read = err(MODULE_SUBCLASS.format(stmt=f"self.{name}") + "net._peek()\n")
    assert (read["type"], read["line"]) == ("AttributeError", 12)
    assert read["message"].startswith(REFUSAL.format(name)) and "torch.nn.Module's own" in read["message"]
    for stmt in (f"net.{name} = {{}}", f"Net.{name} = {{}}", f"x = Net.{name}"):
        e = err(MODULE_SUBCLASS.format(stmt="1") + stmt + "\n")
        assert (e["type"], e["line"]) == ("AttributeError", 14), stmt
        assert "torch.nn.Module's own" in e["message"]
    # assigned in __init__ before super().__init__() or after: refused the same
    e = err("import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
            f"        self.{name} = None\n        super().__init__()\nM()\n")
    assert (e["type"], e["line"]) == ("AttributeError", 4)


def test_module_subclass_overwriting_parameters_dict_cannot_hide_parameters():
    e = err(MODULE_SUBCLASS.format(stmt="1") + "net._parameters.clear()\n")
    assert e["line"] == 14 and "_parameters" in e["message"]
    e = err(MODULE_SUBCLASS.format(stmt="1") + "getattr(net, '_modules')['x'] = 1\n")
    assert e["line"] == 14 and "_modules" in e["message"]


def test_dataset_and_function_subclasses_keep_their_bases_names():
    out = ok("""import torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __init__(self):
        self._xs = torch.arange(6.0)
    def __len__(self):
        return len(self._xs)
    def __getitem__(self, i):
        return self._xs[i]
class Double(torch.autograd.Function):
    _factor = 2
    @staticmethod
    def forward(ctx, x):
        return x * Double._factor
    @staticmethod
    def backward(ctx, g):
        return g * Double._factor
ds = DS()
print([b.tolist() for b in DataLoader(ds, batch_size=3)], ds._xs.shape)
x = torch.ones(2, requires_grad=True)
Double.apply(x).sum().backward()
print(x.grad)
""")
    assert out == "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] torch.Size([6])\ntensor([2., 2.])\n"
    e = err("from torch.utils.data import Dataset\nclass DS(Dataset):\n    pass\nd = DS()\nd._fg_cls = 1\n")
    assert (e["type"], e["line"]) == ("AttributeError", 5)
    e = err("import torch\nclass F(torch.autograd.Function):\n    pass\nF._sequence_nr = 3\n")
    assert (e["type"], e["line"]) == ("AttributeError", 4) and "torch.autograd.Function's own" in e["message"]
    e = err("""import torch
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx._saved = x
        return x
    @staticmethod
    def backward(ctx, g):
        return g
F.apply(torch.ones(1, requires_grad=True))
""")
    assert (e["type"], e["message"], e["line"]) == ("AttributeError", REFUSAL.format("_saved"), 5)


def test_exception_subclass_underscore_attributes():
    same_as_cpython("""
class Oops(ValueError):
    def __init__(self, msg, _code=3):
        super().__init__(msg)
        self._code = _code
try:
    raise Oops('bad', _code=7)
except Oops as e:
    print(e, e._code, e.args)
""")
    e = err("class Oops(Exception):\n    pass\ntry:\n    raise Oops()\nexcept Oops as e:\n    print(e._fg_where)\n")
    assert (e["type"], e["line"]) == ("AttributeError", 6)


@pytest.mark.parametrize("source", [
    "x = t.__dict__", "x = vars(t)", "setattr(t, '_data', 1)", "x = getattr(t, '__dict__')",
    "x = P().__dict__", "x = P.__dict__['_a']", "del P()._a", "x = P()._P__secret", "x = P().__secret",
    "x = getattr(P(), '__init__')", "x = P.__mro__", "x = object.__subclasses__()",
])
def test_dict_vars_setattr_and_dunder_tricks_still_refused(source):
    e = err("import torch\nt = torch.ones(2)\nclass P:\n    _a = 1\n    def __init__(self):\n"
            f"        self._b = 2\n{source}\n")
    assert e["line"] == 7 and e["type"] in ("AttributeError", "NameError", "NotImplementedError", "TypeError"), e


def test_underscore_keywords_to_library_calls_refused():
    for call in ("torch.ones(2, _dtype=1)", "torch.nn.Linear(2, 2, _x=1)", "print(1, _file=None)",
                 "math.sqrt(4, _x=1)", "t.sum(_dim=0)", "torch.ones(2, **{'_x': 1})", "sorted([1], _key=None)",
                 "M(_x=1)", "E(_x=1)", "Fn.apply(t, _x=1)"):
        e = err("import math\nimport torch\nt = torch.ones(2)\nclass M(torch.nn.Module):\n    pass\n"
                "class E(Exception):\n    pass\nclass Fn(torch.autograd.Function):\n    pass\n"
                f"y = {call}\n")
        assert (e["type"], e["line"]) == ("TypeError", 10), (call, e)
        assert "keyword argument '_" in e["message"], (call, e)


def test_underscore_keywords_to_program_functions_and_dunder_keywords():
    same_as_cpython("""
def f(a, _b=1, **kw):
    return a + _b + len(kw)
class C:
    def __init__(self, _x=0):
        self._x = _x
    def m(self, _y):
        return self._x + _y
    def __call__(self, _z):
        return _z * 2
print(f(1, _b=5), f(1, **{'_b': 2, '_c': 3}), C(_x=4).m(_y=1), C()(_z=3), (lambda _q: _q)(_q=9))
""")
    e = err("def f(**kw):\n    return kw\nf(__x=1)\n")
    assert (e["type"], e["line"]) == ("NameError", 3)
    e = err("def f(**kw):\n    return kw\nf(**{'__x': 1})\n")
    assert (e["type"], e["line"]) == ("TypeError", 3)
    e = err("def __f():\n    pass\n")
    assert e["type"] == "NotImplementedError"


def test_underscore_names_are_bounded_like_any_other():
    # a long chain of `_prev` links and many '_' attributes stay inside the run's budgets
    out = run("""
class Node:
    def __init__(self, prev):
        self._prev = prev
n = None
for i in range(5000):
    n = Node(n)
k = 0
while n is not None:
    n = n._prev
    k += 1
print(k)
""")
    assert out.error is None and out.stdout == "5000\n"
    e = err("class A:\n    pass\na = A()\nwhile True:\n    setattr_ = a\n    a._x = [0] * 10**7\n    a = A()\n"
            "    a._y = [a._x] if hasattr(a, '_x') else [0] * 10**9\n")
    assert e["type"] in ("MemoryError", "LimitError") or "limit" in e["message"].lower(), e
