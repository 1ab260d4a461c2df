"""The recorder's cheap ways change nothing it records (issue 21, speed): the collector's young-generation
threshold is raised only while a run records and restored after it, however the run ends; op parameters
converted by the short way equal the plain rule."""

from __future__ import annotations

import contextlib
import gc
import io

import numpy as np
import pytest

import engine
from app.runner.capture import YOUNG_GC_THRESHOLD, StreamingRecorder
from app.trace.policy import RunPolicy
from engine.recorder import _param, _params


def recorder():
    return StreamingRecorder(lambda message: None, policy=RunPolicy(head=1, tail=2, max_passes=100), stream=False,
                             value_limit=256, max_events=100_000)


def test_threshold_is_raised_while_recording_and_restored_after():
    before = gc.get_threshold()
    with recorder():
        during = gc.get_threshold()
        x = engine.ones(3, requires_grad=True)
        (x * 2).sum().backward()
    assert during[0] >= YOUNG_GC_THRESHOLD and during[1:] == before[1:]
    assert gc.get_threshold() == before


def test_threshold_is_restored_when_the_run_fails():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), recorder():
        engine.ones(2, 3) @ engine.ones(2, 3)
    assert gc.get_threshold() == before


def test_a_higher_threshold_set_before_is_kept():
    before = gc.get_threshold()
    try:
        gc.set_threshold(50_000, before[1], before[2])
        with recorder():
            assert gc.get_threshold()[0] == 50_000
        assert gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)


def test_cycles_a_program_makes_are_still_collected():
    class Node:
        pass

    with recorder(), contextlib.redirect_stdout(io.StringIO()):
        gc.collect()
        for _ in range(3 * YOUNG_GC_THRESHOLD):
            a, b = Node(), Node()
            a.other, b.other = b, a
        assert gc.get_count()[0] < 3 * YOUNG_GC_THRESHOLD  # collections ran during the loop


@pytest.mark.parametrize("params", [
    (None, 1, True, "x"), (1.5, np.float32(2.5), np.int64(3)), ((1, 2), [slice(1, None, 2), None]),
    (slice(None, 3),), (np.dtype("float32"), float("nan"), float("inf")), (np.arange(3),), [object()],
])
def test_params_short_way_equals_the_plain_rule(params):
    plain = [_param(p) for p in params]
    short = _params(params)
    assert repr(short) == repr(plain)
