"""Adadelta, Adamax, NAdam and RAdam from sandboxed programs (issue 21 section 3): reachable and training as in
PyTorch, and hostile values (huge or NaN learning rates, wrong types, groups of non-tensors, smuggled state)
are PyTorch's errors or PyTorch's numbers, never a crash of the run."""
from __future__ import annotations

import pytest
from sandbox_testing import err, leaks, ok

NAMES = ["Adadelta", "Adamax", "NAdam", "RAdam"]
OPT = "import torch\ntorch.manual_seed(0)\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.{}(m.parameters(){})\n"
STEP = "opt.zero_grad()\nm(torch.ones(2)).sum().backward()\nopt.step()\n"


@pytest.mark.parametrize("name", NAMES)
def test_reachable_steps_and_state_dict_round_trip(name):
    out = ok(OPT.format(name, ", lr=0.1, weight_decay=0.01") + STEP * 3 +
             f"sd = opt.state_dict()\nopt2 = torch.optim.{name}(m.parameters())\nopt2.load_state_dict(sd)\n"
             "print(opt2.param_groups[0]['lr'], sorted(opt2.state[m.weight]) == sorted(opt.state[m.weight]))\n"
             "torch.save(opt.state_dict(), 'opt.pt')\nopt2.load_state_dict(torch.load('opt.pt'))\n" + STEP +
             "print(type(opt).__name__, torch.isfinite(m.weight).all().item())")
    assert out == f"0.1 True\n{name} True\n"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kwargs", [", lr=-1.0", ", lr='fast'", ", lr=[0.1]", ", eps=-1e-8", ", weight_decay=-1",
                                    ", lr=print"])
def test_bad_constructor_values_are_torchs_errors(name, kwargs):
    e = err(OPT.format(name, kwargs))
    assert e["type"] in ("ValueError", "TypeError"), e
    assert not leaks(e["message"])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("lr", ["1e308", "float('nan')", "float('inf')", "10 ** 400"])
def test_huge_and_nan_learning_rates_give_numbers_not_crashes(name, lr):
    source = OPT.format(name, "") + f"opt.param_groups[0]['lr'] = {lr}\n" + STEP * 2 + "print(m.weight.shape)"
    out_or_error = None
    try:
        out_or_error = ok(source)
    except AssertionError:
        out_or_error = err(source)
    if isinstance(out_or_error, dict):  # 10 ** 400 is no float: PyTorch's OverflowError / TypeError
        assert out_or_error["type"] in ("OverflowError", "TypeError", "ValueError"), out_or_error
    else:
        assert out_or_error == "torch.Size([1, 2])\n"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("key,value", [("lr", "'fast'"), ("lr", "[0.1, 0.2]"), ("eps", "None"),
                                       ("weight_decay", "print"), ("lr", "m")])
def test_param_group_edits_with_non_numbers_are_type_errors(name, key, value):
    e = err(OPT.format(name, "") + f"opt.param_groups[0]['{key}'] = {value}\n" + STEP)
    assert e["type"] == "TypeError", e


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("group", ["[{'params': ['w']}]", "[{'params': [print]}]", "[1, 2]", "'params'",
                                   "[{'params': [m.weight]}, {'params': [m.weight]}]", "[]"])
def test_param_groups_of_non_tensors_are_refused(name, group):
    e = err(f"import torch\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.{name}({group})\n")
    assert e["type"] in ("TypeError", "ValueError"), e


@pytest.mark.parametrize("name,key", [("Adadelta", "acc_delta"), ("Adamax", "exp_inf"), ("NAdam", "mu_product"),
                                      ("RAdam", "exp_avg_sq")])
@pytest.mark.parametrize("value", ["print", "'text'", "torch.zeros(100000)", "[1.0, 2.0]", "opt"])
def test_state_cannot_smuggle_objects(name, key, value):
    e = err(OPT.format(name, "") + STEP + f"opt.state[m.weight]['{key}'] = {value}\n" + STEP)
    assert e["type"] in ("TypeError", "RuntimeError"), e


@pytest.mark.parametrize("name", NAMES)
def test_edited_betas_and_rho_are_checked(name):
    key, value = ("rho", "'x'") if name == "Adadelta" else ("betas", "(print, 0.9)")
    e = err(OPT.format(name, "") + f"opt.param_groups[0]['{key}'] = {value}\n" + STEP)
    assert e["type"] == "TypeError", e
