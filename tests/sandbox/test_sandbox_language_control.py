"""The language the sandbox supports: decorators, dunder reads, exceptions, generators, global/nonlocal, star-
unpacking, with."""
from __future__ import annotations

import pytest
from sandbox_testing import same_as_cpython

# ---------------------------------------------------------------- decorators
DECORATOR_PROGRAMS = {
    "program_decorators": """
import functools

def shout(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling")
        return fn(*args, **kwargs)
    return wrapper

def repeat(n):
    def deco(fn):
        def inner(*a):
            return [fn(*a) for _ in range(n)]
        return inner
    return deco

@shout
@repeat(2)
def add(a, b):
    return a + b

print(add(1, 2))

def register(table):
    def deco(cls):
        table.append(cls)
        return cls
    return deco

seen = []
@register(seen)
class Point:
    pass
print(len(seen), seen[0] is Point)
""",
    "methods": """
class Counter:
    count = 0
    def __init__(self, start):
        self.v = start
    @property
    def value(self):
        return self.v
    @value.setter
    def value(self, v):
        print("set", v)
        self.v = v
    @property
    def double(self):
        return 2 * self.v
    @staticmethod
    def helper(x):
        return x * 2
    @classmethod
    def make(cls, v):
        cls.count += 1
        return cls(v)

class Sub(Counter):
    pass

c = Counter.make(3)
s = Sub.make(4)
print(c.value, Counter.helper(4), c.helper(5), Counter.count, Sub.count, type(s) is Sub)
c.value = 10
print(c.value, c.double)
c.double = 1
""",
    "super_in_a_wrapped_method": """
def logged(fn):
    def wrapper(self, *args):
        print("->", *args)
        return fn(self, *args)
    return wrapper

class Base:
    def hello(self, x):
        return "base" + str(x)

class Child(Base):
    @logged
    def hello(self, x):
        return "child+" + super().hello(x)

print(Child().hello(1))
""",
    "decorator_errors": """
def bad(fn):
    return 1 / 0

@bad
def f():
    pass
""",
    "not_a_decorator": """
x = 1

@len
def f():
    pass
""",
    "decorator_returns_none": """
@(lambda fn: None)
def f():
    pass
f()
""",
}


@pytest.mark.parametrize("name", DECORATOR_PROGRAMS)
def test_decorators_as_cpython(name):
    same_as_cpython(DECORATOR_PROGRAMS[name])


def test_grad_mode_decorators_as_torch():
    pytest.importorskip("torch")
    src = """
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)

    @torch.no_grad()
    def predict(self, x):
        return self.lin(x)

    @property
    def width(self):
        return self.lin.in_features

    def forward(self, x):
        return self.lin(x)

n = Net()
x = torch.ones(1, 2)
print(n.predict(x).requires_grad, n(x).requires_grad, n.width)

@torch.no_grad
def f(x):
    return x * 2

@torch.enable_grad()
def g(x):
    return x * 2

@torch.inference_mode()
def h(x):
    return x * 2

print(f(torch.ones(2, requires_grad=True)).requires_grad, h(torch.ones(2, requires_grad=True)).requires_grad)
with torch.no_grad():
    print(g(torch.ones(2, requires_grad=True)).requires_grad)
print(torch.is_grad_enabled())

def twice(fn):
    return lambda t: fn(fn(t))

@twice
@torch.no_grad()
def step(t):
    return t + 1
print(step(torch.zeros(1, requires_grad=True)))
"""
    same_as_cpython(src)


def test_decorated_forward_as_torch():
    pytest.importorskip("torch")
    same_as_cpython("""
import torch

class Frozen(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    @torch.no_grad()
    def forward(self, x):
        return self.lin(x) * 0 + 1

class Scale(torch.nn.Module):
    @staticmethod
    def forward(x):
        return x * 3

net = torch.nn.Sequential(Frozen(), Scale())
y = net(torch.ones(1, 3))
print(y, y.requires_grad)
""")


# ---------------------------------------------------------------- __name__, __class__, __qualname__, __doc__
DUNDER_PROGRAM = """import torch
import math
def f():
    '''Doc of f.'''
    def inner():
        pass
    return inner
class A:
    '''A doc.'''
    def m(self):
        pass
    class B:
        def n(self):
            pass
x = torch.ones(2)
print(type(x).__name__, x.__class__.__name__, f.__name__, f.__qualname__, f().__qualname__, f.__doc__)
print(A.__name__, A.__doc__, A.m.__qualname__, A.B.n.__qualname__, A().m.__name__, A.B.__qualname__)
print(type(1).__name__, (1).__class__.__name__, "s".__class__.__name__, [].__class__.__name__, len.__name__)
print(type(A()).__name__, A().__class__ is A, type(A).__name__, A.__class__.__name__, math.__name__, torch.nn.__name__)
print(torch.nn.Linear.__name__, type(torch.nn.Linear(1, 1)).__name__, torch.exp.__name__, (lambda: 0).__name__)
print(type(x.sum().grad_fn).__name__ if False else "", torch.no_grad.__name__, type(torch.float32).__name__)
print(__name__, x.add.__name__, print.__name__, int.__name__)
"""

ENGINE_NAMES_PROGRAM = """import torch
import torch.nn.functional as F
x = torch.ones(2, requires_grad=True)
y = (x * 2).sum()
print(type(y.grad_fn).__name__, y.grad_fn.__class__.__name__)
names = [x.exp, x.relu, torch.relu, F.relu, x.sum, x.mean, torch.tanh, x.tanh, F.mse_loss, torch.optim.SGD, x.view, torch.zeros, F.softmax, x.backward, torch.manual_seed]
print([n.__name__ for n in names])
print(type(torch.optim.SGD([x], lr=0.1)).__name__, type(torch.float32).__name__, torch.float32.__class__.__name__, type(torch.Size([1])).__name__)
print(type(torch.nn.Linear(1, 1).weight).__name__, type(x.shape).__name__, type(range(3)).__name__, type(None).__name__)
"""


@pytest.mark.parametrize("source", [DUNDER_PROGRAM, ENGINE_NAMES_PROGRAM], ids=["program", "engine"])
def test_dunder_reads_as_cpython(source):
    pytest.importorskip("torch")
    same_as_cpython(source)


@pytest.mark.parametrize("source", [
    "x = 1\nx.__name__",
    "import torch\ntorch.nn.Linear(1, 1).__name__",
    "class A:\n    pass\nA().__name__",
])
def test_dunder_reads_missing_as_cpython(source):
    same_as_cpython(source)


# ---------------------------------------------------------------- try/except/else/finally, raise, assert
EXCEPTIONS_PROGRAM = """class MyError(ValueError):
    def __init__(self, msg, code):
        super().__init__(msg)
        self.code = code

def risky(n):
    if n == 0:
        raise MyError("zero!", 42)
    if n == 1:
        raise KeyError("k")
    if n == 2:
        return [1][5]
    if n == 3:
        return 1 / 0
    if n == 4:
        raise TypeError
    return n

for n in range(6):
    try:
        r = risky(n)
    except MyError as e:
        print("my", e, e.code, e.args, repr(e), type(e).__name__, isinstance(e, ValueError))
    except (KeyError, IndexError) as e:
        print("lookup", type(e).__name__, e, e.args, repr(e))
    except ArithmeticError as e:
        print("arith", e, e.__class__.__name__)
    except Exception as e:
        print("other", repr(e), str(e), e.args)
    else:
        print("ok", r)
    finally:
        print("finally", n)

def f():
    try:
        return "try"
    finally:
        print("cleanup")
print(f())

def g():
    for i in range(3):
        try:
            if i == 1:
                continue
            print("i", i)
        finally:
            print("fin", i)
g()
try:
    try:
        {}["x"]
    except KeyError:
        print("re-raise")
        raise
except KeyError as e:
    print("outer", repr(e))
try:
    raise RuntimeError("a") from ValueError("b")
except RuntimeError as e:
    print(e)
try:
    assert 1 == 2, "math broke"
except AssertionError as e:
    print("assert:", e, e.args)
try:
    assert False
except AssertionError as e:
    print("assert2:", repr(e))
try:
    undefined_name
except NameError as e:
    print(e)
try:
    int("x")
except ValueError as e:
    print(e)
class E2(Exception):
    pass
try:
    raise E2
except E2 as e:
    print(repr(e), str(e) == "", e.args)
try:
    raise E2("a", 1)
except BaseException as e:
    print(e, repr(e))
x = 0
try:
    x = 1
except:
    pass
print(x)
try:
    raise 5
except TypeError as e:
    print(e)
def h():
    raise ValueError("deep")
try:
    h()
except ValueError as err:
    print("caught", err)
print("done")
raise MyError("final", 1)
"""

# ---------------------------------------------------------------- generators, global/nonlocal, star-unpacking
GENERATORS_PROGRAM = """def count_up(n):
    i = 0
    while i < n:
        print("yielding", i)
        yield i
        i += 1
    return "done"

for v in count_up(3):
    print("got", v)

g = count_up(2)
print(next(g), next(g))
try:
    next(g)
except StopIteration as e:
    print("stop", e.args)

def batches(xs, size):
    for i in range(0, len(xs), size):
        yield xs[i:i + size]

print(list(batches(list(range(7)), 3)))

def outer():
    r = yield from count_up(2)
    print("inner returned", r)
    yield from [10, 20]
    yield "end"

print(list(outer()))

def echo():
    total = 0
    while True:
        x = yield total
        if x is None:
            break
        total += x

e = echo()
print(next(e), e.send(5), e.send(10))

def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b

f = fib()
print([next(f) for _ in range(10)])
print(sum(x * x for x in range(5)), type(fib()).__name__)

def guarded():
    try:
        yield 1
        yield 2
    finally:
        print("cleanup ran")
print(list(guarded()))

def with_except():
    for i in range(3):
        try:
            if i == 1:
                raise ValueError("one")
            yield i
        except ValueError as err:
            yield str(err)
print(list(with_except()))

def bad():
    yield 1
    raise StopIteration
try:
    print(list(bad()))
except RuntimeError as err:
    print("runtime:", err)

counter = 0
def bump():
    global counter
    counter += 1
    return counter
bump(); bump()
print(counter)

def make_acc():
    total = 0
    def add(x):
        nonlocal total
        total += x
        return total
    return add
acc = make_acc()
acc(1)
print(acc(5))

def gen_items(d):
    for k, v in d.items():
        if v:
            yield k
print(sorted(gen_items({"a": 1, "b": 0, "c": 2})))
it = iter([1, 2, 3])
print(next(it), list(it))
a, *b = [1, 2, 3]
first, *mid, last = range(6)
print(a, b, first, mid, last, [*b, *mid], {**{"x": 1}, "y": 2}, (*b,), {*b, 9})
def kw(*args, **kw):
    return args, kw
print(kw(*[1, 2], *(3,), **{"a": 1}, b=2))
"""


@pytest.mark.parametrize("source", [EXCEPTIONS_PROGRAM, GENERATORS_PROGRAM], ids=["exceptions", "generators"])
def test_flow_as_cpython(source):
    same_as_cpython(source)


@pytest.mark.parametrize("source", [
    # uncaught errors: type, message and the line CPython's traceback ends on
    "def f():\n    raise ValueError('inner')\ntry:\n    f()\nexcept ValueError as e:\n    x = 1\n    raise e",
    "try:\n    1 / 0\nexcept ZeroDivisionError:\n    y = 2\n    raise",
    "try:\n    1 / 0\nexcept ZeroDivisionError:\n    raise KeyError('k') from None",
    "try:\n    1 / 0\nfinally:\n    print('fin')",
    "try:\n    pass\nexcept 5:\n    pass\nprint('no error: the handler is not evaluated')",
    "try:\n    1 / 0\nexcept 5:\n    pass",
    "raise 'text'",
    "raise ValueError from 5",
    "class E(Exception):\n    pass\nraise E('a', 2)",
    "raise KeyError('missing')",
    "raise StopIteration",
    "assert 1 > 2, ('tuple', 1)",
    "x = [1]\ntry:\n    x[3]\nexcept IndexError as e:\n    print(e, repr(e), e.args)\nprint(e)",
    "def g():\n    yield 1\n    return 5\nit = g()\nnext(it)\nnext(it)",
    "def g():\n    yield 1\nit = g()\nprint(next(it), next(it, 'default'))\nnext(it)",
    "def f():\n    nonlocal_value = 1\n    def g():\n        nonlocal nonlocal_value\n        nonlocal_value = 2\n"
    "    g()\n    return nonlocal_value\nprint(f())",
    "def f():\n    global late\n    late = 3\nf()\nprint(late)",
    "def f():\n    global never\n    return never\nf()",
    "with 5:\n    pass",
    "try:\n    raise ValueError('a')\nexcept ValueError:\n    raise TypeError('b')",
])
def test_errors_as_cpython(source):
    same_as_cpython(source)


def test_engine_errors_are_catchable_with_torch_text():
    pytest.importorskip("torch")
    same_as_cpython("""
import torch
a = torch.ones(2, 3)
b = torch.ones(4, 5)
try:
    a @ b
except RuntimeError as e:
    print("caught:", e)
try:
    torch.ones(2).backward()
except RuntimeError as e:
    print("caught:", e)
x = torch.ones(1, requires_grad=True)
y = (x * 2).sum()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print("twice:", str(e)[:60])
""")


def test_with_on_program_classes_as_cpython():
    same_as_cpython("""
class Timer:
    def __init__(self, name):
        self.name = name
    def __enter__(self):
        print("enter", self.name)
        return self
    def __exit__(self, exc_type, exc, tb):
        print("exit", self.name, exc_type.__name__ if exc_type else None, exc)
        return exc_type is KeyError

with Timer("a") as t, Timer("b"):
    print("inside", t.name)
with Timer("c"):
    {}["x"]
print("swallowed")
with Timer("d"):
    raise ValueError("kept")
""")
