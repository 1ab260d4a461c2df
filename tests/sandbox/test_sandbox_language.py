"""The language the sandbox supports: plain Python parts (no engine needed)."""
from __future__ import annotations

import pytest
from sandbox_testing import err, ok


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
    assert ok(src) == ("9 <__main__.Counter object at 0x7f0000000010> True 5 <class '__main__.Counter'>\n1 2 BA True "
                       "False\n3\n")
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


@pytest.mark.parametrize("name", ["eval", "exec", "setattr", "delattr", "compile", "globals", "input"])
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
    # CPython's text, the addresses the run's stand-ins (never the server's memory)
    assert out == "<function f at 0x7f0000000010> <class '__main__.C'> <__main__.C object at 0x7f0000000020> " \
                  "<built-in function print> <built-in function len> <class 'int'> <function <lambda> at 0x7f0000000030>\n"


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
    assert ok(src) == ("<class 'int'> <class 'str'> <class 'list'> <class '__main__.C'> <class 'type'> <class 'function'> "
                       "<class 'NoneType'>\nTrue True True <class 'type'>\n")
    assert err("type(type(1))('X', (), {})")["message"] == "'type' object is not callable"


def test_inplace_list_extension_and_slice_assignment_take_iterables_once():
    src = "xs = [1]\nxs += zip([1, 2], [3, 4])\nxs += range(3)\nxs[1:2] = range(2)\nprint(xs)"
    assert ok(src) == "[1, 0, 1, (2, 4), 0, 1, 2]\n"
    e = err("xs = [1]\nxs[0:1] = range(10 ** 9)")
    assert e["type"] == "LimitExceeded" and e["line"] == 2


def test_super_needs_a_program_instance():
    assert err("class A:\n    pass\nsuper(A, 1).x")["type"] == "TypeError"


def test_a_spurious_ast_depth_mismatch_is_parsed_again(monkeypatch):
    """CPython 3.11's AST constructor can raise SystemError('AST constructor recursion depth mismatch') when other
    Python code runs during it (python/cpython#106905); it happened once in a full test run. The program runs."""
    import ast

    real, calls = ast.parse, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=135, after=188)")
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", flaky)
    assert ok("print(1 + 1)") == "2\n" and len(calls) == 2
