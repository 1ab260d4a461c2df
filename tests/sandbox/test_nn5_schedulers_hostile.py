"""Hostile programs against the lr schedulers added in session 10 (LinearLR, ConstantLR, MultiplicativeLR,
PolynomialLR, OneCycleLR, CosineAnnealingWarmRestarts, SequentialLR, ChainedScheduler): programs print what
PyTorch prints, wrong arguments raise with the program's line, private state stays closed, nothing leaks."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

pytest.importorskip("torch")

HEAD = """import torch
from torch.optim.lr_scheduler import (LinearLR, ConstantLR, MultiplicativeLR, PolynomialLR, OneCycleLR,
    CosineAnnealingWarmRestarts, SequentialLR, ChainedScheduler, CosineAnnealingLR, ExponentialLR)
w = torch.nn.Parameter(torch.ones(2))
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
"""

SCHEDULES = HEAD + """
s = SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=3), CosineAnnealingLR(opt, T_max=5)], milestones=[3])
for i in range(8):
    opt.step()
    s.step()
    print(i, s.get_last_lr(), s.last_epoch)
print(type(s).__name__, isinstance(s, torch.optim.lr_scheduler.LRScheduler), sorted(s.state_dict()))
o = OneCycleLR(opt, max_lr=1.0, total_steps=6)
for i in range(6):
    opt.step()
    o.step()
    print(o.get_last_lr(), opt.param_groups[0]["momentum"], o.total_steps, o.cycle_momentum)
c = ChainedScheduler([ConstantLR(opt, 0.5, 2), MultiplicativeLR(opt, lambda e: 0.9), PolynomialLR(opt, 4, 2.0)])
for i in range(5):
    opt.step()
    c.step()
    print(c.get_last_lr())
r = CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.01)
for e in [0.5, 1, 3, 7.25]:
    r.step(e)
    print(r.get_last_lr(), r.T_cur, r.T_i, r.T_0, r.T_mult, r.last_epoch)
lin = LinearLR(opt, start_factor=0.25, end_factor=0.5, total_iters=2)
print(lin.start_factor, lin.end_factor, lin.total_iters, isinstance(c, SequentialLR))
"""


def test_a_program_with_the_new_schedulers_prints_what_pytorch_prints():
    same_as_cpython(SCHEDULES)


@pytest.mark.parametrize("line, kind, words", [
    ("MultiplicativeLR(opt, 3)", "TypeError", "lr_lambda should be a function, but got int"),
    ("MultiplicativeLR(opt, lambda e: 1 / 0).step()", "ZeroDivisionError", "division by zero"),
    ("SequentialLR(opt, [ExponentialLR(opt, 0.5)], milestones=range(10 ** 12))", "LimitExceeded",
     "max_live_elements"),
    ("SequentialLR(opt, [ExponentialLR(opt, 0.5), 3], milestones=[1])", "TypeError", "index 1"),
    ("OneCycleLR(opt, max_lr=1.0, total_steps=10 ** 30, pct_start=2.0)", "ValueError", "pct_start"),
    ("OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=3)", "ValueError", "max_lr must have the same length"),
    ("CosineAnnealingWarmRestarts(opt, T_0=2.5)", "ValueError", "Expected positive integer T_0"),
    ("CosineAnnealingWarmRestarts(opt, T_0=2).step('x')", "TypeError", "'<'"),
    ("CosineAnnealingWarmRestarts(opt, 2, 10 ** 6).step(10 ** 18)", None, None),
    ("LinearLR(opt, start_factor='a')", "TypeError", "'>'"),
    ("PolynomialLR(opt, total_iters=0).step(0)", "ZeroDivisionError", "division by zero"),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    src = HEAD + f"y = {line}\n"
    if kind is None:
        same_as_cpython(src)
        return
    e = err(src)
    assert e["line"] == 6, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


def test_one_cycle_past_its_steps_raises_with_the_programs_line():
    e = err(HEAD + "o = OneCycleLR(opt, max_lr=1.0, total_steps=2)\nfor i in range(4):\n    opt.step()\n    o.step()\n")
    assert e["type"] == "ValueError" and e["line"] == 9 and "Tried to step 3 times" in e["message"], e


@pytest.mark.parametrize("attribute", [
    "_schedulers", "_milestones", "_update_lr", "_initial_step", "recursive_undo", "_schedule_phases",
    "_anneal_func", "lr_lambdas", "__dict__", "__class__.__init__", "step.__globals__", "get_last_lr.__func__",
    "optimizer.__dict__", "state_dict.__self__",
])
@pytest.mark.parametrize("owner", [
    "SequentialLR(opt, [ExponentialLR(opt, 0.5), LinearLR(opt)], [2])", "OneCycleLR(opt, 1.0, 5)",
    "ChainedScheduler([ExponentialLR(opt, 0.5)])", "MultiplicativeLR(opt, lambda e: 0.5)",
])
def test_the_schedulers_private_state_stays_closed(owner, attribute):
    e = err(HEAD + f"s = {owner}\ny = s.{attribute}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert e["line"] == 7 and not leaks(e["message"])


def test_a_loaded_state_dict_cannot_reach_the_host():
    e = err(HEAD + "s = SequentialLR(opt, [ExponentialLR(opt, 0.5), LinearLR(opt)], [2])\n"
            "d = {'base_lrs': [1.0]}\nd['optimizer'] = 1\nd['last_epoch'] = 'x'\ns.load_state_dict(d)\nopt.step()\n"
            "print(s.optimizer is opt)\ns.step()\n")
    assert e["type"] == "TypeError" and e["line"] == 13 and not leaks(e["message"]), e
