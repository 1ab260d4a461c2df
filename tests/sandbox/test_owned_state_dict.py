"""A module's state_dict() is the program's to edit, as PyTorch's (the DQN tutorial's soft update sets its items), and
the collections a program owns are held weakly where Python allows: a loop calling state_dict() each step keeps none
of them alive. An optimizer's live state keeps a narrower rule: a parameter's entry can be set to a dict of tensors and
numbers (`opt.state[p] = {}` resets it, as in PyTorch), nothing else."""
from __future__ import annotations

import collections
import contextlib
import gc
import io

import pytest
from sandbox_testing import DEFAULT_LIMITS, err, ok

import engine
from sandbox import backend_for
from sandbox.interpreter import Interpreter

HEAD = "import torch\nimport torch.nn as nn\n"


def test_a_state_dicts_items_can_be_set_deleted_and_loaded_back():
    out = ok(HEAD + "net = nn.Linear(2, 1)\nsd = net.state_dict()\nsd['weight'] = sd['weight'] * 0 + 1\n"
                    "sd.update({'bias': torch.tensor([5.0])})\nnet.load_state_dict(sd)\nprint(net.weight, net.bias)\n"
                    "del sd['bias']\nsd.move_to_end('weight')\nprint(list(sd), type(sd))")
    assert out == ("Parameter containing:\ntensor([[1., 1.]], requires_grad=True) Parameter containing:\n"
                   "tensor([5.], requires_grad=True)\n['weight'] <class 'collections.OrderedDict'>\n")


def test_the_soft_update_of_a_target_network_runs_as_the_dqn_tutorial_writes_it():
    out = ok(HEAD + "torch.manual_seed(0)\npolicy, target = nn.Linear(3, 2), nn.Linear(3, 2)\nfor step in range(50):\n"
                    "    t, p = target.state_dict(), policy.state_dict()\n    for key in p:\n"
                    "        t[key] = p[key] * 0.005 + t[key] * (1 - 0.005)\n    target.load_state_dict(t)\n"
                    "print(round(target.bias[0].item(), 6))")
    assert out.strip().replace("-", "").replace(".", "").isdigit()


def test_an_optimizers_state_and_a_hostile_load_stay_refused():
    src = HEAD + "net = nn.Linear(2, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)\n" \
                 "net(torch.ones(1, 2)).sum().backward()\nopt.step()\n"
    e = err(src + "opt.state[net.weight] = 5")
    assert e["type"] == "TypeError" and e["line"] == 7
    e = err(HEAD + "net = nn.Linear(2, 1)\nsd = net.state_dict()\nsd['weight'] = print\nnet.load_state_dict(sd)")
    assert e["type"] in ("TypeError", "RuntimeError") and e["line"] == 6, e


RESET = ("torch.manual_seed(0)\nw = torch.nn.Parameter(torch.randn(3))\n"
         "opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\nfor step in range(4):\n    opt.zero_grad()\n"
         "    (w * w).sum().backward()\n    opt.step()\n    if step == 1:\n        opt.state[w] = {}\n"
         "print(w.tolist(), sorted(opt.state[w]))\nopt.state[w] = {'momentum_buffer': torch.zeros(3), 'note': 1}\n"
         "print(opt.state[w]['note'])\n")


def test_an_optimizers_state_of_a_parameter_is_reset_as_in_pytorch():
    torch = pytest.importorskip("torch")
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        exec("import torch\n" + RESET, {"torch": torch})  # noqa: S102 - our own test program, under PyTorch
    assert ok("import torch\n" + RESET) == expected.getvalue()


@pytest.mark.parametrize("stmt", ["opt.state[w] = 5", "opt.state[w] = {'momentum_buffer': [[0] * 1000] * 1000}",
                                  "opt.state[w] = {1: torch.zeros(3)}", "opt.state[w] = {'f': print}",
                                  "opt.state['w'] = {}", "opt.state[w] = {'momentum_buffer': opt}"])
def test_an_optimizers_state_takes_only_tensors_and_numbers(stmt):
    e = err("import torch\nw = torch.nn.Parameter(torch.ones(3))\nopt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\n"
            + stmt)
    assert e["type"] == "TypeError" and e["line"] == 4, e


def test_a_state_of_the_wrong_shape_fails_at_the_step_in_pytorchs_words():
    e = err("import torch\nw = torch.nn.Parameter(torch.ones(3))\nopt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\n"
            "opt.state[w] = {'momentum_buffer': torch.ones(10 ** 5)}\nw.sum().backward()\nopt.step()")
    assert e["type"] == "RuntimeError" and e["line"] == 6 and "must match" in e["message"], e


def test_owned_collections_are_held_weakly_and_never_mistaken_after_they_die():
    interp = Interpreter(DEFAULT_LIMITS, backend_for(engine))
    for _ in range(1000):
        interp.own(collections.OrderedDict(a=1))
    gc.collect()
    assert len(interp.own_collections) == 0  # each died with its last reference
    kept = interp.own(collections.OrderedDict(a=1))
    engine_made = collections.OrderedDict(b=2)  # never owned: may well reuse a dead one's address
    assert interp.owns(kept) and not interp.owns(engine_made)
    no_weakref = interp.own(collections.defaultdict(list))  # held for the run instead
    assert interp.owns(no_weakref)
