"""Every program of bench/programs/ finishes under the server's own default limits (issue 21: the defaults let
bench/long.py's programs finish with 2x headroom), in-process, recorded as the worker records a run.

Not the suite's short budgets (sandbox_testing.TEST_BUDGETS) nor bench/long.py's generous ones: `Settings()`
as the server starts. No timing is asserted; a program that stops on a limit fails with the limit's message.
"""
from __future__ import annotations

import os

import pytest
from sandbox_testing import load_bench_long

import engine
from app.core.config import Settings
from app.runner.worker import sandbox_limits
from sandbox import backend_for, run_program

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
bench_long = load_bench_long()

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", bench_long.PROGRAMS)
def test_bench_program_finishes_under_the_server_defaults(name):
    limits = sandbox_limits(Settings())
    rec = bench_long.worker_recorder()
    out = run_program(bench_long.program_source(name), limits, backend_for(engine), recorder=rec, on_print=rec.on_print)
    assert out.error is None, out.error
    assert out.stdout.rstrip().splitlines()[-1:] != [], name
