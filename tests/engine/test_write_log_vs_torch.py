"""engine/autograd.py's version counters: a write log stays bounded however long a training loop runs, and
the in-place error still says what torch says (the versions counted, a stale save still caught)."""
import re

import pytest

import engine
from engine import autograd

torch = pytest.importorskip("torch")


def _stale_save_error(lib, writes_before, writes_after):
    w = lib.zeros(3, requires_grad=True)
    with lib.no_grad():
        for _ in range(writes_before):
            w.add_(1.0)
    y = (w * w).sum()  # MulBackward0 saves w
    with lib.no_grad():
        for _ in range(writes_after):
            w.add_(1.0)
    with pytest.raises(RuntimeError) as info:
        y.backward()
    return re.sub(r"^.*?(\[torch)", r"\1", str(info.value).split("\n")[0])


@pytest.mark.parametrize("before, after", [(0, 1), (5, 2), (3000, 1), (3000, 7)])
def test_versions_in_the_error_match_torch_past_the_kept_half(before, after):
    assert _stale_save_error(engine, before, after) == _stale_save_error(torch, before, after)


def _long_loop(lib, steps):
    model = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.ones(4, 2, requires_grad=True)  # so the weight is saved for x's gradient
    for _ in range(steps):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    y = model(x).sum()
    opt.step()  # a step between forward and backward: the saved weight is stale
    with pytest.raises(RuntimeError) as info:
        y.backward()
    return model, re.sub(r"^.*?(\[torch)", r"\1", str(info.value).split("\n")[0])


def test_a_long_training_loop_keeps_each_write_log_bounded():
    steps = 3 * autograd.WRITE_LOG_KEEP
    model, message = _long_loop(engine, steps)
    assert message == _long_loop(torch, steps)[1]
    for p in model.parameters():
        ref, log = autograd._WRITES[id(p._data)]
        assert ref() is p._data
        assert len(log) <= autograd.WRITE_LOG_KEEP + 1
