"""The long programs of bench/long.py (PyTorch's "Learning PyTorch with Examples" at full length, a 3,000-step
regression, a 1,000-epoch Adam MLP, a loop printing every step, a 20,000-line printer, a makemore bigram model)
run to their end in the sandbox and print exactly what they print under the installed PyTorch.

The limits are generous (bench/long.py's `GENEROUS`): the server's defaults are app/core/config.py's business;
here only the interpreter's answer counts. No timing is asserted (bench/long.py prints the times).
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys

import pytest
from sandbox_testing import DEFAULT_LIMITS, run

torch = pytest.importorskip("torch")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import long as bench_long  # noqa: E402  (bench/ is not a package)

LIMITS = dataclasses.replace(DEFAULT_LIMITS, **bench_long.GENEROUS)


def torch_stdout(source: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(source, "program.py", "exec"), {"__name__": "__main__"})  # noqa: S102 - our own programs
    return buf.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("name", bench_long.PROGRAMS)
def test_long_program_runs_whole_with_pytorchs_stdout(name):
    source = bench_long.program_source(name)
    expected = torch_stdout(source)
    out = run(source, LIMITS, timeout=600)
    assert out.error is None, out.error
    assert out.output_cut is None
    assert out.stdout == expected
