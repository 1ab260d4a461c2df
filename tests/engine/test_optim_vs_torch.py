"""torch.optim and torch.optim.lr_scheduler against the installed PyTorch: N steps of every optimizer
(and option) give the same parameters and state to ~1e-6 relative in float32; schedulers give the same
learning rates exactly; state_dict / load_state_dict, param_groups, add_param_group and errors agree."""
import warnings

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
SHAPES = [(3, 4), (4,), ()]
INIT = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
TARGETS = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]


def _train(lib, cls_name, kwargs, steps=8, groups=None, dtype="float32"):
    dt = getattr(lib, dtype)
    params = [lib.tensor(a.tolist(), dtype=dt, requires_grad=True) for a in INIT]
    targets = [lib.tensor(t.tolist(), dtype=dt) for t in TARGETS]
    cls = getattr(lib.optim, cls_name)
    opt = cls(groups(params) if groups else params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((p - t) ** 3).abs().sum() + (p * p).sum() * 0.1 for p, t in zip(params, targets))
        loss.backward()
        opt.step()
    return params, opt


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "numpy") and not isinstance(t, engine.Tensor)
                      else t._data, dtype=np.float64)


CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    ("Adam", dict(lr=0.02, amsgrad=True)),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.03, weight_decay=0.2, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.3)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1, eps=1e-8)),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_steps_match_torch(name, kwargs):
    ours, eopt = _train(engine, name, kwargs)
    theirs, topt = _train(torch, name, kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(_np(a), _np(b), rtol=2e-6, atol=1e-7)
    # the state: same names, same values
    for a, b in zip(ours, theirs):
        es, ts = eopt.state[a], topt.state[b]
        assert list(es) == list(ts)
        for k in ts:
            np.testing.assert_allclose(_np(es[k]), _np(ts[k]), rtol=2e-6, atol=1e-7, err_msg=k)
            assert isinstance(es[k], engine.Tensor)
            assert str(es[k].dtype).split(".")[-1] == str(ts[k].dtype).split(".")[-1]
    assert repr(eopt) == repr(topt)
    assert eopt.defaults == topt.defaults
    esd, tsd = eopt.state_dict(), topt.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    assert {k: list(v) for k, v in esd["state"].items()} == {k: list(v) for k, v in tsd["state"].items()}


@pytest.mark.parametrize("name,kwargs", [CASES[2], CASES[7], CASES[13], CASES[16]])
def test_float64_params(name, kwargs):
    ours, _ = _train(engine, name, kwargs, dtype="float64")
    theirs, _ = _train(torch, name, kwargs, dtype="float64")
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-14)


def _groups(params):
    return [{"params": params[:1], "lr": 0.1, "momentum": 0.5}, {"params": params[1:]}]


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_with_own_options(name):
    ours, eopt = _train(engine, name, dict(lr=0.01), groups=_groups)
    theirs, topt = _train(torch, name, dict(lr=0.01), groups=_groups)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(_np(a), _np(b), rtol=2e-6, atol=1e-7)
    assert repr(eopt) == repr(topt)
    assert [sorted(g) for g in eopt.param_groups] == [sorted(g) for g in topt.param_groups]


def test_add_param_group_and_state_dict_round_trip():
    def run(lib):
        a = lib.tensor([1.0, -2.0], requires_grad=True)
        b = lib.tensor([0.5, 0.25, 3.0], requires_grad=True)
        opt = lib.optim.Adam([a], lr=0.1)
        opt.add_param_group({"params": b, "lr": 0.01, "amsgrad": True})
        for _ in range(3):
            opt.zero_grad()
            ((a * a).sum() + (b ** 3).sum()).backward()
            opt.step()
        sd = opt.state_dict()
        a2 = lib.tensor(a.tolist(), requires_grad=True)
        b2 = lib.tensor(b.tolist(), requires_grad=True)
        opt2 = lib.optim.Adam([{"params": [a2]}, {"params": [b2]}], lr=0.5)
        opt2.load_state_dict(sd)
        for _ in range(2):
            for o, x, y in ((opt, a, b), (opt2, a2, b2)):
                o.zero_grad()
                ((x * x).sum() + (y ** 3).sum()).backward()
                o.step()
        return sd, opt, opt2, (a, b, a2, b2)

    esd, eopt, eopt2, ep = run(engine)
    tsd, topt, topt2, tp = run(torch)
    assert sorted(esd) == sorted(tsd) == ["param_groups", "state"]
    assert esd["param_groups"] == tsd["param_groups"]
    assert list(esd["state"]) == list(tsd["state"]) == [0, 1]
    assert {k: list(v) for k, v in esd["state"].items()} == {k: list(v) for k, v in tsd["state"].items()}
    for x, y in zip(ep, tp):
        np.testing.assert_allclose(_np(x), _np(y), rtol=2e-6)
    # as in PyTorch, the loaded optimizer shares the state_dict's tensors (same dtype): both advance one step count
    assert eopt.state[ep[0]]["step"] is eopt2.state[ep[2]]["step"]
    assert eopt2.param_groups[1]["lr"] == topt2.param_groups[1]["lr"] == 0.01
    assert repr(eopt2) == repr(topt2)


def test_zero_grad_sets_to_none_by_default():
    for lib in (engine, torch):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        (p * 2).sum().backward()
        opt.zero_grad()
        assert p.grad is None
        (p * 2).sum().backward()
        opt.zero_grad(set_to_none=False)
        assert p.grad.tolist() == [0.0]


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.SGD([p], lr=-1),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, momentum=-1),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, nesterov=True),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, weight_decay=-1),
    lambda lib, p: lib.optim.Adam([p], betas=(1.0, 0.9)),
    lambda lib, p: lib.optim.Adam([p], betas=(0.9, -0.1)),
    lambda lib, p: lib.optim.Adam([p], eps=-1),
    lambda lib, p: lib.optim.RMSprop([p], alpha=-1),
    lambda lib, p: lib.optim.Adagrad([p], lr_decay=-1),
    lambda lib, p: lib.optim.SGD([], lr=0.1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1),
    lambda lib, p: lib.optim.SGD([p, 3], lr=0.1),
    lambda lib, p: lib.optim.SGD([p * 2], lr=0.1),
    lambda lib, p: lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
    lambda lib, p: lib.optim.SGD([{"params": [p]}]).add_param_group([p]),
])
def test_constructor_errors_match_torch(make):
    ours = _error(lambda: make(engine, engine.tensor([1.0], requires_grad=True)))
    theirs = _error(lambda: make(torch, torch.tensor([1.0], requires_grad=True)))
    assert ours is not None and theirs is not None
    assert ours[0] == theirs[0]
    if ours[0] == "ValueError" or "optimizer" in theirs[1]:
        assert ours[1].replace("engine.tensor.", "torch.") == theirs[1]


def test_string_lr_at_step_is_an_error():
    for lib in (engine, torch):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        opt.param_groups[0]["lr"] = "fast"
        (p * 2).sum().backward()
        with pytest.raises(TypeError):
            opt.step()


# ---------------------------------------------------------------- schedulers
SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=4)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.001)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e / (1 + e))),
]


def _schedule(lib, name, kwargs, steps=14):
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    q = lib.tensor([3.0], requires_grad=True)
    opt = lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.03}], lr=0.1, momentum=0.9)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.zero_grad()
        ((p * p).sum() + (q * q * q).abs().sum()).backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, p, opt, sched


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_schedulers_match_torch_exactly(name, kwargs):
    elrs, ep, eopt, esched = _schedule(engine, name, kwargs)
    tlrs, tp, topt, tsched = _schedule(torch, name, kwargs)
    assert elrs == tlrs
    assert [str(x) for x in elrs] == [str(x) for x in tlrs]  # printed like torch
    np.testing.assert_allclose(_np(ep), _np(tp), rtol=1e-5)
    assert repr(eopt) == repr(topt)
    esd, tsd = esched.state_dict(), tsched.state_dict()
    assert list(esd) == list(tsd)
    for k in ("base_lrs", "last_epoch", "_step_count", "_last_lr"):
        assert esd[k] == tsd[k]


def test_scheduler_load_state_dict_resumes():
    for lib in (engine, torch):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        s = lib.optim.lr_scheduler.StepLR(opt, 2, 0.5)
        for _ in range(5):
            opt.step()
            s.step()
        sd = s.state_dict()
        opt2 = lib.optim.SGD([p], lr=0.1)
        s2 = lib.optim.lr_scheduler.StepLR(opt2, 7, 0.1)
        s2.load_state_dict(sd)
        opt2.param_groups[0]["lr"] = s.get_last_lr()[0]
        opt.step()
        s.step()
        opt2.step()
        s2.step()
        assert s2.get_last_lr() == s.get_last_lr() == [0.0125]
        assert list(s.state_dict()) == list(s2.state_dict())


def test_scheduler_closed_form_with_epoch():
    out = []
    for lib in (engine, torch):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        s = lib.optim.lr_scheduler.MultiStepLR(opt, [2, 4], 0.5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            opt.step()
            s.step(5)
        out.append((s.get_last_lr(), [str(x.message)[:40] for x in w]))
    assert out[0] == out[1]


def test_step_order_warning_like_torch():
    got = []
    for lib in (engine, torch):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        s = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s.step()
            opt.step()
        got.append([str(x.message) for x in w])
    assert got[0] == got[1] and len(got[0]) == 1


@pytest.mark.parametrize("kwargs", [dict(), dict(mode="max", factor=0.5, patience=1, cooldown=1),
                                    dict(threshold_mode="abs", threshold=0.1, patience=0, min_lr=[0.02, 0.05])])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 0.2, 0.3] * 2
    got = []
    for lib in (engine, torch):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.Adam([{"params": [p]}, {"params": [lib.tensor([2.0], requires_grad=True)]}], lr=0.1)
        s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        lrs = []
        for m in metrics:
            opt.step()
            s.step(lib.tensor(m) if m > 0.9 else m)
            lrs.append((s.get_last_lr(), s.num_bad_epochs, s.best))
        got.append(lrs)
    assert got[0] == got[1]


def test_scheduler_errors_match_torch():
    for make in (lambda lib, opt: lib.optim.lr_scheduler.StepLR("opt", 2),
                 lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, 2, last_epoch=3),
                 lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1, lambda e: 2]),
                 lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0),
                 lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="up")):
        res = [_error(lambda lib=lib, make=make: make(lib, lib.optim.SGD([lib.tensor([1.0], requires_grad=True)], lr=0.1)))
               for lib in (engine, torch)]
        assert res[0] == res[1]


def test_optim_step_event_carries_state_under_torch_names():
    from engine.recorder import Recorder

    p = engine.tensor([1.0, -2.0], requires_grad=True)
    opt = engine.optim.Adam([p], lr=0.1, amsgrad=True)
    with Recorder(value_limit=100, max_events=1000) as rec:
        (p * p).sum().backward()
        opt.step()
        opt.state[p]["smuggled"] = engine.tensor([1.0])  # not a PyTorch state name: never exported
        opt.state[p]["exp_avg_sq"] = "text"  # not a tensor: never exported
        try:
            opt.step()
        except TypeError:
            pass
        opt.state[p]["exp_avg_sq"] = engine.zeros(2)
        opt.step()
    steps = [e for e in rec.events if e["kind"] == "optim_step"]
    assert len(steps) == 2
    (pid, state), = steps[0]["state"].items()
    assert steps[0]["params"] == [pid]
    assert state["step"] == 1.0
    assert sorted(state) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    np.testing.assert_allclose(state["exp_avg"], [0.2, -0.4], rtol=1e-6)
    assert sorted(steps[1]["state"][pid]) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad"])
def test_optim_step_event_carries_every_tensor_state_torch_keeps(name):
    from engine.recorder import Recorder

    p = engine.tensor([1.0, -2.0], requires_grad=True)
    opt = getattr(engine.optim, name)([p], lr=0.1)
    with Recorder(value_limit=100, max_events=1000) as rec:
        (p * p).sum().backward()
        opt.step()
    (state,) = [e for e in rec.events if e["kind"] == "optim_step"][0]["state"].values()
    tp = torch.tensor([1.0, -2.0], requires_grad=True)
    topt = getattr(torch.optim, name)([tp], lr=0.1)
    (tp * tp).sum().backward()
    topt.step()
    assert sorted(state) == sorted(k for k, v in topt.state[tp].items() if torch.is_tensor(v))


def test_sgd_without_momentum_has_no_state_in_event():
    from engine.recorder import Recorder

    p = engine.tensor([1.0], requires_grad=True)
    opt = engine.optim.SGD([p], lr=0.1)
    with Recorder(value_limit=100, max_events=1000) as rec:
        (p * p).sum().backward()
        opt.step()
    (e,) = [e for e in rec.events if e["kind"] == "optim_step"]
    assert e["state"] == {}


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.5)), ("Adagrad", dict(lr=0.1))])
def test_step_with_closure_under_no_grad(name, kwargs):
    out = []
    for lib in (engine, torch):
        p = lib.tensor([1.0, -0.5], requires_grad=True)
        opt = getattr(lib.optim, name)([p], **kwargs)

        def closure(lib=lib, p=p, opt=opt):
            opt.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss

        with lib.no_grad():
            losses = [opt.step(closure).item() for _ in range(3)]
        out.append((losses, p.tolist()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-6)


@pytest.mark.parametrize("kwargs", [CASES[0][1], CASES[1][1], CASES[2][1], CASES[3][1], CASES[4][1]])
def test_sgd_is_bit_exact_given_the_same_gradients(kwargs):
    # ATen fuses multiply-add (add(alpha=)): the engine rounds once too. (Adam & co. divide by a sqrt that
    # ATen computes with SLEEF, not correctly rounded: those stay within an ulp or so per step.)
    rng = np.random.default_rng(5)
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(20)]
    out = []
    for lib in (engine, torch):
        params = [lib.tensor(a.tolist(), requires_grad=True) for a in INIT]
        opt = lib.optim.SGD(params, **kwargs)
        for gs in grads:
            for p, g in zip(params, gs):
                p.grad = lib.tensor(g.tolist())
            opt.step()
        out.append([_np(p) for p in params])
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(momentum=0.5)), ("Adam", {}), ("AdamW", {}),
                                         ("RMSprop", dict(momentum=0.5)), ("Adagrad", {})])
@pytest.mark.parametrize("value", ["'x'", "None", "[0.1]"])
def test_non_number_hyperparameters_give_torchs_errors(name, kwargs, value):
    keys = ["lr", "momentum", "dampening", "weight_decay", "eps", "alpha", "lr_decay", "betas"]
    for key in keys:
        res = []
        for lib in (engine, torch):
            p = lib.tensor([1.0, 2.0], requires_grad=True)
            opt = getattr(lib.optim, name)([p], lr=0.1, **kwargs)
            if key not in opt.param_groups[0]:
                break
            opt.param_groups[0][key] = eval(value)  # noqa: S307 — the test's own literals
            (p * p).sum().backward()
            res.append(_error(lambda opt=opt: (opt.step(), opt.step())))
        if len(res) == 2:
            assert res[0] is not None and res[0][0] == res[1][0], (key, res)
            if value == "'x'":
                assert res[0] == res[1], (key, res)
