"""Errors that teach: a typo gets a did-you-mean; a real PyTorch name flowgrad lacks says so; a name
that does not exist in PyTorch either says that (issue 12 §10)."""

from __future__ import annotations

import pytest
from sandbox_testing import DEFAULT_LIMITS

import engine
from sandbox import backend_for, run_program
from sandbox.suggest import pytorch_names


def error_of(source):
    out = run_program(source, DEFAULT_LIMITS, backend_for(engine))
    assert out.error is not None, out.stdout
    return out.error


@pytest.mark.parametrize("source, kind, message, line", [
    ("import torch\nx = torch.tensr([1.0])", "AttributeError",
     "module 'torch' has no attribute 'tensr': torch.tensr does not exist in PyTorch either. Did you mean: 'tensor'?", 2),
    ("import torch\nx = torch.fft", "AttributeError",
     "module 'torch' has no attribute 'fft': torch.fft exists in PyTorch but is not available in flowgrad", 2),
    ("import torch\nimport torch.nn as nn\nnn.Linaer(2, 2)", "AttributeError",
     "module 'torch.nn' has no attribute 'Linaer': torch.nn.Linaer does not exist in PyTorch either. Did you mean: 'Linear'?", 3),
    ("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\nprint(x.gard)", "AttributeError",
     "'Tensor' object has no attribute 'gard'. Did you mean: 'grad'?", 4),
    ("import torch\nx = torch.ones(2)\nx.pin_memory()", "AttributeError",
     "'Tensor' object attribute 'pin_memory' exists in PyTorch but is not available in flowgrad", 3),
    ("import torch\nloss = torch.ones(1)\nprint(los)", "NameError", "name 'los' is not defined. Did you mean: 'loss'?", 3),
    ("import torch\nprint(zzzzqqq)", "NameError", "name 'zzzzqqq' is not defined", 2),
])
def test_errors_that_teach(source, kind, message, line):
    err = error_of(source)
    assert (err["type"], err["message"], err["line"]) == (kind, message, line)


def test_the_pytorch_names_are_pytorch_2_13s():
    names = pytorch_names()
    assert {"tensor", "fft", "nn", "autograd"} <= names["torch"] and "tensr" not in names["torch"]
    assert {"grad", "backward", "pin_memory"} <= names["Tensor"]
    assert "Linear" in names["torch.nn"] and "gelu" in names["torch.nn.functional"]


def test_a_hostile_long_name_gets_no_suggestion_work():
    err = error_of("import torch\nx = torch." + "a" * 1000)
    assert err["type"] == "AttributeError" and "Did you mean" not in err["message"]
