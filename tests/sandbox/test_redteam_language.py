"""Red-team findings in the Python language the interpreter runs (decorators, dunder reads, try/except/finally,
generators, global/nonlocal): each test is a hostile program that once got through the interpreter."""
from __future__ import annotations

import pytest
from redteam_testing import refused
from sandbox_testing import CLASSIC_LIMITS, err, make_limits, ok, run


# ---------------------------------------------------------------- decorators (staticmethod, classmethod, property,
# grad-mode decorators, program decorators)
@pytest.mark.parametrize("source,kind", [
    # a decorator that returns a builtin or an engine function: the name is bound to it, nothing more
    ("import torch\n@(lambda f: torch.exp)\ndef g():\n    pass\nprint(g(torch.zeros(1)))\ng.__self__", "AttributeError"),
    ("@(lambda f: print)\ndef g():\n    pass\ng.fn", "AttributeError"),
    ("@staticmethod\ndef g():\n    pass\ng.__func__", "AttributeError"),
    ("@staticmethod\ndef g():\n    pass\ng.func.node", "AttributeError"),
    ("@property\ndef g(self):\n    pass\ng.fget.closure", "AttributeError"),
    ("@classmethod\ndef g(cls):\n    pass\ng.interp", "AttributeError"),
    ("import torch\n@torch.no_grad()\ndef g():\n    pass\ng.mode", "AttributeError"),
    # wrapped 10^4 times in a loop, then called: the call depth limit, not the host's stack
    ("import torch\ndef g(x):\n    return x\nfor i in range(10000):\n    g = torch.no_grad()(g)\ng(1)", "RecursionError"),
    ("def g(x):\n    return x\nfor i in range(10000):\n    g = staticmethod(g)\ng(1)", "RecursionError"),
    ("class A:\n    @property\n    def x(self):\n        return self.x\nA().x", "RecursionError"),
    ("class A:\n    @property\n    def x(self):\n        return 1\n    @x.setter\n    def x(self, v):\n"
     "        self.x = v\nA().x = 1", "RecursionError"),
    ("class A:\n    x = property()\nA().x", "AttributeError"),
    ("class A:\n    @classmethod\n    def m(cls):\n        return cls\nA.m.__self__", "AttributeError"),
    ("c = classmethod(len)\nc()", "TypeError"),
    ("p = property(len)\np()", "TypeError"),
])
def test_decorator_objects_stay_closed(source, kind):
    refused(source, kind)


def test_grad_mode_decorator_restores_the_mode_after_an_error():
    src = ("import torch\n@torch.no_grad()\ndef bad():\n    return 1 / 0\nfor i in range(3):\n    try_ok = 1\n"
           "print(torch.is_grad_enabled())\nbad()")
    out = run(src)
    assert out.stdout == "True\n" and out.error["type"] == "ZeroDivisionError" and out.error["line"] == 4
    assert ok("import torch\nprint(torch.is_grad_enabled())") == "True\n"


def test_property_of_a_module_cannot_shadow_engine_methods():
    # a property named like an engine Module method is a class attribute the server never calls
    out = run("import torch\nclass M(torch.nn.Module):\n    @property\n    def parameters(self):\n"
              "        return 1\nm = M()\nprint(m.parameters)")
    assert out.error is None and out.stdout == "1\n"


# ---------------------------------------------------------------- dunder reads (__class__ __name__ __qualname__ __doc__)
@pytest.mark.parametrize("source,kind", [
    ("x = 1\nx.__class__.__class__.__class__.__bases__", "AttributeError"),
    ("x = 1\nt = x.__class__.__class__\nt('A', (), {})", "TypeError"),
    ("x = 1\nx.__class__.__subclasses__()", "AttributeError"),
    ("x = [].__class__.__class__\nprint(x.__class__ is x)\nx.__dict__", "AttributeError"),
    ("def f():\n    pass\nf.__class__.__globals__", "AttributeError"),
    ("def f():\n    pass\nf.__class__('x')", "TypeError"),
    ("import torch\ntorch.exp.__class__.__call__", "AttributeError"),
    ("import torch\nm = torch.nn.Linear(1, 1)\nm.__class__.__init__.__globals__", "AttributeError"),
    ("x = 1\nx.__name__ = 'y'", "AttributeError"),
    ("def f():\n    pass\nf.__name__ = 'y'", "AttributeError"),
    ("import torch\nt = torch.ones(1)\nt.__class__.__module__", "AttributeError"),
    ("import torch\ng = type(torch.ones(1, requires_grad=True).sum().grad_fn)\ng.__mro__", "AttributeError"),
])
def test_dunder_reads_do_not_climb(source, kind):
    out = run(source)
    assert out.error is not None and out.error["type"] == kind, out.error
    assert "engine" not in out.stdout + str(out.error)


def test_dunder_reads_give_names_not_objects():
    out = ok("import torch\nt = torch.ones(1)\nc = t.__class__\nprint(c, c.__name__, c.__class__, "
             "t.__doc__, torch.exp.__doc__, len.__doc__, torch.__doc__)")
    assert out == "<class 'torch.Tensor'> Tensor <class 'type'> None None None None\n"


# ---------------------------------------------------------------- try/except/finally, raise, with: limits stay limits
@pytest.mark.parametrize("handler", ["except BaseException:\n        pass", "except:\n        pass",
                                     "except Exception as e:\n        print(e)",
                                     "finally:\n        continue", "finally:\n        break"])
@pytest.mark.parametrize("bomb", ["while True:\n            pass",                 # loop limit
                                  "x = [0] * 10 ** 9",                            # item limit
                                  "f = lambda: f()\n        f()",                 # call depth
                                  "x = 7 ** 10 ** 7",                             # integer size
                                  "print('x' * 10 ** 6)\n        print('x' * 10 ** 6)",  # output limit
                                  "import torch\n        t = torch.zeros(10 ** 9)"])  # engine limit
def test_limits_cannot_be_caught_or_swallowed(handler, bomb):
    src = f"for i in range(3):\n    try:\n        {bomb}\n    {handler}\nprint('escaped')"
    out = run(src, make_limits(max_output_bytes=10 ** 6))
    assert out.error is not None and out.error["type"] in ("LimitExceeded", "RecursionError"), out.error
    assert "escaped" not in out.stdout


def test_steps_and_time_limits_cannot_be_caught():
    for src, limits in [
        ("while True:\n    try:\n        for i in range(5000):\n            pass\n    except BaseException:\n        pass",
         make_limits(max_steps=100_000, max_loop_iterations=10 ** 9)),
        ("while True:\n    try:\n        for i in range(5000):\n            pass\n    except BaseException:\n        pass",
         make_limits(max_steps=10 ** 9, max_loop_iterations=10 ** 9, time_limit_s=0.3)),
    ]:
        out = run(src, limits)
        assert out.error["type"] == "LimitExceeded", out.error


def test_finally_and_exit_do_not_run_after_a_limit():
    src = """
class Swallow:
    def __enter__(self):
        return self
    def __exit__(self, t, v, tb):
        print('exit ran')
        return True
try:
    with Swallow():
        while True:
            pass
finally:
    print('finally ran')
"""
    out = run(src)
    assert out.error["type"] == "LimitExceeded" and out.stdout == ""


def test_recursion_with_handlers_stays_bounded():
    out = run("def f():\n    try:\n        f()\n    except BaseException:\n        f()\nf()")
    assert out.error["type"] in ("RecursionError", "LimitExceeded")


@pytest.mark.parametrize("source,kind", [
    # exceptions carry no internals: only `args`, fresh objects for the interpreter's and engine's errors
    ("import torch\ntry:\n    torch.ones(1).nope\nexcept AttributeError as e:\n    e.obj", "AttributeError"),
    ("try:\n    nope\nexcept NameError as e:\n    e.name", "AttributeError"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e.with_traceback", "AttributeError"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__", "AttributeError"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e.__context__", "AttributeError"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e.__class__.__mro__", "AttributeError"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e._fg_where", "AttributeError"),
    ("class E(Exception):\n    pass\ne = E()\ne._fg_cls", "AttributeError"),
    ("class E(Exception):\n    pass\nE().__dict__", "AttributeError"),
    # raise of non-exceptions
    ("raise print", "TypeError"),
    ("import torch\nraise torch.ones(1)", "TypeError"),
    ("raise int", "TypeError"),
    ("class A:\n    pass\nraise A", "TypeError"),
    ("raise ValueError from print", "TypeError"),
    ("raise (ValueError,)", "TypeError"),
    ("try:\n    1 / 0\nexcept print:\n    pass", "TypeError"),
    ("import torch\ntry:\n    1 / 0\nexcept torch.Tensor:\n    pass", "TypeError"),
    # exception classes only from the builtin exceptions and the program
    ("import torch\nclass E(torch.Tensor, Exception):\n    pass", "TypeError"),
    ("import torch\nclass E(Exception, torch.nn.Module):\n    pass", "TypeError"),
    ("class E(SystemExit):\n    pass\nraise E(0)", "E"),  # a program's exit: an error with its line, as any raise
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("raise GeneratorExit", "NameError"),
    # bare raise with nothing being handled
    ("raise", "RuntimeError"),
    ("def f():\n    raise\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    f()", "RuntimeError"),
])
def test_exceptions_stay_closed(source, kind):
    out = run(source)
    assert out.error is not None and out.error["type"] == kind, (out.error, out.stdout)


def test_engine_error_arguments_are_scrubbed_text():
    out = ok("import torch\ntry:\n    torch.ones(2, 3) @ torch.ones(4, 5)\nexcept RuntimeError as e:\n"
             "    print(type(e.args[0]).__name__, len(e.args), 'engine' in str(e))")
    assert out == "str 1 False\n"


def test_big_exception_messages_are_bounded():
    out = run("try:\n    raise ValueError('x' * 10 ** 6, 'y' * 10 ** 6)\nexcept ValueError as e:\n"
              "    s = [str(e) for i in range(100)]")
    assert out.error is not None and out.error["type"] == "LimitExceeded"


# ---------------------------------------------------------------- generators
@pytest.mark.parametrize("source", [
    "def g():\n    while True:\n        yield 1\nlist(g())",
    "def g():\n    while True:\n        yield 1\nsum(g())",
    "def g():\n    while True:\n        yield 1\nsorted(g())",
    "def g():\n    while True:\n        yield 1\nimport torch\ntorch.tensor(g())",
    "def g():\n    while True:\n        yield 1\nfor x in g():\n    pass",
    "def g():\n    while True:\n        yield 1\n[x for x in g()]",
    "def g():\n    while True:\n        yield 1\na, *b = g()",
    "def g():\n    while True:\n        yield 1\nprint(*g())",
    "def g():\n    while True:\n        yield 1\nx = set(g())",
    "def g():\n    while True:\n        yield 1\n' '.join(g())",
    "def g():\n    yield from g()\nnext(g())",
    "def g(n):\n    yield n\n    yield from g(n + 1)\nfor x in g(0):\n    pass",
    "def g():\n    yield 1\ngs = []\nfor i in range(10000):\n    for j in range(10000):\n        gs.append(g())",
    "def g():\n    yield [0] * 10 ** 6\n    yield [0] * 10 ** 6\nx = [y * 10 for y in g()]",
])
def test_generator_bombs_are_bounded(source):
    out = run(source, CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] in ("LimitExceeded", "RecursionError"), out.error
    assert out.elapsed < 5


def test_generator_cannot_resume_itself():
    e = err("def g():\n    next(it)\n    yield 1\nit = g()\nnext(it)")
    assert e["type"] == "ValueError" and e["message"] == "generator already executing"


def test_suspended_generators_run_no_program_code_after_the_run():
    import gc

    src = """
import torch
def g():
    with torch.no_grad():
        try:
            yield 1
        finally:
            print('finally after the run')
it = g()
next(it)
class Ctx:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        print('exit after the run')
def h():
    with Ctx():
        yield 1
it2 = h()
next(it2)
"""
    out = run(src)
    assert out.error is None and out.stdout == ""
    import engine
    out.globals.clear()
    del out
    gc.collect()
    assert engine.is_grad_enabled()
    assert ok("import torch\nprint(torch.is_grad_enabled())") == "True\n"


def test_generator_objects_stay_closed():
    for src in ["def g():\n    yield 1\ng().gi_frame", "def g():\n    yield 1\ng().gi_code",
                "def g():\n    yield 1\ng().gen", "def g():\n    yield 1\ng().interp",
                "def g():\n    yield 1\ng().send.fn", "def g():\n    yield 1\ng().__class__.__iter__"]:
        assert err(src)["type"] == "AttributeError", src


# ---------------------------------------------------------------- global / nonlocal
@pytest.mark.parametrize("source,kind", [
    ("def f():\n    global __builtins__\n    __builtins__ = 1\nf()", "NameError"),
    ("def f():\n    global __name__\n    __name__ = 'x'\nf()", "NameError"),
    ("def f():\n    nonlocal x\n    x = 1\nx = 0\nf()", "SyntaxError"),
    ("nonlocal x", "SyntaxError"),
    ("def f(x):\n    global x\nf(1)", "SyntaxError"),
    ("def f():\n    global x\n    nonlocal x\nf()", "SyntaxError"),
])
def test_global_and_nonlocal_abuse(source, kind):
    assert err(source)["type"] == kind


def test_global_rebinding_of_builtins_stays_in_the_run():
    out = ok("def f():\n    global print, len\n    len = 5\nf()\nprint(len)")
    assert out == "5\n"
    assert ok("print(len([1]))") == "1\n"


# Programs may use '_x' attributes on their own objects (micrograd): reach engine internals through them.
PRIVATE_ESCAPES = [
    ("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self._x = 1\nm = M()\nprint(m._forward_hooks)\n", "AttributeError", 7),
    ("import torch\nclass M(torch.nn.Module):\n    pass\nprint(M._version)\n", "AttributeError", 4),
    ("import torch\nclass M(torch.nn.Module):\n    pass\nM._call_impl = print\n", "AttributeError", 4),
    ("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        print(super()._apply)\nM()\n", "AttributeError", 5),
    ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        ctx._secret = x\n        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n"
     "        return g\nF.apply(torch.ones(1, requires_grad=True))\n", "AttributeError", 5),
    ("class A:\n    pass\na = A()\nprint(a._fg_cls)\n", "AttributeError", 4),
    ("import torch\nclass A:\n    pass\na = A()\na._t = torch.ones(2)\nprint(a._t._data)\n", "AttributeError", 6),
    ("import torch\nclass A:\n    pass\na = A()\na._t = torch.ones(2)\nprint(getattr(a._t, '_version'))\n",
     "AttributeError", 6),
]


@pytest.mark.parametrize("source,kind,line", PRIVATE_ESCAPES)
def test_a_programs_own_private_attributes_reach_no_engine_internals(source, kind, line):
    refused(source, kind, line)
