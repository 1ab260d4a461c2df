"""Adadelta, Adamax, NAdam and RAdam (issue 21 section 3) bit for bit against PyTorch's single-tensor
(foreach=False) update over 30 steps, given PyTorch's sqrt (the one operation PyTorch does not round correctly,
see test_optim_bits_vs_torch.py), with weight decay, maximize and decoupled decay; and their state_dict round
trip: a reloaded optimizer continues exactly as the original would have."""
import copy

import numpy as np
import pytest

import engine
import engine.optim.adaptive as engine_adaptive

torch = pytest.importorskip("torch")

CASES = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.05)),
    ("Adadelta", dict(lr=0.3, maximize=True, weight_decay=0.1)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    ("Adamax", dict(lr=0.02, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.85, 0.995), weight_decay=0.05, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.05)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]
SHAPES = [(7, 5), (3,), (), (40, 30)]


def _torch_sqrt(x):
    return torch.from_numpy(np.ascontiguousarray(x)).sqrt().numpy().reshape(np.shape(x))


def _data(rng, steps):
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]
    return init, grads


def _optimizer(lib, name, kwargs, params):
    return getattr(lib.optim, name)(params, **kwargs, foreach=False)


def _steps(lib, opt, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = lib.tensor(g.copy())
        opt.step()


def _values(params):
    return [p.detach().numpy() for p in params]


def _assert_bits(ours, theirs):
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a, np.float32).view(np.uint32), np.asarray(b, np.float32).view(np.uint32))


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_thirty_steps_bit_exact_given_torchs_sqrt(name, kwargs, monkeypatch):
    monkeypatch.setattr(engine_adaptive, "_sqrt", _torch_sqrt)
    init, grads = _data(np.random.default_rng(5), 30)
    runs = {}
    for lib in (engine, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        opt = _optimizer(lib, name, kwargs, params)
        _steps(lib, opt, params, grads)
        runs[lib] = (_values(params), opt.state_dict())
    _assert_bits(runs[engine][0], runs[torch][0])
    ours, theirs = runs[engine][1], runs[torch][1]
    assert ours["param_groups"] == theirs["param_groups"]
    for i, their_state in theirs["state"].items():
        assert sorted(ours["state"][i]) == sorted(their_state)
        for key, value in their_state.items():
            _assert_bits([ours["state"][i][key].numpy()], [value.numpy()])


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam"])
def test_numpys_sqrt_is_within_an_ulp_of_torch(name):
    # without the patch, the engine's correctly rounded sqrt may differ from MKL's by an ulp per step
    init, grads = _data(np.random.default_rng(6), 10)
    out = {}
    for lib in (engine, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        _steps(lib, _optimizer(lib, name, {}, params), params, grads)
        out[lib] = _values(params)
    for a, b in zip(out[engine], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", CASES[::2], ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES[::2])])
def test_state_dict_round_trip_continues_exactly(name, kwargs, monkeypatch):
    monkeypatch.setattr(engine_adaptive, "_sqrt", _torch_sqrt)
    init, grads = _data(np.random.default_rng(7), 12)
    finals = {}
    for lib in (engine, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        opt = _optimizer(lib, name, kwargs, params)
        _steps(lib, opt, params, grads[:6])
        saved = copy.deepcopy(opt.state_dict())  # as a checkpoint file holds it: not sharing opt's tensors
        fresh = [lib.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
        reloaded = _optimizer(lib, name, kwargs, fresh)
        reloaded.load_state_dict(saved)
        _steps(lib, reloaded, fresh, grads[6:])
        _steps(lib, opt, params, grads[6:])
        _assert_bits(_values(fresh), _values(params))
        finals[lib] = _values(fresh)
    _assert_bits(finals[engine], finals[torch])


def test_save_and_load_through_torch_save():
    buf = {}
    params = [engine.tensor([1.0, -2.0], requires_grad=True)]
    opt = engine.optim.NAdam(params, lr=0.1)
    params[0].grad = engine.tensor([0.5, 0.25])
    opt.step()
    buf["sd"] = opt.state_dict()
    assert float(buf["sd"]["state"][0]["mu_product"]) == pytest.approx(
        float(torch.optim.NAdam([torch.tensor([1.0, -2.0], requires_grad=True)]).defaults["betas"][0]) * (
            1 - 0.5 * 0.96 ** 0.004), rel=1e-6)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam"])
@pytest.mark.parametrize("kwargs,error", [(dict(lr=-1.0), ValueError), (dict(eps=-1.0), ValueError),
                                          (dict(weight_decay=-0.1), ValueError), (dict(lr="fast"), TypeError)])
def test_constructor_checks_match_torch(name, kwargs, error):
    messages = []
    for lib in (engine, torch):
        with pytest.raises(error) as info:
            getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
