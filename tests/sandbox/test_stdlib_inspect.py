"""`import inspect` in programs (sandbox/stdlib_inspect.py): signature() of the program's functions, methods and
classes prints and reads as CPython's; of the engine's, it answers nanoGPT's `'fused' in signature(AdamW).parameters`
and hands out no host object; hostile uses get Python's errors."""
from __future__ import annotations

import pytest
from redteam_testing import sealed
from sandbox_testing import err, ok, same_as_cpython

PROGRAM = '''import inspect


def f(a, b=2, *args, c, d=(1, 'x'), **kw):
    return a


class Net:
    def __init__(self, width, depth=3):
        self.width = width

    def forward(self, x, scale=1.0):
        return x


sig = inspect.signature(f)
print(sig, list(sig.parameters), sig.parameters['b'].default, sig.parameters['a'].default is inspect.Parameter.empty)
print(str(sig.parameters['c'].kind), sig.parameters['d'], repr(sig.parameters['args']))
print(inspect.signature(Net), inspect.signature(Net(1).forward), inspect.signature(lambda x, y=3: x))
print('depth' in inspect.signature(Net).parameters, inspect.isclass(Net), inspect.isfunction(f),
      inspect.ismethod(Net(1).forward), inspect.isfunction(Net), inspect.isclass(f))
'''


def test_signatures_of_the_programs_own_functions_are_cpythons():
    out = same_as_cpython(PROGRAM)
    assert "(a, b=2, *args, c, d=(1, 'x'), **kw)" in out


def test_nanogpts_question_about_adamw_gets_pytorchs_answer():
    out = ok("import inspect\nimport torch\nps = inspect.signature(torch.optim.AdamW).parameters\n"
             "print('fused' in ps, 'lr' in ps, ps['lr'].default, ps['betas'].default, 'nonsense' in ps)")
    assert out == "True True 0.001 (0.9, 0.999) False\n"


def test_engine_signatures_hand_out_no_host_object():
    out = ok("import inspect\nimport torch\nfor f in (torch.nn.Linear, torch.optim.SGD, torch.zeros, torch.nn.functional.relu, "
             "torch.ones(2).sum, print, len):\n    try:\n        s = inspect.signature(f)\n        print(s, [p.default for p in "
             "s.parameters.values()])\n    except ValueError as e:\n        print('ValueError', e)")
    sealed(out)
    assert "object at" not in out and "<function" not in out and "<class" not in out.replace("<class 'inspect._empty'>", "")


@pytest.mark.parametrize("call,kind", [("inspect.signature(3)", "TypeError"), ("inspect.signature(torch)", "TypeError"),
                                       ("inspect.signature()", "TypeError"), ("inspect.Parameter('x', 1)", "TypeError"),
                                       ("inspect.getsource(print)", "AttributeError"),
                                       ("inspect.signature(inspect.signature)._of_host", "AttributeError")])
def test_hostile_uses_get_pythons_errors(call, kind):
    e = err(f"import inspect\nimport torch\nx = {call}")
    assert e["type"] == kind, e
    sealed(e["message"])
