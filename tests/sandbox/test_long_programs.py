"""The long programs of bench/long.py (PyTorch's "Learning PyTorch with Examples" at full length, a 3,000-step
regression, a 1,000-epoch Adam MLP, a loop printing every step, a 20,000-line printer, a makemore bigram model)
run to their end in the sandbox, print exactly what the same program prints in-process on the engine
(`import torch` bound to the engine: the interpreter adds nothing and loses nothing), and exactly what it prints
under the installed PyTorch.

Where the engine itself differs from PyTorch (its numerics, a missing keyword), the PyTorch comparison is an
expected failure naming the engine's gap: engine/ is another developer's, and a fixed gap shows as XPASS.
The limits are generous (bench/long.py's `GENEROUS`): the server's defaults are app/core/config.py's business;
here only the interpreter's answer counts. No timing is asserted (bench/long.py prints the times).
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import os

import pytest
from sandbox_testing import DEFAULT_LIMITS, load_bench_long, run

import engine

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
bench_long = load_bench_long()

LIMITS = dataclasses.replace(DEFAULT_LIMITS, **bench_long.GENEROUS)

_LAST_BITS = ("torch.sin here is neither numpy's (256 of the 2,000 float32 sin(x) differ), SLEEF's sinf_u10 (48) nor "
              "the correctly rounded sin (92): most likely MKL's VML, which the build links. With torch's sin values "
              "the engine prints all 20 of polynomial_tensor's losses bit for bit (issue 21)")
ENGINE_GAPS = {  # program -> why its stdout is not PyTorch's (engine/, not the interpreter)
    "polynomial_tensor": _LAST_BITS,
    "polynomial_autograd": _LAST_BITS,
    "polynomial_custom_function": _LAST_BITS,
    "polynomial_nn": _LAST_BITS,
    "polynomial_module": _LAST_BITS,
    "adam_mlp": "its data is sin(X) * cos(X) and its activations tanh, which torch computes otherwise (most likely "
                "MKL's VML; cos 334, tanh 608 of linspace(-pi, pi, 2000) differ from numpy's in the last bit), and "
                "torch's 256 x 32 @ 32 x 32 product (MKL sgemm) differs from numpy's in 1,593 of 8,192 elements: the "
                "differences grow over 1,000 Adam epochs (epoch 300: loss 0.000157 vs PyTorch's 0.000153)",
    "bigram": "torch's exp and log (most likely MKL's VML) differ from numpy's in the last bit (exp 782, log 402 of "
              "2,000), so its losses differ in the last digits (its first printed training loss: 2.0654616355895996 "
              "vs 2.0654618740081787)",
}

ENGINE_FAILS: set[str] = set()  # programs the engine itself cannot run to the end yet


def engine_outcome(source: str) -> tuple[str, str | None]:
    """stdout and the error message (None: none) of `source` as plain Python on the engine."""
    buf = io.StringIO()
    engine.reset_run_state()
    error = None
    with bench_long.engine_as_torch(), contextlib.redirect_stdout(buf):
        try:
            exec(compile(source, "program.py", "exec"), {"__name__": "__main__"})  # noqa: S102 - our own programs
        except Exception as e:  # noqa: BLE001 - compared with the sandbox's error below
            error = str(e)
    return buf.getvalue(), error


def torch_stdout(source: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(source, "program.py", "exec"), {"__name__": "__main__"})  # noqa: S102 - our own programs
    return buf.getvalue()


def _params(gaps):
    return [pytest.param(n, marks=pytest.mark.xfail(reason=gaps[n], strict=False)) if n in gaps else n
            for n in bench_long.PROGRAMS]


@pytest.mark.slow
@pytest.mark.parametrize("name", bench_long.PROGRAMS)
def test_long_program_prints_in_the_sandbox_what_it_prints_on_the_engine(name):
    source = bench_long.program_source(name)
    out = run(source, LIMITS, timeout=600)
    stdout, error = engine_outcome(source)
    assert out.stdout == stdout
    if name in ENGINE_FAILS:
        assert out.error is not None and out.error["message"] == error
    else:
        assert out.error is None and error is None, (out.error, error)
        assert out.output_cut is None


@pytest.mark.slow
@pytest.mark.parametrize("name", _params(ENGINE_GAPS))
def test_long_program_runs_whole_with_pytorchs_stdout(name):
    pytest.importorskip("torch")
    source = bench_long.program_source(name)
    expected = torch_stdout(source)
    out = run(source, LIMITS, timeout=600)
    assert out.error is None, out.error
    assert out.output_cut is None
    assert out.stdout == expected
