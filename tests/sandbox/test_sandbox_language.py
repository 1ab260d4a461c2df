"""The language the sandbox supports: plain Python parts (no engine needed)."""
from __future__ import annotations

import pytest
from sandbox_testing import err, ok, same_as_cpython


def test_arithmetic_comparisons_boolops():
    assert ok("print(1 + 2 * 3, 7 // 2, 7 % 3, 2 ** 10, 7 / 2, -3, +3, ~3)") == "7 3 1 1024 3.5 -3 3 -4\n"
    assert ok("print(1 < 2 < 3, 1 < 3 < 2, 1 == 1.0, 1 is None, 2 in [1, 2], 3 not in (1,))") == \
        "True False True False True True\n"
    assert ok("print(0 or 'x', 1 and 0, not 0, None or [] or 5)") == "x 0 True 5\n"
    assert ok("print(1 if 0 else 2, 'a' + 'b', [1] + [2], (1,) * 2)") == "2 ab [1, 2] (1, 1)\n"


def test_assignment_forms():
    src = """
a, (b, c), *d = 1, (2, 3), 4, 5
e = f = 7
first, *rest = range(4)
xs = [1, 2, 3]
xs[0] = 10
xs[1:] = [20]
d2 = {}
d2['k'] = 1
d2['k'] += 2
n = 1
n += 1
n *= 5
n -= 1
n //= 2
x: int = 4
print(a, b, c, d, e, f, first, rest, xs, d2, n, x)
"""
    assert ok(src) == "1 2 3 [4, 5] 7 7 0 [1, 2, 3] [10, 20] {'k': 3} 4 4\n"


def test_unpacking_errors():
    assert err("a, b = [1, 2, 3]")["message"] == "too many values to unpack (expected 2)"
    assert err("a, b, c = [1, 2]")["message"] == "not enough values to unpack (expected 3, got 2)"


def test_control_flow():
    src = """
out = []
for i in range(10):
    if i == 2:
        continue
    elif i == 5:
        break
    else:
        out.append(i)
else:
    out.append('never')
j = 0
while j < 3:
    j += 1
else:
    out.append('while-else')
for k in []:
    pass
else:
    out.append('for-else')
print(out)
"""
    assert ok(src) == "[0, 1, 3, 4, 'while-else', 'for-else']\n"


def test_iteration_over_builtins():
    src = """
d = {'a': 1, 'b': 2}
for k, v in d.items():
    print(k, v)
for i, (x, y) in enumerate(zip([1, 2], 'ab'), start=1):
    print(i, x, y)
for t in (1, 2):
    print(t)
for k in d:
    print(k)
"""
    assert ok(src) == "a 1\nb 2\n1 1 a\n2 2 b\n1\n2\na\nb\n"


def test_functions_defaults_kwargs_varargs_closures():
    src = """
def f(a, b=2, *args, c=3, **kw):
    return a + b + sum(args) + c + sum(kw.values())
print(f(1), f(1, 1), f(1, 1, 1, 1), f(1, c=0), f(1, z=10))
def make(n):
    def add(x):
        return x + n
    return add
add3 = make(3)
print(add3(4), (lambda a, b=2: a * b)(5), list(map(lambda v: v * 2, [1, 2])))
def noret():
    pass
print(noret())
"""
    assert ok(src) == "6 5 7 3 16\n7 10 [2, 4]\nNone\n"


def test_call_errors_look_like_python():
    assert err("def f(a):\n    pass\nf()")["message"] == "f() missing 1 required positional argument: 'a'"
    assert err("def f(a):\n    pass\nf(1, 2)")["message"] == "f() takes 1 positional argument but 2 were given"
    assert err("def f(a):\n    pass\nf(b=1)")["message"] == "f() got an unexpected keyword argument 'b'"
    assert err("x = 1\nx()")["message"] == "'int' object is not callable"


def test_recursion_is_bounded():
    assert ok("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(15))") == "610\n"
    e = err("def f(n):\n    return f(n + 1)\nf(0)")
    assert e["type"] == "RecursionError" and "100" in e["message"] and e["line"] == 2


def test_comprehension_scoping():
    src = """
x = 10
ys = [x * 2 for x in range(3)]
print(x, ys)
print({k: v for k, v in zip('ab', [1, 2])}, {i % 3 for i in range(10)})
print([(i, j) for i in range(3) if i for j in range(i)])
print(sum(i * i for i in range(4)), any(v > 2 for v in [1, 3]), all([]))
n = 3
print([n * k for k in range(n)])
"""
    assert ok(src) == "10 [0, 2, 4]\n{'a': 1, 'b': 2} {0, 1, 2}\n[(1, 0), (2, 0), (2, 1)]\n14 True True\n[0, 3, 6]\n"
    e = err("z = [q for q in range(3)]\nprint(q)")
    assert e["type"] == "NameError" and e["line"] == 2


def test_walrus_binds_outside_comprehension():
    assert ok("vals = [y := k * 2 for k in range(3)]\nprint(y, vals)") == "4 [0, 2, 4]\n"


def test_fstrings_and_format_specs():
    src = """
x = 3.14159
print(f'{x:.2f}|{x:>10.3f}|{x!r}|{[1, 2]}|{"s":^7}|{42:05d}|{1234567:,}|{0.5:.1%}|{x=}')
w = 8
print(f'{x:{w}.2f}|')
print('{} and {:.1f} and {name}'.format(1, 2.25, name='n'), '{0}{0}'.format('ab'))
print('%.3f %s %d %r' % (x, [1], 7, 'q'), '%5.1f' % 2.25)
print(format(2.5, '.3f'), str(1.5), repr('a'))
"""
    assert ok(src) == ("3.14|     3.142|3.14159|[1, 2]|   s   |00042|1,234,567|50.0%|x=3.14159\n"
                       "    3.14|\n1 and 2.2 and n abab\n3.142 [1] 7 'q'   2.2\n2.500 3.0\n"
                       .replace("3.0", "1.5 'a'"))


def test_format_spec_limits():
    for src in ("f'{1:>100000}'", "'{:>100000}'.format(1)", "'%100000d' % 1", "format(1, '.5000f')"):
        e = err(src)
        assert e["type"] == "LimitExceeded" and "1000" in e["message"], src
    assert err("'{0.real}'.format(1)")["type"] == "ValueError"
    assert err("'{x}'.format_map({'x': 1})")["type"] == "AttributeError"


def test_builtins():
    src = """
print(len([1, 2]), list(range(2, 8, 3)), min(3, 1, 2), max([4, 9]), abs(-2), round(2.567, 2), round(2.5))
print(sum([1, 2, 3]), sum([0.5, 0.5], 1), float('inf'), int('42'), int(3.9), bool(0), str(12), list('ab'))
print(tuple([1, 2]), dict(a=1), dict([('b', 2)]), sorted([3, 1, 2], reverse=True), list(reversed([1, 2])))
print(isinstance(1, int), isinstance(1.0, (int, float)), isinstance('a', list), any([0, 1]), all([1, 0]))
print(min([3, 1, 2], key=lambda v: -v), sorted(['bb', 'a'], key=len), set([1, 1]), divmod(7, 2))
"""
    assert ok(src) == (
        "2 [2, 5] 1 9 2 2.57 2\n"
        "6 2.0 inf 42 3 False 12 ['a', 'b']\n"
        "(1, 2) {'a': 1} {'b': 2} [3, 2, 1] [2, 1]\n"
        "True True False True False\n"
        "3 ['a', 'bb'] {1} (3, 1)\n"
    )


def test_print_sep_end_and_streaming():
    chunks = []
    from sandbox_testing import run
    out = run("print(1, 2, sep='-', end='!')\nprint()\nprint('x')", on_print=chunks.append)
    assert out.error is None
    assert out.stdout == "1-2!\nx\n"
    assert chunks == ["1-2!", "\n", "x\n"]


def test_string_list_dict_methods():
    src = """
s = ' Hello, World '
print(s.strip().lower(), s.split(','), '-'.join(['a', 'b']), s.replace('l', 'L').strip(), 'ab'.upper())
xs = [3, 1]
xs.append(2)
xs.extend([5])
xs.sort()
xs.insert(0, 0)
print(xs, xs.pop(), xs.index(1), xs.count(3))
d = {'a': 1}
d.update(b=2)
print(d.get('a'), d.get('z', 0), list(d.keys()), list(d.values()), d.pop('a'), d)
"""
    assert ok(src) == ("hello, world [' Hello', ' World '] a-b HeLLo, WorLd AB\n"
                       "[0, 1, 2, 3] 5 1 1\n1 0 ['a', 'b'] [1, 2] 1 {'b': 2}\n")


def test_plain_classes():
    src = """
class Counter:
    start = 5
    def __init__(self, step=1):
        self.n = self.start
        self.step = step
    def tick(self):
        self.n += self.step
        return self.n
c = Counter(2)
c.tick()
print(c.tick(), c, isinstance(c, Counter), Counter.start, Counter)
class A:
    def __init__(self):
        self.a = 1
    def who(self):
        return 'A'
class B(A):
    def __init__(self):
        super().__init__()
        self.b = 2
    def who(self):
        return 'B' + super().who()
b = B()
print(b.a, b.b, b.who(), isinstance(b, A), isinstance(A(), B))
class Empty:
    pass
e = Empty()
e.x = 3
print(e.x)
"""
    assert ok(src) == "9 <Counter object> True 5 <class 'Counter'>\n1 2 BA True False\n3\n"
    e = err("class A:\n    pass\nA().missing")
    assert e["message"] == "'A' object has no attribute 'missing'" and e["line"] == 3
    assert err("class A:\n    pass\nA(1)")["message"] == "A() takes no arguments"


def test_main_guard_and_underscore_names():
    assert ok("_ = 1\n_tmp = 2\nfor _ in range(2):\n    pass\nif __name__ == '__main__':\n    print(_tmp)") == "2\n"


def test_assert_and_del():
    e = err("x = 1\nassert x == 2, f'x is {x}'")
    assert e == {"type": "AssertionError", "message": "x is 1", "line": 2, "column": 0}
    e = err("x = 1\ndel x\nprint(x)")
    assert e["type"] == "NameError" and e["line"] == 3
    assert ok("d = {'a': 1, 'b': 2}\ndel d['a']\nprint(d)") == "{'b': 2}\n"


@pytest.mark.parametrize("source,etype,line", [
    ("x = 1\ny = x +\n", "SyntaxError", 2),
    ("z = (1 +\n", "SyntaxError", 1),
    ("x = = 1", "SyntaxError", 1),
    ("if True:\nprint(1)", "IndentationError", 2),
    ("x = 1\nprint(foo)", "NameError", 2),
    ("x = 1\n\nx.bar", "AttributeError", 3),
    ("x = 1 / 0", "ZeroDivisionError", 1),
    ("x = [1]\nx[5]", "IndexError", 2),
    ("d = {}\nd['k']", "KeyError", 2),
    ("int('x')", "ValueError", 1),
    ("'a' + 1", "TypeError", 1),
    ("x = 1\ndef f():\n    return undefined_name\nf()", "NameError", 3),
    ("break", "SyntaxError", 1),
    ("def f():\n    pass\nreturn 1", "SyntaxError", 3),
])
def test_error_types_and_lines(source, etype, line):
    e = err(source)
    assert e["type"] == etype, e
    assert e["line"] == line, e


def test_error_messages():
    assert err("print(foo)")["message"] == "name 'foo' is not defined"
    assert err("d = {}\nd['k']")["message"] == "'k'"
    assert err("1 / 0")["message"] == "division by zero"


def test_error_inside_function_reports_innermost_line():
    src = "def f(x):\n    y = x + 1\n    return y / 0\n\nprint(f(1))"
    e = err(src)
    assert (e["type"], e["line"]) == ("ZeroDivisionError", 3)


def test_multiline_statement_error_line_is_expressions_line():
    src = "x = [1, 2]\ny = (1 +\n     x[7])"
    e = err(src)
    assert (e["type"], e["line"]) == ("IndexError", 3)


def test_globals_kept_after_error():
    from sandbox_testing import run
    out = run("a = 1\nb = [2]\nc = a / 0\nd = 4")
    assert out.error["type"] == "ZeroDivisionError"
    assert out.globals == {"a": 1, "b": [2]}


@pytest.mark.parametrize("source,what", [
    ("try:\n    x = 1\nexcept* Exception:\n    pass", "'try ... except*' statements"),
    ("def f():\n    x = [(yield)]", "'yield' inside an expression"),
    ("def f():\n    print((yield 1))", "'yield' inside an expression"),
    ("class A:\n    global x", "'global' in a class body"),
    ("match 1:\n    case 1:\n        pass", "'match' statements"),
    ("async def f():\n    pass", "'async def'"),
    ("from math import *", "starred imports"),
    ("class A:\n    pass\na = A()\na.x = 1\ndel a.x", "deleting attributes"),
])
def test_refused_features(source, what):
    e = err(source)
    assert e["type"] == "NotImplementedError"
    assert what in e["message"] and "not supported" in e["message"]
    assert isinstance(e["line"], int)


@pytest.mark.parametrize("name", ["eval", "exec", "open", "getattr", "hasattr", "compile", "globals", "input"])
def test_dangerous_builtins_are_not_defined(name):
    e = err(f"{name}('1')")
    assert e["type"] == "NameError" and f"name '{name}' is not defined" in e["message"]


def test_unicode_lookalikes_are_normalised():
    e = err("x = [1]\nx.\uff3f\uff3fclass\uff3f\uff3f")  # fullwidth low lines
    assert e["type"] in ("AttributeError", "SyntaxError")
    assert err("\U0001d41e\U0001d42f\U0001d41a\U0001d425('1')")["message"].startswith("name 'eval'")


def test_math_module():
    src = "import math\nprint(math.sqrt(16), math.floor(2.7), math.isclose(0.1 + 0.2, 0.3), round(math.pi, 2))"
    assert ok(src) == "4.0 2 True 3.14\n"
    assert ok("print(math.exp(0))") == "1.0\n"  # available without import
    assert ok("import math\nprint(math.factorial(5), math.comb(5, 2))") == "120 10\n"
    assert err("import math\nmath.getrandbits")["type"] == "AttributeError"


def test_deep_and_cyclic_structures_print_safely():
    out = ok("a = []\nfor i in range(5000):\n    a = [a]\nprint(len(str(a)) > 0)")
    assert out == "True\n"
    assert ok("a = [1]\na.append(a)\nprint(a)") == "[1, [...]]\n"


def test_interpreter_objects_print_without_internals():
    out = ok("def f():\n    pass\nclass C:\n    pass\nprint(f, C, C(), print, len, int, lambda: 0)")
    assert out == "<function f> <class 'C'> <C object> <built-in function print> <built-in function len> " \
                  "<class 'int'> <function <lambda>>\n"


def test_random_module_is_per_run_and_seeded():
    src = "import random\nrandom.seed(1)\nxs = list(range(5))\nrandom.shuffle(xs)\nprint(xs, random.randint(1, 6))"
    assert ok(src) == ok(src)
    assert ok("import random\nprint(random.random())") == ok("import random\nprint(random.random())")
    assert err("import random\nrandom.getrandbits(10 ** 9)")["type"] == "AttributeError"
    assert err("import random\nrandom.seed = 1")["type"] == "TypeError"


def test_imports():
    e = err("import scipy as sp")
    assert e["type"] == "ModuleNotFoundError" and "scipy" in e["message"] and "torch" in e["message"]
    assert "numpy" in e["message"] and "matplotlib.pyplot" in e["message"]
    e = err("from math import nope")
    assert e["type"] == "ImportError" and e["line"] == 1


def test_type_is_display_only_or_a_reachable_class():
    src = ("class C:\n    pass\nprint(type(1), type('s'), type([]), type(C()), type(C), type(print), type(None))\n"
           "print(type(1) is int, type(C()) is C, isinstance(2, type(1)), type(type(1)))")
    assert ok(src) == ("<class 'int'> <class 'str'> <class 'list'> <class 'C'> <class 'type'> <class 'function'> "
                       "<class 'NoneType'>\nTrue True True <class 'type'>\n")
    assert err("type(type(1))('X', (), {})")["message"] == "'type' object is not callable"


def test_inplace_list_extension_and_slice_assignment_take_iterables_once():
    src = "xs = [1]\nxs += zip([1, 2], [3, 4])\nxs += range(3)\nxs[1:2] = range(2)\nprint(xs)"
    assert ok(src) == "[1, 0, 1, (2, 4), 0, 1, 2]\n"
    e = err("xs = [1]\nxs[0:1] = range(10 ** 9)")
    assert e["type"] == "LimitExceeded" and e["line"] == 2


def test_super_needs_a_program_instance():
    assert err("class A:\n    pass\nsuper(A, 1).x")["type"] == "TypeError"


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


# ---------------------------------------------------------------- the standard library: time, collections, functools,
# itertools, math, random (the same numbers as CPython's random for the same seed)
STDLIB_PROGRAM = """import math
import random
import time
import functools
import itertools
from collections import OrderedDict, defaultdict, deque, namedtuple, Counter
from functools import partial, reduce, lru_cache

od = OrderedDict()
od["b"] = 1
od["a"] = 2
od.move_to_end("b")
print(od, list(od.keys()), od.popitem(last=False))
dd = defaultdict(list)
for w in ["apple", "avocado", "banana"]:
    dd[w[0]].append(w)
print(dd, dict(dd), dd["z"], len(dd))
cnt = defaultdict(int)
for ch in "hello":
    cnt[ch] += 1
print(sorted(cnt.items()))
c = Counter("mississippi")
print(c.most_common(2), c["s"], c)
dq = deque([1, 2, 3], maxlen=4)
dq.append(4)
dq.append(5)
dq.appendleft(0)
dq.rotate(1)
print(dq, dq.popleft(), dq.maxlen, len(dq))
Point = namedtuple("Point", ["x", "y"])
P3 = namedtuple("P3", "x y z", defaults=[0])
p = Point(1, y=2)
q = P3(1, 2)
print(p, p.x + p.y, p[0], q, isinstance(p, tuple), isinstance(p, Point), type(p).__name__, Point.__name__, Point)
x, y = p
print(x, y, p == (1, 2), len(q))
def power(base, exp):
    return base ** exp
square = partial(power, exp=2)
print(square(5), reduce(lambda a, b: a * b, [1, 2, 3, 4]), reduce(lambda a, b: a + b, [], 10))
@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(60))
@functools.cache
def sq(n):
    return n * n
print(sq(4), sq(4))
print(list(itertools.islice(itertools.count(5, 2), 4)), list(itertools.product("ab", repeat=2)))
print(list(itertools.permutations([1, 2, 3], 2)), list(itertools.combinations(range(4), 2)))
print(list(itertools.chain([1], (2, 3))), list(itertools.accumulate([1, 2, 3, 4])), list(itertools.accumulate([1, 2, 3], lambda a, b: a * b)))
print(list(itertools.zip_longest("ab", "xyz", fillvalue="-")), [(k, list(g)) for k, g in itertools.groupby("aabbbc")])
print(list(itertools.islice(itertools.cycle("ab"), 5)), list(itertools.repeat(7, 3)), list(itertools.pairwise([1, 2, 3])))
print(list(itertools.takewhile(lambda v: v < 3, [1, 2, 3, 1])), list(itertools.starmap(pow, [(2, 3)])))
print(math.factorial(20), math.comb(10, 3), math.perm(5, 2), math.prod([1, 2, 3, 4]), math.gcd(12, 18), math.lcm(4, 6))
print(math.isqrt(99), math.fsum([0.1] * 10), math.dist([0, 0], [3, 4]), math.modf(2.5), math.frexp(8.0), math.ldexp(1.0, 3))
print(math.cbrt(27.0), math.exp2(3), math.remainder(7, 3), math.trunc(2.7), math.pi, math.inf, math.tau)
random.seed(42)
print(random.random(), random.randint(1, 10), random.uniform(1, 2), random.choice("abc"))
xs = list(range(10))
random.shuffle(xs)
print(xs, random.sample(range(100), 5), random.gauss(0, 1), random.randrange(0, 10, 2))
random.seed("text seed")
print(random.random())
t0 = time.perf_counter()
time.sleep(0.01)
dt = time.perf_counter() - t0
print(dt >= 0.01, dt < 1, type(time.time()).__name__)
"""


def test_stdlib_as_cpython():
    same_as_cpython(STDLIB_PROGRAM)


def test_random_matches_cpython_for_many_seeds():
    for seed in (0, 1, 7, 12345, "abc", 3.5):
        same_as_cpython(f"""
import random
random.seed({seed!r})
xs = list(range(20))
random.shuffle(xs)
print(random.random(), random.randint(-5, 5), random.uniform(0, 10), random.choice(xs), random.gauss(1, 2))
print(xs, random.sample(xs, 4), random.randrange(100), random.choices('abc', weights=[1, 2, 3], k=5))
print(random.normalvariate(0, 1), random.expovariate(2.0), random.triangular(0, 1, 0.2), random.betavariate(2, 3))
""")


def test_time_sleep_counts_against_the_time_budget():
    from sandbox_testing import make_limits, run
    out = run("import time\ntime.sleep(30)\nprint('slept')", make_limits(time_limit_s=1.0))
    assert out.error["type"] == "LimitExceeded" and "time_limit_s" in out.error["message"] and out.stdout == ""
    assert out.elapsed < 1.0  # refused at once, not slept
    out = run("import time\nfor i in range(1000):\n    time.sleep(0.01)", make_limits(time_limit_s=0.3))
    assert out.error["type"] == "LimitExceeded"


@pytest.mark.parametrize("source", [
    "import time\ntime.sleep(-1)",
    "import time\ntime.sleep('1')",
    "import time\ntime.sleep(float('nan'))",
    "from collections import namedtuple\nP = namedtuple('P', ['x', '_y'])",
    "from collections import namedtuple\nP = namedtuple('P', 'x x')",
    "from collections import namedtuple\nP = namedtuple('P', 'x class')",
    "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1)",
    "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1, 2, 3)",
    "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1, 2).z",
    "import functools\nfunctools.reduce(lambda a, b: a + b, [])",
    "import math\nmath.factorial(-1)",
    "import itertools\nlist(itertools.permutations([1, 2], -1))",
    "from collections import deque\nd = deque()\nd.pop()",
    "import functools\n@functools.lru_cache\ndef f(x):\n    return x\nf([1])",
])
def test_stdlib_errors_as_cpython(source):
    same_as_cpython(source)


GENEXP_PROGRAM = """import itertools
print(next(i for i in itertools.count() if i * i > 50))
g = (x * 2 for x in range(3))
print(type(g).__name__, list(g), list(g))
print(sum(x for x in range(10) if x % 2), max((len(w), w) for w in "a bb ccc".split()))
print(list((i, j) for i in range(3) for j in range(i)))
print(any(x > 5 for x in itertools.count()), all(x < 3 for x in itertools.count()))
def gen():
    yield 1
    yield 2
print(list(x + 1 for x in gen()))
print(sorted(y for y in {3, 1, 2}), tuple(c.upper() for c in "ab"), dict((k, len(k)) for k in ["aa", "b"]))
total = 0
for v in (t * t for t in range(4)):
    total += v
print(total)
e = (1 / x for x in [1, 0])
print(next(e))
print(next(e))
"""


def test_generator_expressions_are_lazy_as_cpython():
    same_as_cpython(GENEXP_PROGRAM)


ENGINE_EXCEPTIONS_PROGRAM = """import torch
from torch.utils.data import Dataset, DataLoader

class Bad(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 100:
            raise ValueError("too big")
        return x * 2

net = torch.nn.Sequential(Bad(), Bad())
try:
    net(torch.ones(3) * 50)
except ValueError as e:
    print("caught from forward:", e)
print(net(torch.ones(3)))

class DS(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        if i == 3:
            raise IndexError("no item 3")
        return torch.tensor([float(i)])

try:
    for batch in DataLoader(DS(), batch_size=2):
        print(batch)
except IndexError as e:
    print("caught from dataset:", e)

def f(xs):
    out = []
    for x in xs:
        try:
            if x == 2:
                continue
            if x == 4:
                break
            out.append(10 / x)
        except ZeroDivisionError:
            out.append("inf")
            continue
        else:
            out.append("ok")
        finally:
            out.append("f")
    return out
print(f([1, 0, 2, 3, 4, 5]))

def g():
    try:
        raise ValueError("x")
    except ValueError:
        return "from except"
    finally:
        print("finally in g")
print(g())

def h():
    try:
        return 1
    finally:
        return 2
print(h())

def k():
    for i in range(3):
        try:
            raise KeyError(i)
        finally:
            if i < 2:
                continue
            break
    return "k done"
print(k())

class ValidationError(Exception):
    pass
class FieldError(ValidationError):
    def __init__(self, field):
        super().__init__(f"bad field {field}")
        self.field = field
try:
    raise FieldError("age")
except ValidationError as e:
    print(type(e).__name__, e.field, e, isinstance(e, Exception), isinstance(e, FieldError))
errors = []
for exc_type in (ValueError, TypeError, KeyError):
    try:
        raise exc_type("m")
    except (ValueError, KeyError) as e:
        errors.append(repr(e))
    except Exception as e:
        errors.append("other " + type(e).__name__)
print(errors)
try:
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        raise RuntimeError("inside no_grad")
except RuntimeError:
    print(torch.is_grad_enabled())
"""


def test_exceptions_through_engine_code_as_torch():
    # raised in forward() inside nn.Sequential, in a Dataset under a DataLoader, inside no_grad
    pytest.importorskip("torch")
    same_as_cpython(ENGINE_EXCEPTIONS_PROGRAM)


def test_caught_errors_leave_a_consistent_trace():
    from sandbox_testing import run

    from engine.recorder import Recorder

    rec = Recorder(value_limit=256, max_events=100_000)
    src = """
import torch
class Bad(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)
    def forward(self, x):
        y = self.lin(x)
        if x.shape[0] > 1:
            raise ValueError("batch")
        return y
m = Bad()
try:
    m(torch.ones(2, 2))
except ValueError:
    pass
loss = m(torch.ones(1, 2)).sum()
loss.backward()
print(m.lin.weight.grad)
"""
    out = run(src, recorder=rec)
    assert out.error is None, out.error
    assert out.stdout == "tensor([[1., 1.]])\n"
    kinds = [e.get("type") or e.get("kind") for e in rec.events if isinstance(e, dict)]
    assert kinds


def test_instance_docstrings_as_cpython():
    pytest.importorskip("torch")
    same_as_cpython("""import torch
class Net(torch.nn.Module):
    '''A net.'''
    def forward(self, x):
        return x
class P:
    '''Plain.'''
print(Net().__doc__, P().__doc__, type(Net()).__name__, Net().__class__.__qualname__)
""")


def test_types_of_stdlib_values_as_cpython():
    same_as_cpython("""import itertools
from collections import OrderedDict, deque, Counter, defaultdict
print(type(OrderedDict()), type(deque()), type(Counter()), type(defaultdict()), type(itertools.count()), type(itertools.chain()))
print(type(deque()).__name__, isinstance(deque(), type(deque())), isinstance(OrderedDict(), dict))
""")


def test_exception_text_in_every_format_path_as_cpython():
    same_as_cpython("""try:
    raise ValueError("bad", 3)
except ValueError as e:
    print(f"{e}", f"{e!r}", "{}".format(e), "%s" % (e,), "%r" % (e,), str([e]), f"{e:>20}" if False else "")
try:
    {}["k"]
except KeyError as e:
    print(f"missing {e}", "%s" % e, repr(e))
class Ctx:
    def __enter__(self):
        return self
    def __exit__(self, *args):
        print(len(args), args[0].__name__ if args[0] else None)
with Ctx():
    pass
""")


def test_grad_mode_decorated_generator_as_torch():
    pytest.importorskip("torch")
    same_as_cpython("""import torch
@torch.no_grad()
def steps(x):
    for i in range(2):
        yield (x * 2).requires_grad, torch.is_grad_enabled()
x = torch.ones(1, requires_grad=True)
for v in steps(x):
    print(v, torch.is_grad_enabled())
""")


def test_random_instances_as_cpython():
    same_as_cpython("""import random
rng = random.Random(7)
other = random.Random("s")
print(rng.random(), rng.randint(1, 100), other.random(), isinstance(rng, random.Random), type(rng).__name__)
xs = list(range(8))
rng.shuffle(xs)
print(xs, rng.sample(xs, 3), rng.gauss(0, 1), rng.choice(xs))
rng.seed(7)
print(rng.random())
print(type(random.Random(1)))
""")
