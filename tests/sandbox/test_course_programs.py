"""Tutorial and course programs as students paste them (tests/programs/courses: the PyTorch blitz, basics (tensors,
build model, autograd, quickstart) and nn_tutorial, the examples_autograd/examples_nn polynomials, the
custom-Function, hooks, NLP-from-scratch and "Deep Learning for NLP" tutorials (bag-of-words, word embeddings, the
LSTM tagger and its char-level exercise, the Bi-LSTM CRF), micrograd, makemore (to the WaveNet), d2l (softmax/MLP
concise, weight decay, dropout, the builders' guide), pytorch/examples' MNIST CNN, "Deep Learning with PyTorch"'s
thermometer and the state_dict / checkpoint recipes), with downloads replaced by synthetic data of the same shape:
each prints under the installed PyTorch exactly what it prints in-process on the engine (`import torch` bound to
the engine) and in the sandbox.

Object addresses (`<AddBackward0 object at 0x...>`) are the only text normalised. Where a program's stdout is not
PyTorch's, the reason is written in GAPS (an expected failure: a fixed gap shows as XPASS)."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from pathlib import Path

import pytest
from sandbox_testing import DEFAULT_LIMITS, load_bench_long, run

import engine
from engine import mkl

COURSES = Path(__file__).resolve().parents[1] / "programs" / "courses"
NAMES = sorted(p.stem for p in COURSES.glob("*.py"))
bench_long = load_bench_long()
LIMITS = dataclasses.replace(DEFAULT_LIMITS, **bench_long.GENEROUS)

# program -> why neither the engine in-process nor the sandbox prints PyTorch's stdout: with MKL (engine/mkl.py) none
# (sin, exp, tanh, the products, sigmoid, softmax, cross_entropy, norm, var, std and pow are PyTorch's own digits)
NUMERIC_GAPS: dict[str, str] = {}
if not mkl.AVAILABLE:
    NUMERIC_GAPS.update(dict.fromkeys(
        ("optimization_loop", "examples_autograd_polynomial", "examples_nn_polynomial_module", "basics_quickstart",
         "makemore_wavenet", "nlp_word_embeddings", "nlp_lstm_tagger_char_features", "d2l_weight_decay",
         "makemore_layers", "makemore_backprop_ninja", "examples_nn_dynamic_net"),
        "without MKL the engine's float32 sin / tanh / exp and its products (numpy's OpenBLAS) round otherwise "
        "than PyTorch's (MKL's VML and sgemm): printed losses differ in their last digits"))
ENGINE_GAPS = {**NUMERIC_GAPS,  # in-process only
               "uva_xor_classifier": "in-process the engine has no torch.save/torch.load (the sandbox has them, "
                                     "on its per-run in-memory files)",
               "basics_quickstart": "in-process the engine has no torch.save/torch.load",
               "recipes_state_dict_checkpoint": "in-process the engine has no torch.save/torch.load",
               "d2l_builders_guide": "in-process the engine has no torch.save/torch.load, and `type(p)` prints the "
                                     "engine's class path (the sandbox prints torch's: torch.nn.parameter.Parameter)"}
SANDBOX_GAPS: dict[str, str] = {}  # program -> why the sandbox does not (beyond NUMERIC_GAPS)


def _normalised(text: str) -> str:
    return re.sub(r" at 0x[0-9a-f]+", " at 0x", text)


def _exec(source: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(source, "program.py", "exec"), {"__name__": "__main__"})  # noqa: S102 - our own programs
    return _normalised(buf.getvalue())


@pytest.fixture(autouse=True)
def _own_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # torch.save in a program writes a real file when PyTorch runs it


def _torch_stdout(name: str) -> str:
    """PyTorch's stdout on one thread (on more, MKL splits some products between threads and sums them otherwise)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _exec((COURSES / f"{name}.py").read_text())
    finally:
        torch.set_num_threads(threads)
        # a program's print options (the thermometer's edgeitems=2) last the process: the next program starts afresh
        torch.set_printoptions(profile="default", sci_mode=None)


def _params(gaps):
    return [pytest.param(n, marks=pytest.mark.xfail(reason=gaps[n], strict=False)) if n in gaps else n for n in NAMES]


@pytest.mark.slow
@pytest.mark.parametrize("name", _params(ENGINE_GAPS))
def test_course_program_prints_pytorchs_stdout_in_process(name):
    expected = _torch_stdout(name)
    engine.reset_run_state()
    with bench_long.engine_as_torch():
        assert _exec((COURSES / f"{name}.py").read_text()) == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", _params({**NUMERIC_GAPS, **SANDBOX_GAPS}))
def test_course_program_prints_pytorchs_stdout_in_the_sandbox(name):
    expected = _torch_stdout(name)
    out = run((COURSES / f"{name}.py").read_text(), LIMITS, timeout=600)
    assert out.error is None, out.error
    assert _normalised(out.stdout) == expected
