"""The warm-up, one-cycle, restart and combining lr schedulers against PyTorch 2.13: get_last_lr() over 30 steps
equal bit for bit, the optimizer's groups (momentum/betas that OneCycleLR cycles) and the constructors' errors."""
import warnings

import pytest

import engine

torch = pytest.importorskip("torch")


def _optimizer(lib, adam=False):
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    q = lib.tensor([3.0], requires_grad=True)
    groups = [{"params": [p]}, {"params": [q], "lr": 0.03}]
    return lib.optim.Adam(groups, lr=0.1) if adam else lib.optim.SGD(groups, lr=0.1, momentum=0.9), p, q


def _schedule(lib, make, steps=30, adam=False):
    opt, p, q = _optimizer(lib, adam)
    S = lib.optim.lr_scheduler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = make(S, opt)
    lrs = [list(sched.get_last_lr())]
    groups = []
    for _ in range(steps):
        opt.zero_grad()
        ((p * p).sum() + (q * q).sum() * 0.1).backward()
        opt.step()
        sched.step()
        lrs.append(list(sched.get_last_lr()))
        groups.append([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
    return lrs, groups, p


CASES = {
    "LinearLR": lambda S, o: S.LinearLR(o),
    "LinearLR-args": lambda S, o: S.LinearLR(o, start_factor=0.1, end_factor=0.7, total_iters=12),
    "ConstantLR": lambda S, o: S.ConstantLR(o),
    "ConstantLR-args": lambda S, o: S.ConstantLR(o, factor=0.3, total_iters=7),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "MultiplicativeLR-list": lambda S, o: S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1 - 0.01 * e]),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o),
    "PolynomialLR-args": lambda S, o: S.PolynomialLR(o, total_iters=20, power=2.0),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=30),
    "OneCycleLR-linear": lambda S, o: S.OneCycleLR(o, max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=11,
                                                   anneal_strategy="linear", pct_start=0.25),
    "OneCycleLR-three": lambda S, o: S.OneCycleLR(o, max_lr=0.4, total_steps=31, three_phase=True,
                                                  cycle_momentum=False),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=7),
    "CosineAnnealingWarmRestarts-mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                                    eta_min=0.001),
    "SequentialLR": lambda S, o: S.SequentialLR(o, [S.LinearLR(o, 0.1, total_iters=5),
                                                    S.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
    "SequentialLR-three": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, 0.5, 3), S.ExponentialLR(o, 0.9),
                                                          S.StepLR(o, 4, 0.5)], milestones=[4, 12]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, 0.1, 4), S.ExponentialLR(o, 0.9)]),
    "ChainedScheduler-opt": lambda S, o: S.ChainedScheduler([S.LinearLR(o, 0.5, total_iters=6),
                                                             S.MultiStepLR(o, [5, 9], 0.5)], optimizer=o),
}


@pytest.mark.parametrize("name", list(CASES))
def test_schedules_match_torch_exactly(name):
    elrs, egroups, ep = _schedule(engine, CASES[name])
    tlrs, tgroups, tp = _schedule(torch, CASES[name])
    assert elrs == tlrs
    assert [str(x) for x in elrs] == [str(x) for x in tlrs]
    assert egroups == tgroups
    assert ep.detach().tolist() == pytest.approx(tp.detach().tolist(), rel=1e-5)


def test_one_cycle_cycles_adams_beta1_like_torch():
    make = CASES["OneCycleLR"]
    (elrs, eg, _), (tlrs, tg, _) = _schedule(engine, make, adam=True), _schedule(torch, make, adam=True)
    assert elrs == tlrs and eg == tg


def test_one_cycle_past_its_steps_raises_like_torch():
    msgs = []
    for lib in (engine, torch):
        opt, _, _ = _optimizer(lib)
        s = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        with pytest.raises(ValueError) as e:
            for _ in range(5):
                opt.step()
                s.step()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "Tried to step 4 times. The specified number of total steps is 3"


def test_closed_forms_with_epoch_like_torch():
    out = []
    for lib in (engine, torch):
        opt, _, _ = _optimizer(lib)
        S = lib.optim.lr_scheduler
        scheds = [S.LinearLR(opt, 0.2, total_iters=6), S.ConstantLR(opt, 0.5, 4), S.PolynomialLR(opt, 8, 1.5)]
        w = S.CosineAnnealingWarmRestarts(lib.optim.SGD([lib.tensor([1.0], requires_grad=True)], lr=0.1), 3, 2)
        got = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 7, 2, 10):
                for s in scheds:
                    s.step(epoch)
                    got.append(s.get_last_lr())
                w.step(epoch + 0.5)
                got.append((w.get_last_lr(), w.T_cur, w.T_i, w.last_epoch))
        out.append(got)
    assert out[0] == out[1]


ERRORS = [
    lambda S, o: S.LinearLR(o, start_factor=0),
    lambda S, o: S.LinearLR(o, end_factor=1.5),
    lambda S, o: S.ConstantLR(o, factor=2),
    lambda S, o: S.MultiplicativeLR(o, 3),
    lambda S, o: S.MultiplicativeLR(o, [lambda e: 1.0]),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=0),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
    lambda S, o: S.OneCycleLR(o, max_lr=[1.0], total_steps=5),
    lambda S, o: S.SequentialLR(o, [], milestones=[]),
    lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
    lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2), S.ReduceLROnPlateau(o)], milestones=[3]),
    lambda S, o: S.ChainedScheduler([]),
]


@pytest.mark.parametrize("make", ERRORS)
def test_constructor_errors_match_torch(make):
    got = []
    for lib in (engine, torch):
        opt, _, _ = _optimizer(lib)
        with pytest.raises(Exception) as e:
            make(lib.optim.lr_scheduler, opt)
        got.append((type(e.value).__name__, str(e.value)))
    assert got[0] == got[1]


def test_state_dicts_list_torchs_keys():
    for make in (CASES["LinearLR"], CASES["OneCycleLR"], CASES["SequentialLR"], CASES["ChainedScheduler"],
                 CASES["CosineAnnealingWarmRestarts"]):
        keys = []
        for lib in (engine, torch):
            opt, _, _ = _optimizer(lib)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                keys.append(sorted(make(lib.optim.lr_scheduler, opt).state_dict()))
        assert keys[0] == keys[1]
