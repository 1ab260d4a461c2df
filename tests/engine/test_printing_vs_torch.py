"""Printing of big and awkward tensors, and torch.set_printoptions, against real torch's str().

Each case builds the same numbers in numpy, hands them to both libraries and compares the text exactly.
Skipped when torch (the test-only extra) is absent.
"""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


ARRAYS = {
    "1d_1001": np.arange(1001, dtype=np.float32),
    "1d_1000_no_summary": np.arange(1000, dtype=np.float32) / 7,
    "2d_big": _normal(40, 30),
    "3d_big": _normal(5, 20, 12),
    "4d_big": _normal(3, 4, 10, 10),
    "mnist_batch": _normal(64, 784),
    "tiny": _normal(50, 30, scale=1e-6),
    "huge": _normal(30, 40, scale=1e9),
    "mixed_magnitude": np.concatenate([_normal(600), _normal(600, scale=1e5)]),
    "mixed_small": np.array([1e-3, 1.0, 2.5], np.float32),
    "ratio_just_over_1000": np.array([1.0, 1000.5], np.float32),
    "ratio_1000": np.array([1.0, 1000.0], np.float32),
    "above_1e8": np.array([1.5e8, 2.0], np.float32),
    "ints_as_floats": np.arange(-600, 600, dtype=np.float32).reshape(40, 30),
    "nan_inf": np.array([np.nan, np.inf, -np.inf, 1.5, 0.0, -2.25] * 200, np.float32),
    "only_nan_inf": np.array([np.nan, np.inf, -np.inf], np.float32),
    "zeros_big": np.zeros((40, 40), np.float32),
    "int64_big": np.arange(-2000, 2000, dtype=np.int64).reshape(40, 100),
    "int64_wide": np.array([1, -12345678901, 3] * 10, np.int64),
    "int32": np.arange(2000, dtype=np.int32),
    "bool_big": (np.arange(1500) % 3 == 0),
    "float64_big": RNG.standard_normal((35, 35)),
    "float16": _normal(20, 60).astype(np.float16),
    "uint8": np.arange(1200, dtype=np.int64).astype(np.uint8),
    "narrow_columns": _normal(2000, 1),
    "wide_rows": _normal(2, 700),
    "scalar_sci": np.array(123456789.0, np.float32),
    "long_line": _normal(1, 200),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_big_tensors_print_like_torch(name):
    arr = ARRAYS[name]
    assert str(engine.from_numpy(arr.copy())) == str(torch.from_numpy(arr.copy()))


@pytest.mark.parametrize("name", ["2d_big", "1d_1001", "mixed_magnitude", "wide_rows"])
def test_requires_grad_and_grad_fn_suffixes(name):
    arr = ARRAYS[name]
    e = engine.tensor(arr.tolist(), requires_grad=True)
    t = torch.tensor(arr.tolist(), requires_grad=True)
    assert str(e) == str(t)
    assert str(e * 2) == str(t * 2)
    assert str(-e) == str(-t)


OPTIONS = [
    {"precision": 2},
    {"precision": 8},
    {"precision": 0},
    {"threshold": 5},
    {"threshold": 10, "edgeitems": 1},
    {"edgeitems": 0, "threshold": 5},
    {"linewidth": 40},
    {"linewidth": 200},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "full", "precision": 2},
    {"profile": "default"},
]
SMALL = {
    "vector": np.linspace(-3, 3, 17).astype(np.float32),
    "matrix": _normal(6, 9),
    "ints": np.arange(40, dtype=np.int64).reshape(5, 8),
    "bools": np.arange(20) % 2 == 0,
    "sci": np.array([1e-7, 3.0, 2e6], np.float32),
    "cube": _normal(4, 5, 6),
    "mnist_row": _normal(3, 784),
}


@pytest.fixture
def restore_options():
    yield
    engine.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("name", list(SMALL))
def test_set_printoptions_like_torch(name, options, restore_options):
    arr = SMALL[name]
    engine.set_printoptions(**options)
    torch.set_printoptions(**options)
    assert str(engine.from_numpy(arr.copy())) == str(torch.from_numpy(arr.copy()))
    assert engine.get_printoptions() == torch._tensor_str.get_printoptions()


def test_reset_run_state_restores_the_default_options(restore_options):
    engine.set_printoptions(precision=1, threshold=3, sci_mode=True)
    engine.reset_run_state()
    torch.set_printoptions(profile="default")
    arr = SMALL["matrix"]
    assert str(engine.from_numpy(arr.copy())) == str(torch.from_numpy(arr.copy()))


def test_sci_mode_not_given_goes_back_to_automatic(restore_options):
    # torch assigns sci_mode on every call: set_printoptions(precision=3) after sci_mode=True is automatic again
    for lib in (engine, torch):
        lib.set_printoptions(sci_mode=True)
        lib.set_printoptions(precision=3)
    arr = SMALL["vector"]
    assert str(engine.from_numpy(arr.copy())) == str(torch.from_numpy(arr.copy()))
