"""Helpers shared by the sandbox tests (a unique module name: tests/ is not a package)."""
from __future__ import annotations

import dataclasses
import os
import signal
import time

import engine
from app.core.config import Settings
from app.runner.worker import sandbox_limits
from sandbox import RunOutcome, SandboxLimits, backend_for, run_program
from sandbox.formatting import FakeAddresses

BACKEND = backend_for(engine)
# The limits a run gets by default: the server's Settings are the one place their values are written,
# with the run's budgets of the suite (`TEST_BUDGETS`) so that a hostile case stops in a second or two.
# NOTE: the server's own budgets (20 s of CPU, 10**6 loop iterations) are for real programs, whole
# (issue 21): tests/sandbox/test_bench_defaults.py runs bench/programs under them.
TEST_BUDGETS = {"time_limit_s": 2.0, "max_wall_s": 20.0, "max_loop_iterations": 10_000, "max_steps": 1_000_000}
DEFAULT_LIMITS = dataclasses.replace(sandbox_limits(Settings()), **TEST_BUDGETS)


# The element limits of the earlier default (100,000 a tensor, 1,000,000 alive), which the hostile cases
# written against them still use: their sizes are just past these, so they stay quick under the new ones.
CLASSIC_LIMITS = dataclasses.replace(DEFAULT_LIMITS, max_tensor_elements=100_000, max_live_elements=1_000_000)


def make_limits(**overrides) -> SandboxLimits:
    """The default limits with some changed: `make_limits(max_steps=50)`."""
    return dataclasses.replace(DEFAULT_LIMITS, **overrides)

HOST_MARKERS = ("/work", "/root", "/home", "/usr", "/tmp", "Traceback", "site-packages", "File \"", ".py\"",
                "0x7f")


def host_strings():
    """Environment values long enough to be recognisable (paths, tokens, user names)."""
    out = {os.getcwd()}
    for v in os.environ.values():
        if len(v) >= 8 and not v.isdigit():
            out.add(v)
    return out


def leaks(text: str) -> list[str]:
    text = FakeAddresses.PATTERN.sub("<stand-in>", text)  # the run's stand-in addresses (0x7f0000000010, ...)
    found = [m for m in HOST_MARKERS if m in text]
    found += [v for v in host_strings() if v in text]
    return found


class Timeout(Exception):
    pass


# The wall-clock alarm of `run`: a run's time limit counts its CPU time (sandbox/budgets.py), which a loaded
# machine (2 cores, several test suites) stretches several times over in wall time; the alarm only catches hangs.
RUN_TIMEOUT_S = 60.0


def run(source: str, limits: SandboxLimits | None = None, timeout: float = RUN_TIMEOUT_S, **kw) -> RunOutcome:
    """run_program under a wall-clock alarm so a regression cannot hang the suite."""

    def on_alarm(signum, frame):
        raise Timeout(f"run_program took more than {timeout} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        start, cpu_start = time.monotonic(), time.process_time()
        out = run_program(source, limits or DEFAULT_LIMITS, BACKEND, **kw)
        out.wall = time.monotonic() - start
        # what the run's time limit counts (with any time slept): a bound on it holds on a loaded machine too
        out.cpu = out.elapsed = time.process_time() - cpu_start
        return out
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def ok(source: str, **kw) -> str:
    """Run a program that must succeed; return its stdout."""
    out = run(source, **kw)
    assert out.error is None, out.error
    return out.stdout


def err(source: str, **kw) -> dict:
    """Run a program that must fail; return its error dict."""
    out = run(source, **kw)
    assert out.error is not None, f"expected an error, got stdout {out.stdout!r}"
    assert set(out.error) >= {"type", "message", "line", "column"}
    return out.error


def cpython(source: str) -> tuple[str, BaseException | None]:
    """What real CPython prints for `source` (trusted test text, run in this process) and the exception
    it ended with, if any. Programs that import torch need real torch (callers skip without it)."""
    import contextlib
    import io

    buf = io.StringIO()
    error = None
    with contextlib.redirect_stdout(buf):
        try:
            exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102 - test text only
        except Exception as e:  # noqa: BLE001 - reported to the caller
            error = e
    return buf.getvalue(), error


def same_as_cpython(source: str) -> str:
    """The sandbox prints exactly what CPython prints for `source` and ends the same way (error type,
    message and line); returns the output."""
    import traceback

    out = run(source)
    expected, error = cpython(source)
    assert out.stdout == expected
    if error is None:
        assert out.error is None, out.error
    else:
        assert out.error is not None, f"CPython raised {error!r}; the sandbox did not"
        line = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == "<program>"][-1]
        assert (out.error["type"], out.error["message"], out.error["line"]) == (type(error).__name__, str(error), line)
    return out.stdout


def load_bench_long():
    """bench/long.py as a module, loaded from its file: bench/ never goes on sys.path (its engine.py would shadow
    the engine package in every process started later, the server's workers too)."""
    import importlib.util
    import sys

    name = "flowgrad_bench_long"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "long.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
