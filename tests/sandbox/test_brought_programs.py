"""Programs people bring (tests/programs/brought): the idioms of a DataLoader training loop, tensor and indexing tours,
a CNN module, autograd, numpy and plots, statistics, least squares / PCA / k-means, recurrent layers, Python's own
idioms and Karpathy's tiny GPT, written as students write them. Each prints in the sandbox exactly what it prints
under the installed PyTorch (object addresses normalised)."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_testing import DEFAULT_LIMITS, load_bench_long, run

BROUGHT = Path(__file__).resolve().parents[1] / "programs" / "brought"
NAMES = sorted(p.stem for p in BROUGHT.glob("*.py"))
LIMITS = dataclasses.replace(DEFAULT_LIMITS, **load_bench_long().GENEROUS)


def _normalised(text: str) -> str:
    return re.sub(r" at 0x[0-9a-f]+", " at 0x", text)


def _torch_stdout(name: str, tmp_path) -> str:
    pytest.importorskip("torch")
    # a process of its own: the program imports matplotlib and writes files, as under real PyTorch; on one thread, as
    # the engine computes (a sum past 32,768 elements is split between ATen's threads, tests/course programs too)
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(BROUGHT / f"{name}.py")], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return _normalised(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_brought_program_prints_pytorchs_stdout_in_the_sandbox(name, tmp_path):
    expected = _torch_stdout(name, tmp_path)
    out = run((BROUGHT / f"{name}.py").read_text(), LIMITS, timeout=600)
    assert out.error is None, out.error
    assert _normalised(out.stdout) == expected
