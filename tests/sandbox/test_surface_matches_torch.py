"""issue 21 §3: every name the sandbox exposes on torch's modules, on Tensor and on nn.Module exists in PyTorch.

torch.gelu / silu / softplus / mish / hardtanh were once reachable at top level though PyTorch has none of them;
this walks the whole exposed surface against the installed torch so the allowlists cannot drift again.
"""
from __future__ import annotations

import importlib

import pytest
from sandbox_testing import err, ok

import engine
from sandbox.attributes import ATTRIBUTE_POLICY
from sandbox.backend import backend_for

torch = pytest.importorskip("torch")

# container methods the module rule allows for ModuleList / ModuleDict, and the per-instance `training` flag
_MODULE_CONTAINER_NAMES = frozenset("append extend insert keys values items pop update training clear get setdefault "
                                    "popitem copy".split())


def _exposed_modules():
    return backend_for(engine).modules


@pytest.mark.parametrize("module_name", sorted(_exposed_modules()))
def test_every_exposed_module_name_exists_in_torch(module_name):
    real = importlib.import_module(module_name)
    exposed = _exposed_modules()[module_name].attrs
    missing = sorted(n for n in exposed if not hasattr(real, n))
    assert missing == [], f"{module_name} exposes names PyTorch lacks: {missing}"


def test_every_tensor_attribute_exists_on_torch_tensor():
    # (materialize: a lazy layer's UninitializedParameter's own)
    missing = sorted(n for n in ATTRIBUTE_POLICY["tensor"].names
                     if not hasattr(torch.Tensor, n) and not hasattr(torch.nn.parameter.UninitializedParameter, n))
    assert missing == []


def test_every_module_attribute_exists_on_torch_module():
    names = ATTRIBUTE_POLICY["module"].names - _MODULE_CONTAINER_NAMES
    missing = sorted(n for n in names if not hasattr(torch.nn.Module, n)  # (and a lazy layer's own)
                     and not hasattr(torch.nn.modules.lazy.LazyModuleMixin, n))
    assert missing == []
    containers = torch.nn.ModuleList, torch.nn.ModuleDict, torch.nn.ParameterList, torch.nn.ParameterDict
    assert all(any(hasattr(c, n) for c in containers) for n in _MODULE_CONTAINER_NAMES - {"training"})


@pytest.mark.parametrize("name", ["gelu", "silu", "softplus", "mish", "hardtanh", "get_printoptions"])
def test_names_pytorch_lacks_raise_its_attribute_error(name):
    assert not hasattr(torch, name)
    e = err(f"import torch\ntorch.{name}")
    assert e["type"] == "AttributeError", e
    assert f"module 'torch' has no attribute '{name}'" in e["message"]


def test_the_functional_forms_stay_reachable():
    F = torch.nn.functional
    x = torch.tensor([-1.0, 0.5])
    expected = " ".join(str(f(x)) for f in (F.gelu, F.silu, F.softplus, F.mish, F.hardtanh)) + "\n"
    assert ok("import torch\nimport torch.nn.functional as F\nx = torch.tensor([-1.0, 0.5])\n"
              "print(F.gelu(x), F.silu(x), F.softplus(x), F.mish(x), F.hardtanh(x))") == expected


_GRAD_MODES = {
    "torch.no_grad()": lambda t: t.no_grad(),
    "torch.enable_grad()": lambda t: t.enable_grad(),
    "torch.set_grad_enabled(False)": lambda t: t.set_grad_enabled(False),
    "torch.inference_mode()": lambda t: t.inference_mode(),
}


@pytest.mark.parametrize("mode", sorted(_GRAD_MODES))
def test_grad_mode_with_as_binds_none(mode):
    for lib in (torch, engine):
        with _GRAD_MODES[mode](lib) as bound:
            assert bound is None
        lib.set_grad_enabled(True)
    assert ok(f"import torch\nwith {mode} as a:\n    print(a, torch.is_grad_enabled())\n"
              "print(torch.is_grad_enabled())") == f"None {mode.startswith('torch.enable')}\nTrue\n"


def test_hostile_grad_mode_as_target_cannot_reach_the_context_object():
    e = err("import torch\nwith torch.no_grad() as a:\n    a.__enter__\n")
    assert e["type"] == "AttributeError", e


WRONG_BACKWARD = """import torch
class Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 3
x = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)
try:
    torch.autograd.gradcheck(Wrong.apply, (x,))
except RuntimeError as e:
    print(type(e), repr(e)[:40], isinstance(e, RuntimeError))
"""


def test_a_caught_gradcheck_error_is_torchs_class():
    expected = ("<class 'torch.autograd.gradcheck.GradcheckError'> GradcheckError('Jacobian mismatch for ou "
                "True\n")
    assert ok(WRONG_BACKWARD) == expected


@pytest.mark.parametrize("probe", ["e.__traceback__", "type(e).__init__", "type(e).__mro__", "e.__dict__"])
def test_hostile_a_caught_gradcheck_error_reaches_nothing_of_the_host(probe):
    e = err(WRONG_BACKWARD + f"    print({probe})\n")
    assert e["type"] == "AttributeError", e


@pytest.mark.parametrize("probe, refusal", [
    ("print(type(e).mro())", "AttributeError"),  # the class's MRO would reach object and its subclasses
    ("print(getattr(type(e), 'mro')())", "AttributeError"),
    ("print(type(e)('made'))", "TypeError"),  # the engine's class is shown, never called by the program
    ("print(e.with_traceback(None))", "AttributeError"),
    ("e.add_note('x')", "AttributeError"),
])
def test_hostile_the_caught_error_class_is_only_shown(probe, refusal):
    e = err(WRONG_BACKWARD + f"    {probe}\n")
    assert e["type"] == refusal, e
