"""The optimizers reuse their checked param groups between steps (engine/optim/group_cache.py): every change a
program makes to the groups between steps still reaches the update, or its error, exactly as in PyTorch."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def _run(lib, change, name="SGD", kwargs=None, steps=4):
    """Steps of an optimizer with `change(opt, params, lib, step)` between them: parameters and errors."""
    params = [lib.tensor([1.0, -2.0, 3.0], requires_grad=True), lib.tensor([0.5], requires_grad=True)]
    extra = lib.tensor([4.0, 5.0], requires_grad=True)
    opt = getattr(lib.optim, name)([params[0]], **(kwargs or dict(lr=0.1)))
    out = []
    for step in range(steps):
        opt.zero_grad()
        extra.grad = None
        (sum((p * p * p).sum() for p in params) + (extra * extra).sum()).backward()
        try:
            opt.step()
        except (TypeError, ValueError, RuntimeError, KeyError) as e:
            out.append((type(e).__name__, str(e)))
        out.append([p.detach().numpy().tolist() if lib is torch else p.tolist() for p in params + [extra]])
        change(opt, params + [extra], lib, step)
    return out


CHANGES = {
    "lr reassigned": lambda opt, ps, lib, i: opt.param_groups[0].__setitem__("lr", 0.1 / (i + 2)),
    "lr the same value": lambda opt, ps, lib, i: opt.param_groups[0].__setitem__("lr", 0.1),
    "lr a string": lambda opt, ps, lib, i: opt.param_groups[0].__setitem__("lr", "x") if i == 1 else None,
    "lr a tensor changed in place": lambda opt, ps, lib, i: (
        opt.param_groups[0].__setitem__("lr", lib.tensor(0.05)) if i == 0
        else opt.param_groups[0]["lr"].fill_(0.01 * i)),
    "params appended": lambda opt, ps, lib, i: opt.param_groups[0]["params"].append(ps[i % 3]) if i < 2 else None,
    "params list replaced": lambda opt, ps, lib, i: opt.param_groups[0].__setitem__("params", [ps[1], ps[2]]),
    "momentum switched on": lambda opt, ps, lib, i: opt.param_groups[0].__setitem__("momentum", 0.9) if i == 1 else None,
    "key deleted": lambda opt, ps, lib, i: opt.param_groups[0].pop("weight_decay", None) if i == 2 else None,
    "group added": lambda opt, ps, lib, i: opt.add_param_group({"params": [ps[2]], "lr": 0.3}) if i == 0 else None,
    "groups replaced": lambda opt, ps, lib, i: setattr(opt, "param_groups", [dict(opt.param_groups[0], lr=0.2)]),
}


@pytest.mark.parametrize("what", CHANGES)
def test_changes_between_steps_reach_the_update_as_in_torch(what):
    got, want = (_run(lib, CHANGES[what]) for lib in (engine, torch))
    assert [type(x) for x in got] == [type(x) for x in want], (got, want)
    for a, b in zip(got, want):
        if isinstance(a, tuple):
            assert a[0] == b[0], (a, b)
        else:
            for pa, pb in zip(a, b):
                np.testing.assert_allclose(pa, pb, rtol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.1)), ("RMSprop", dict(lr=0.01))])
def test_betas_and_lr_changes_reach_adam_and_rmsprop(name, kwargs):
    def change(opt, ps, lib, i):
        g = opt.param_groups[0]
        if "betas" in g:
            g["betas"] = (0.5, 0.9) if i == 0 else g["betas"]
        g["lr"] = g["lr"] * 0.5

    got, want = (_run(lib, change, name, kwargs) for lib in (engine, torch))
    for a, b in zip(got, want):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=1e-5)
