"""torch.func, torch.autograd.functional and gradcheck inside programs: results as PyTorch prints them, the
program's functions called back through the interpreter (steps, time, recursion), the recorder still recording,
and hostile uses of every new name bounded by the run's limits."""
from __future__ import annotations

import pytest
from sandbox_testing import CLASSIC_LIMITS, err, leaks, make_limits, ok, run

from engine.recorder import Recorder

PROGRAM = """import torch
from torch.func import grad, grad_and_value, vjp, jacrev, jacfwd, hessian, vmap, functional_call
import torch.autograd.functional as AF
import torch.nn as nn
x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
def f(t):
    return (t.sin() * t).sum()
print(grad(f)(x))
print(grad_and_value(f)(x)[1])
print(grad(grad(lambda t: t ** 3))(torch.tensor(2.0)))
out, pull = vjp(lambda t: t * t, x)
print(pull(torch.ones(3, dtype=torch.float64)))
print(jacrev(lambda t: t.exp())(x))
print(jacfwd(lambda t: t * 2)(x).shape)
print(hessian(f)(x).shape)
print(vmap(lambda v: (v * v).sum())(torch.ones(4, 3)))
print(AF.jacobian(lambda a, b: a * b, (x, x))[1])
print(AF.hessian(f, x).shape)
print(AF.vjp(f, x)[1])
print(AF.jvp(lambda t: t * 3, x, torch.ones(3, dtype=torch.float64))[1])
print(AF.hvp(f, x, torch.ones(3, dtype=torch.float64))[1].shape)
print(AF.vhp(f, x, torch.ones(3, dtype=torch.float64))[1].shape)
print(torch.autograd.gradcheck(f, (x.clone().requires_grad_(),)))
print(torch.autograd.gradgradcheck(f, (x.clone().requires_grad_(),)))
torch.manual_seed(0)
m = nn.Linear(3, 1)
params = {k: v.detach() for k, v in m.named_parameters()}
def loss(p, xb):
    return functional_call(m, p, (xb,)).sum()
print(vmap(grad(loss), in_dims=(None, 0))(params, torch.ones(2, 3))['weight'])
print(grad(f))
"""

EXPECTED = """tensor([ 0.9182, -1.3818,  0.0770], dtype=torch.float64)
tensor(2.8998, dtype=torch.float64)
tensor(12.)
(tensor([ 1., -2.,  4.], dtype=torch.float64),)
tensor([[1.6487, 0.0000, 0.0000],
        [0.0000, 0.3679, 0.0000],
        [0.0000, 0.0000, 7.3891]], dtype=torch.float64)
torch.Size([3, 3])
torch.Size([3, 3])
tensor([3., 3., 3., 3.])
tensor([[ 0.5000, -0.0000,  0.0000],
        [ 0.0000, -1.0000,  0.0000],
        [ 0.0000, -0.0000,  2.0000]], dtype=torch.float64)
torch.Size([3, 3])
tensor([ 0.9182, -1.3818,  0.0770], dtype=torch.float64)
tensor([3., 3., 3.], dtype=torch.float64)
torch.Size([3])
torch.Size([3])
True
True
tensor([[[1., 1., 1.]],

        [[1., 1., 1.]]])
<function f at 0x7f0000000010>
"""


def test_program_prints_what_pytorch_prints():
    assert ok(PROGRAM) == EXPECTED


def test_expected_output_is_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841 — the same program, run by PyTorch itself
    import contextlib
    import io
    import re
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(PROGRAM, "<program>", "exec"), {})  # noqa: S102 — our own test program, on real PyTorch
    assert re.sub(r"0x[0-9a-f]+", "0x7f0000000010", buf.getvalue()) == EXPECTED


def test_recorder_records_a_program_using_the_transforms():
    rec = Recorder(value_limit=256, max_events=100_000)
    src = ("import torch\nfrom torch.func import grad, vmap\nimport torch.autograd.functional as AF\n"
           "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "g = grad(lambda t: (t * w).sum())(torch.ones(2))\n"
           "J = AF.jacobian(lambda t: t * w, torch.ones(2))\n"
           "v = vmap(lambda r: r * w)(torch.ones(3, 2))\n"
           "loss = (g * w).sum() + v.sum()\nloss.backward()\nprint(w.grad)\n")
    out = run(src, recorder=rec)
    assert out.error is None, out.error
    assert out.stdout == "tensor([5., 7.])\n"  # PyTorch 2.13: grad keeps the graph to w
    kinds = {e["kind"] for e in rec.events}
    assert "op" in kinds
    assert any(e["kind"] == "op" and e.get("line") == 8 for e in rec.events)


def test_user_functions_run_through_the_interpreter():
    """The program's function passed to a transform counts steps and keeps its print and its line in errors."""
    out = run("import torch\nfrom torch.func import vmap\ndef f(v):\n    print('row')\n    return v * 2\n"
              "vmap(f)(torch.ones(3, 2))\n")
    assert out.error is None and out.stdout == "row\nrow\nrow\n"
    e = err("import torch\nfrom torch.func import grad\ndef f(v):\n    return v.sum() / undefined_name\n"
            "grad(f)(torch.ones(2))\n")
    assert e["type"] == "NameError" and e["line"] == 4
    e = err("import torch\nfrom torch.func import vmap\ndef f(v):\n    while True:\n        pass\n"
            "vmap(f)(torch.ones(2))\n", limits=make_limits(max_steps=5_000))
    assert e["type"] == "LimitExceeded"


# ---- hostile uses
def test_huge_jacobian_is_bounded_by_the_size_limit():
    e = err("import torch\nimport torch.autograd.functional as AF\nx = torch.ones(2000)\n"
            "AF.jacobian(lambda t: t * 2, x)\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4
    e = err("import torch\nfrom torch.func import jacrev\njacrev(lambda t: t * 2)(torch.ones(2000))\n",
            limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 3


def test_many_jacobian_rows_are_bounded_by_the_time_limit():
    e = err("import torch\nimport torch.autograd.functional as AF\nbig = torch.ones(100000)\n"
            "AF.jacobian(lambda t: t * big, torch.ones(1))\n", limits=make_limits(time_limit_s=0.5, max_steps=10**9))
    assert e["type"] == "LimitExceeded" and e["line"] == 4
    e = err("import torch\nimport torch.autograd.functional as AF\nbig = torch.ones(100000)\n"
            "AF.jacobian(lambda t: t * big, torch.ones(1))\n", limits=make_limits(max_steps=2_000))
    assert e["type"] == "LimitExceeded"


def test_vmap_over_a_huge_batch_is_bounded():
    e = err("import torch\nfrom torch.func import vmap\nvmap(lambda v: v * 2)(torch.ones(1000000, 1))\n",
            limits=make_limits(max_steps=20_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 3
    e = err("import torch\nfrom torch.func import vmap\nvmap(torch.sin)(torch.ones(1000000, 1))\n",
            limits=make_limits(max_steps=20_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 3


def test_gradcheck_of_a_huge_input_is_bounded():
    e = err("import torch\nx = torch.ones(100000, dtype=torch.float64, requires_grad=True)\n"
            "torch.autograd.gradcheck(lambda t: t * 2, (x,))\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 3


def test_nested_transforms_stop_cleanly():
    e = err("import torch\nfrom torch.func import grad\ng = lambda t: t ** 3\nfor i in range(100):\n"
            "    g = grad(g)\ng(torch.tensor(1.0))\n")
    assert e["type"] in ("RuntimeError", "LimitExceeded", "RecursionError") and e["line"] == 6
    e = err("import torch\nfrom torch.func import grad\ndef f(t):\n    return grad(f)(t)\nf(torch.tensor(1.0))\n")
    assert e["type"] in ("RuntimeError", "RecursionError")
    e = err("import torch\nfrom torch.func import vmap\ng = lambda t: t\nfor i in range(100000):\n"
            "    g = vmap(g)\ng(torch.ones(2))\n")
    assert e["type"] in ("RuntimeError", "RecursionError", "ValueError", "LimitExceeded")


def test_functional_call_with_foreign_objects():
    base = "import torch\nimport torch.nn as nn\nfrom torch.func import functional_call\nm = nn.Linear(3, 1)\n"
    for bad, kind in [("{'weight': [1, 2, 3]}", "TypeError"), ("{'weight': 'abc'}", "TypeError"),
                      ("{'weight': m}", "TypeError"), ("[1]", "ValueError"), ("{1: torch.ones(1)}", "TypeError"),
                      ("{'weight': torch.ones(5, 5)}", "RuntimeError")]:
        e = err(base + f"functional_call(m, {bad}, (torch.ones(3),))\n")
        assert e["type"] == kind, (bad, e)
        assert e["line"] == 5
    e = err(base + "class C:\n    pass\nfunctional_call(C(), {}, (torch.ones(3),))\n")
    assert e["type"] == "TypeError"
    e = err(base + "functional_call([m], {}, (torch.ones(3),))\n")
    assert e["type"] == "TypeError"
    # the module's own parameters are back after a failed call
    assert ok(base + "try:\n    functional_call(m, {'weight': torch.ones(5, 5)}, (torch.ones(3),))\nexcept Exception:\n"
              "    pass\nprint(type(m.weight).__name__, tuple(m.weight.shape))\n") == "Parameter (1, 3)\n"


def test_transform_results_reach_nothing_outside():
    for attr in ("__globals__", "__closure__", "__code__", "__wrapped__", "__dict__"):
        e = err(f"import torch\nfrom torch.func import grad\ng = grad(lambda t: t.sum())\nprint(g.{attr})\n")
        assert e["type"] == "AttributeError", (attr, e)
        assert not leaks(e["message"])
    e = err("import torch\nfrom torch.func import vjp\no, pull = vjp(lambda t: t * 2, torch.ones(2))\n"
            "print(pull.__closure__)\n")
    assert e["type"] == "AttributeError"


def test_wrong_arguments_say_what_pytorch_says():
    e = err("import torch\nfrom torch.func import grad\ngrad(lambda t: t * 2)(torch.ones(3))\n")
    assert e["type"] == "RuntimeError" and "Expected f(*args) to return a scalar Tensor" in e["message"]
    e = err("import torch\nfrom torch.func import grad\ngrad(3)(torch.ones(3))\n")
    assert e["type"] == "TypeError"
    e = err("import torch\nimport torch.autograd.functional as AF\nAF.jacobian(lambda t: 'x', torch.ones(2))\n")
    assert e["type"] == "TypeError" and "must be either a Tensor or a tuple of Tensors" in e["message"]
    e = err("import torch\nfrom torch.func import vmap\nvmap(lambda t: t)(torch.ones(2, 3), torch.ones(3))\n")
    assert e["type"] == "ValueError" and "same size in the mapped dimension" in e["message"]


def test_register_backward_hook_in_programs():
    base = ("import torch\nimport torch.nn as nn\nlin = nn.Linear(3, 2)\nx = torch.ones(4, 3, requires_grad=True)\n")
    assert ok(base + "def hook(m, gi, go):\n    print(len(gi), [None if g is None else tuple(g.shape) for g in gi])\n"
              "h = lin.register_backward_hook(hook)\nlin(x).sum().backward()\nh.remove()\nlin(x).sum().backward()\n"
              ) == "3 [(2,), (4, 3), (3, 2)]\n"
    e = err(base + "lin.register_backward_hook(3)\n")
    assert e["type"] == "TypeError" and e["line"] == 5
    e = err(base + "def hook(m, gi, go):\n    while True:\n        pass\nlin.register_backward_hook(hook)\n"
            "lin(x).sum().backward()\n", limits=make_limits(max_steps=5_000))
    assert e["type"] == "LimitExceeded"
    e = err(base + "lin.register_backward_hook(lambda m, gi, go: ('a', 'b', 'c'))\nlin(x).sum().backward()\n")
    assert e["type"] in ("TypeError", "RuntimeError", "AttributeError") and e["line"] == 6
    e = err(base + "lin.register_backward_hook(lambda m, gi, go: (1,))\nlin(x).sum().backward()\n")
    assert e["type"] == "RuntimeError" and "incorrect number of values" in e["message"]


def test_long_and_deep_pytrees_are_bounded():
    e = err("import torch\nfrom torch.func import grad\nts = [torch.ones(1)] * 200000\n"
            "grad(lambda xs: xs[0].sum())(ts)\n", limits=make_limits(max_steps=20_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 4
    e = err("import torch\nfrom torch.func import vmap\nd = 0\nfor i in range(20000):\n    d = (d,)\n"
            "vmap(lambda a, b: a, in_dims=(0, d))(torch.ones(2), 1)\n")
    assert e["type"] in ("RecursionError", "ValueError", "LimitExceeded")
