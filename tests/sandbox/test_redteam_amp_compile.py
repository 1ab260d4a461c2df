"""Red-team tests for torch.compile, torch.autocast, torch.amp and torch.cuda.amp (engine/amp.py, engine/compiled.py):
hostile arguments get PyTorch's errors or a budget's, the wrapper's internals stay out of reach, nothing leaks."""
from __future__ import annotations

import pytest
from redteam_testing import refused, sealed
from sandbox_testing import CLASSIC_LIMITS, err, ok, run

HEAD = "import torch\nfrom torch import nn\n"


def test_a_compiled_module_reads_through_but_its_internals_stay_closed():
    out = ok(HEAD + "m = torch.compile(nn.Linear(2, 1))\nprint(type(m), m, m.weight.shape, m._orig_mod, len(list(m.parameters())))")
    assert "<class 'torch._dynamo.eval_frame.OptimizedModule'>" in out and "(_orig_mod): Linear" in out
    sealed(out)
    for stmt in ["m._modules", "m._own", "m.__dict__", "m._orig_mod._parameters", "m.forward.__globals__",
                 "torch.compile.__globals__", "type(m).__mro__"]:
        e = err(HEAD + f"m = torch.compile(nn.Linear(2, 1))\nx = {stmt}")
        assert e["type"] in ("AttributeError", "SyntaxError"), (stmt, e)
        sealed(e["message"])


@pytest.mark.parametrize("call,kind", [("torch.compile(3)", "AssertionError"), ("torch.compile('x')", "AssertionError"),
                                       ("torch.compile(nn.Linear(1, 1), mode='x' * 10**5)", "LimitExceeded"),
                                       ("torch.compile(nn.Linear(1, 1), mode='default', options={})", "RuntimeError"),
                                       ("torch.autocast(3)", "ValueError"), ("torch.autocast('x' * 10**5)", "LimitExceeded"),
                                       ("torch.autocast('tpu')", "RuntimeError"),
                                       ("torch.amp.GradScaler('cpu', growth_factor=0.5)", "AssertionError")])
def test_hostile_arguments_get_torchs_errors(call, kind):
    e = err(HEAD + call)
    assert e["type"] == kind and e["line"] == 3, e
    assert len(e["message"]) < 2_000


def test_a_compiled_program_function_is_the_function_and_runs_under_the_budgets():
    e = err("import torch\n@torch.compile\ndef f(n):\n    while True:\n        n += 1\nf(0)")
    assert e["type"] == "LimitExceeded", e
    assert ok("import torch\nf = torch.compile(lambda x: x * 2)\nprint(f(torch.ones(2)), f)").startswith(
        "tensor([2., 2.]) <function <lambda> at 0x")


def test_cpu_autocast_is_refused_in_plain_words_and_cuda_autocast_disables_itself():
    e = err(HEAD + "with torch.autocast('cpu'):\n    pass")
    assert e["type"] == "NotImplementedError" and "enabled=False" in e["message"] and e["line"] == 3
    out = ok(HEAD + "with torch.autocast('cuda', dtype=torch.float16):\n    y = nn.Linear(2, 2)(torch.ones(1, 2))\n"
                    "with torch.cuda.amp.autocast():\n    z = y * 2\nprint(y.dtype, z.dtype)")
    assert out == "torch.float32 torch.float32\n"


def test_grad_scaler_state_is_checked_and_bounded():
    # a scale past float32 is PyTorch's overflow error; the largest one backs off to a step (as PyTorch's)
    e = err(HEAD + "s = torch.amp.GradScaler('cpu', init_scale=1e300)\ns.scale(torch.ones(()))")
    assert e["type"] == "RuntimeError" and "without overflow" in e["message"] and e["line"] == 4, e
    src = HEAD + ("s = torch.amp.GradScaler('cpu', init_scale=3e38, growth_interval=1)\n"
                  "w = torch.ones(2, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n"
                  "for i in range(3):\n    opt.zero_grad()\n    s.scale((w * 3).sum()).backward()\n    s.step(opt)\n"
                  "    s.update()\n    print(s.get_scale(), w.tolist())")
    assert ok(src) == ("1.5000000027488779e+38 [1.0, 1.0]\n7.500000013744389e+37 [1.0, 1.0]\n"
                       "1.5000000027488779e+38 [0.699999988079071, 0.699999988079071]\n")  # PyTorch 2.13's
    for bad in ["s.load_state_dict({})", "s.load_state_dict({'scale': 'x'})", "s.scale(print)", "s.update(new_scale='x')"]:
        e = err(HEAD + f"s = torch.amp.GradScaler('cpu')\ns.scale(torch.ones(()))\n{bad}")
        assert e["type"] in ("RuntimeError", "KeyError", "ValueError", "TypeError"), (bad, e)
        sealed(e["message"])


def test_scaling_a_huge_list_stops_on_a_budget():
    out = run(HEAD + "s = torch.amp.GradScaler('cpu')\nxs = [torch.ones(1000)] * 2000\nys = s.scale(xs)", CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded" and out.error["line"] == 5, out.error
    refused(HEAD + "s = torch.amp.GradScaler('cpu')\nopt = torch.optim.SGD([torch.zeros(1, requires_grad=True)])\n"
                   "s.unscale_(opt)", "AssertionError", line=5)


def test_bfloat16_is_a_name_programs_select_and_never_a_tensor():
    # nanoGPT: `ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]`
    out = ok("import torch\nd = {'float32': torch.float32, 'bfloat16': torch.bfloat16}\n"
             "print(d['bfloat16'], torch.bfloat16.is_floating_point, torch.bfloat16 == torch.float16, "
             "torch.bfloat16.itemsize, torch.cuda.is_bf16_supported())")
    assert out == "torch.bfloat16 True False 2 False\n"  # PyTorch 2.13's
    for make in ["torch.ones(2, dtype=torch.bfloat16)", "torch.ones(2).to(torch.bfloat16)",
                 "torch.tensor([1.0], dtype=torch.bfloat16)", "torch.zeros(2).to(dtype=torch.bfloat16)",
                 "torch.finfo(torch.bfloat16)", "torch.nn.Linear(2, 2).to(torch.bfloat16)"]:
        e = err(f"import torch\nx = {make}")
        assert e["type"] == "TypeError" and "numpy has no bfloat16" in e["message"] and e["line"] == 2, (make, e)
