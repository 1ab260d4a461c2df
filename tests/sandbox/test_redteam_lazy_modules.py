"""Red-team tests for the lazy layers a program can reach (nn.LazyLinear / LazyConv1d / LazyConv2d / LazyBatchNorm1d /
LazyBatchNorm2d, torch.nn.parameter's UninitializedParameter / UninitializedBuffer / is_lazy, `materialize`): each
hostile program is refused with PyTorch's error or a budget's, and nothing of the host leaks."""
from __future__ import annotations

import pytest
from redteam_testing import refused, sealed
from sandbox_testing import CLASSIC_LIMITS, err, ok, run

from engine.recorder import Recorder

HEAD = "import torch\nfrom torch import nn\n"


@pytest.mark.parametrize("shape", ["(10**6, 10**6)", "(2**62, 4)", "[10**9] * 4", "(100_001,)"])
def test_materializing_past_the_tensor_budget_is_refused_before_any_memory(shape):
    e = err(HEAD + f"p = nn.parameter.UninitializedParameter()\np.materialize({shape})", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e


@pytest.mark.parametrize("layer", ["nn.LazyLinear(10**7)", "nn.LazyConv2d(10**5, 31)", "nn.LazyLinear(50_000)"])
def test_a_lazy_layer_too_big_for_its_input_stops_at_its_first_call(layer):
    e = err(HEAD + f"m = {layer}\nm(torch.ones(2, 3, 40, 40))", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e


@pytest.mark.parametrize("shape,kind", [("(-2, 3)", "RuntimeError"), ("'ab'", "TypeError"), ("3.5", "TypeError"),
                                        ("(print,)", "TypeError"), ("{'a': 1}", "TypeError")])
def test_materialize_checks_its_shape_as_torch_empty_does(shape, kind):
    refused(HEAD + f"nn.parameter.UninitializedParameter().materialize({shape})", kind, line=3)


@pytest.mark.parametrize("use", ["w.sum()", "w + 1", "w.numel()", "w @ w", "w.shape", "w[0]", "w.mul_(2)",
                                 "torch.exp(w)", "w.tolist()", "w.numpy()", "torch.stack([w, w])"])
def test_an_uninitialized_parameter_refuses_every_use_with_torchs_errors(use):
    e = err(HEAD + f"w = nn.LazyLinear(3).weight\n{use}")
    assert e["type"] in ("ValueError", "RuntimeError") and e["line"] == 4, e
    assert "uninitialized parameter" in e["message"], e
    sealed(e["message"])


def test_what_an_uninitialized_parameter_allows_prints_as_torch_and_leaks_nothing():
    out = ok(HEAD + "m = nn.LazyLinear(3)\nw = m.weight\n"
             "print(w, repr(w), str(w), type(w), w.dtype, w.size(), w.requires_grad, w.grad, w.is_leaf, w.data)\n"
             "print(m, m.state_dict(), list(m.named_parameters()), nn.parameter.is_lazy(w))\n"
             "import copy\nprint(copy.deepcopy(m).weight, m.has_uninitialized_params())")
    assert out.count("<UninitializedParameter>") == 8 and "torch.nn.parameter.UninitializedParameter" in out
    sealed(out)


def test_private_state_of_lazy_parameters_is_out_of_reach():
    for stmt in ["w._data", "w.cls_to_become", "w.__class__.__mro__", "w._refused_use", "m._materialize_from({})",
                 "getattr(w, '_' + 'data')"]:
        e = err(HEAD + f"m = nn.LazyLinear(3)\nw = m.weight\n{stmt}")
        assert e["type"] in ("AttributeError", "ValueError", "NameError"), (stmt, e)
        sealed(e["message"])


def test_a_loaded_state_dict_cannot_smuggle_a_shape_past_the_budget():
    # a lazy net takes the loaded shapes: a huge one is refused where it would be made
    e = err(HEAD + "net = nn.Sequential(nn.LazyLinear(2))\n"
                   "net.load_state_dict({'0.weight': torch.zeros(2, 10**6), '0.bias': torch.zeros(2)})",
            limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e


def test_lazy_layers_count_against_live_memory_once_materialized():
    # 30 layers of 40,000 elements each: past max_live_elements (1,000,000) only once they are shaped
    src = HEAD + "layers = [nn.LazyLinear(200) for _ in range(30)]\nprint('made')\nfor m in layers:\n    m(torch.ones(1, 200))\n"
    out = run(src, CLASSIC_LIMITS)
    assert out.stdout == "made\n" and out.error["type"] == "LimitExceeded" and out.error["line"] == 6, out.error


def test_a_lazy_layer_in_a_recorded_run_is_named_once_it_has_a_shape():
    rec = Recorder(value_limit=256, max_events=100_000)
    out = run(HEAD + "net = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))\n"
                     "loss = net(torch.ones(2, 3)).sum()\nnet = net\nloss.backward()\nprint(net)", recorder=rec)
    assert out.error is None, out.error
    assert "(0): Linear(in_features=3, out_features=4, bias=True)" in out.stdout
    named = {p for e in rec.events if e["kind"] == "module_names" for p in e["parameters"].values()}
    assert {"net.0.weight", "net.0.bias", "net.2.weight"} <= named, named
