"""An optimizer's param_groups are counted on every step()/zero_grad() (`Budgets.check_param_groups`): its count
of the engine's layout is the one `check_data`'s walk makes, so the same groups pass or fail the same way."""
from __future__ import annotations

import pytest
from sandbox_testing import err, make_limits, ok

import engine
from sandbox import backend_for
from sandbox.interpreter import Interpreter

LIMIT = 1_000


def _outcome(check, groups):
    try:
        check(groups)
    except Exception as e:  # noqa: BLE001 - the outcome compared is the error itself
        return type(e).__name__, str(e)
    return None


def _groups():
    t = engine.ones(10, requires_grad=True)
    big = engine.ones(LIMIT, requires_grad=True)
    base = {"params": [t], "lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "foreach": None, "amsgrad": False}
    return [
        [base],
        [base] * 20,
        [base] * 100,  # past the limit by its keys and values
        [{**base, "params": [t] * 90}],
        [{**base, "params": [t] * 120}],  # past the limit by elements
        [{**base, "params": [big]}],
        [{**base, "name": "x" * (LIMIT + 1)}],  # a long string value
        [{**base, "x" * (LIMIT + 1): 1}],  # a long key
        [{**base, "params": [[t], [t]]}],  # nested lists: the walk
        [{**base, "params": [t, "a"]}],
        [{**base, 3: 1}],  # a key that is not a name
        [{**base, "sub": {"a": t}}],
        [{**base, "params": (t, t)}],
        [{**base, "w": t}],
        [base, [t]],  # a group that is not a dict
        (base,),  # a tuple of groups
        [],
    ]


@pytest.mark.parametrize("index", range(len(_groups())))
def test_param_groups_count_as_the_walk_counts(index):
    interp = Interpreter(make_limits(max_live_elements=LIMIT), backend_for(engine))
    groups = _groups()[index]
    assert _outcome(interp.check_param_groups, groups) == _outcome(interp.check_data, groups)


def test_param_groups_grown_past_the_limit_stop_the_step():
    src = ("t = torch.ones(10, requires_grad=True)\nopt = torch.optim.Adam([t], lr=0.1)\n"
           "opt.param_groups[0]['params'].extend([t] * 200)\nopt.step()\n")
    e = err(src, limits=make_limits(max_live_elements=LIMIT))
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e
    assert ok(src.replace("200", "20"), limits=make_limits(max_live_elements=LIMIT)) == ""
