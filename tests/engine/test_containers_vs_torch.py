"""nn.ModuleDict, nn.ParameterList and nn.ParameterDict against PyTorch 2.13: registration order, iteration,
named_parameters paths, state_dict keys, printouts, initial values under one seed, and the errors."""
from collections import OrderedDict

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def _build(lib):
    nn = lib.nn
    lib.manual_seed(0)
    md = nn.ModuleDict({"enc": nn.Linear(3, 4), "act": nn.ReLU(), "dec": nn.Linear(4, 2)})
    md["extra"] = nn.Linear(2, 2, bias=False)
    md.update([("tail", nn.Tanh())])
    pl = nn.ParameterList([nn.Parameter(lib.randn(2, 3)), lib.zeros(4)])
    pl.append(nn.Parameter(lib.ones(1)))
    pl.extend([lib.randn(3)])
    pd = nn.ParameterDict({"b": nn.Parameter(lib.randn(2)), "a": lib.ones(3, 1)})
    pd["c"] = lib.full((2, 2), 0.5)
    pd.update(OrderedDict([("z", lib.zeros(1)), ("y", lib.ones(2))]))
    root = nn.Module()
    root.md, root.pl, root.pd = md, pl, pd
    return root


def _names(m):
    return [(n, tuple(p.shape), p.detach().numpy().round(6).tolist(), p.requires_grad)
            for n, p in m.named_parameters()]


def test_registration_paths_values_and_printouts_match_torch():
    e, t = _build(engine), _build(torch)
    assert _names(e) == _names(t)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert repr(e) == repr(t)
    for part in ("md", "pl", "pd"):
        assert repr(getattr(e, part)) == repr(getattr(t, part))
    assert list(e.md) == list(t.md) and list(e.md.keys()) == list(t.md.keys())
    assert [type(m).__name__ for m in e.md.values()] == [type(m).__name__ for m in t.md.values()]
    assert list(e.pd) == list(t.pd) and list(e.pd.keys()) == list(t.pd.keys())
    assert len(e.md) == len(t.md) and len(e.pl) == len(t.pl) and len(e.pd) == len(t.pd)
    assert [tuple(p.shape) for p in e.pl] == [tuple(p.shape) for p in t.pl]
    assert [type(p).__name__ for p in e.pl] == [type(p).__name__ for p in t.pl]
    assert ("enc" in e.md, "x" in e.md, "a" in e.pd, "q" in e.pd) == ("enc" in t.md, "x" in t.md, "a" in t.pd,
                                                                        "q" in t.pd)


def test_mutations_match_torch():
    out = []
    for lib in (engine, torch):
        r = _build(lib)
        popped = r.md.pop("act")
        del r.md["extra"]
        r.pd.pop("c")
        del r.pd["z"]
        k, v = r.pd.popitem()
        r.pd.setdefault("n", lib.ones(2))
        got = r.pd.get("missing", "default")
        r.pl[1] = lib.full((4,), 2.0)
        r.pl[-1] = lib.nn.Parameter(lib.zeros(2, 2))
        sliced = r.pl[1:3]
        r.pl += [lib.ones(5)]
        copied = r.pd.copy()
        out.append((type(popped).__name__, k, tuple(v.shape), got, _names(r), repr(r), repr(sliced),
                    [n for n, _ in copied.named_parameters()], list(reversed(r.pd))))
        r.md.clear()
        r.pd.clear()
        out.append((repr(r), len(r.md), len(r.pd)))
    assert out[0] == out[2] and out[1] == out[3]


def test_training_through_the_containers_matches_torch():
    grads = []
    for lib in (engine, torch):
        r = _build(lib)
        x = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
        h = r.md["dec"](r.md["act"](r.md["enc"](x)))
        loss = (h * r.pd["b"]).sum() + sum((p * p).sum() for p in r.pl) + r.pd["a"].sum() * h.mean()
        loss.backward()
        grads.append([(n, p.grad.numpy().round(5).tolist()) for n, p in r.named_parameters() if p.grad is not None])
    assert grads[0] == grads[1]


def test_plain_objects_in_parameter_containers_print_like_torch():
    got = []
    for lib in (engine, torch):
        pl = lib.nn.ParameterList([lib.ones(2), "text", 3])
        pd = lib.nn.ParameterDict(OrderedDict([("w", lib.ones(1)), ("note", "hi"), ("n", None)]))
        got.append((repr(pl), repr(pd), pl[1], pd["note"], [n for n, _ in pl.named_parameters()], len(pd)))
    assert got[0] == got[1]


ERRORS = [
    lambda nn, lib: nn.ModuleDict({"a.b": nn.ReLU()}),
    lambda nn, lib: nn.ModuleDict({"": nn.ReLU()}),
    lambda nn, lib: nn.ModuleDict({"keys": nn.ReLU()}),
    lambda nn, lib: nn.ModuleDict({"a": 3}),
    lambda nn, lib: nn.ModuleDict(3),
    lambda nn, lib: nn.ModuleDict([("a", nn.ReLU(), 1)]),
    lambda nn, lib: nn.ModuleDict([3]),
    lambda nn, lib: nn.ModuleDict()["missing"],
    lambda nn, lib: nn.ModuleDict({"a": nn.ReLU()})(lib.ones(1)),
    lambda nn, lib: nn.ParameterList([lib.ones(1)])[3],
    lambda nn, lib: nn.ParameterList([lib.ones(1)])["0"],
    lambda nn, lib: nn.ParameterList(lib.ones(2)),
    lambda nn, lib: nn.ParameterList(5),
    lambda nn, lib: nn.ParameterList()(lib.ones(1)),
    lambda nn, lib: nn.ParameterDict({1: lib.ones(1)}),
    lambda nn, lib: nn.ParameterDict({"a.b": lib.ones(1)}),
    lambda nn, lib: nn.ParameterDict({"items": lib.ones(1)}),
    lambda nn, lib: nn.ParameterDict([("a", lib.ones(1), 2)]),
    lambda nn, lib: nn.ParameterDict(7),
    lambda nn, lib: nn.ParameterDict()(lib.ones(1)),
    lambda nn, lib: nn.ParameterDict().popitem(),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    got = []
    for lib in (engine, torch):
        with pytest.raises(Exception) as e:
            make(lib.nn, lib)
        got.append((type(e.value).__name__, str(e.value)))
    assert got[0] == got[1]
