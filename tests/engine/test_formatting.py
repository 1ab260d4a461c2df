"""engine.formatting must print exactly what PyTorch prints.

The hard-coded cases run everywhere; the cross-checks against real torch skip without it.
"""

import numpy as np
import pytest

from engine.formatting import format_array, format_size, format_tensor


def f32(x):
    return np.array(x, dtype=np.float32)


def f64(x):
    return np.array(x, dtype=np.float64)


def i64(x):
    return np.array(x, dtype=np.int64)


RNG = np.random.default_rng(0)


def randn(*shape, scale=1.0, dtype=np.float32):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


# ---------------------------------------------------------------- no torch needed

MUL_12 = "tensor([1., 2.], grad_fn=<MulBackward0>)"
HARD_CODED = [
    (f32(25.0), {"grad_fn": "PowBackward0"}, "tensor(25., grad_fn=<PowBackward0>)"),
    (f32([6.6931]), {"grad_fn": "AddBackward0"}, "tensor([6.6931], grad_fn=<AddBackward0>)"),
    (f32(6.693147), {"grad_fn": "AddBackward0"}, "tensor(6.6931, grad_fn=<AddBackward0>)"),
    (f32([[1, 2], [3, 4]]), {}, "tensor([[1., 2.],\n        [3., 4.]])"),
    (f32(25.0), {}, "tensor(25.)"),
    (i64(3), {}, "tensor(3)"),
    (f32([]), {}, "tensor([])"),
    (np.zeros((0, 3), np.float32), {}, "tensor([], size=(0, 3))"),
    (np.array([True, False]), {}, "tensor([ True, False])"),
    (f64([1.5, 2.0]), {}, "tensor([1.5000, 2.0000], dtype=torch.float64)"),
    (f32([1.0, 2.0]), {"requires_grad": True}, "tensor([1., 2.], requires_grad=True)"),
    # a non-leaf shows its grad_fn, never requires_grad=True
    (f32([1, 2]), {"grad_fn": "MulBackward0", "requires_grad": True}, MUL_12),
    (f32([np.nan, np.inf, -np.inf]), {}, "tensor([nan, inf, -inf])"),
    (f32([1e-5, 1.0]), {}, "tensor([1.0000e-05, 1.0000e+00])"),
    (f64([1.5]), {"default_dtype": "float64"}, "tensor([1.5000])"),
    (f32([1.5]), {"default_dtype": "torch.float64"}, "tensor([1.5000], dtype=torch.float32)"),
]


@pytest.mark.parametrize("arr, kwargs, expected", HARD_CODED)
def test_hard_coded(arr, kwargs, expected):
    assert format_tensor(arr, **kwargs) == expected


def test_format_size():
    assert format_size((5, 4)) == "torch.Size([5, 4])"
    assert format_size(()) == "torch.Size([])"
    assert format_size(np.zeros((2, 0, 3)).shape) == "torch.Size([2, 0, 3])"


def test_format_array_is_the_bracketed_part():
    assert format_array(f32([[1, 2], [3, 4]])) == "[[1., 2.],\n [3., 4.]]"
    assert format_array(f32([])) == "[]"
    assert format_array([1, 2]) == "[1, 2]"


def test_summarised_shape():
    text = format_tensor(np.arange(2000, dtype=np.float32))
    assert text == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])"
    )


# ---------------------------------------------------------------- against real torch

# (id, array, autograd): autograd is None, "leaf" (requires_grad=True) or the grad_fn name to produce
TORCH_CASES = [
    # 0-d
    ("0d-int-mode", f32(25.0), None),
    ("0d-frac", f32(6.693147), None),
    ("0d-neg", f32(-0.5), None),
    ("0d-zero", f32(0.0), None),
    ("0d-negzero", f32(-0.0), None),
    ("0d-nan", f32(np.nan), None),
    ("0d-inf", f32(-np.inf), None),
    ("0d-tiny", f32(1e-5), None),
    ("0d-huge", f32(1e10), None),
    ("0d-int64", i64(3), None),
    ("0d-int32", np.array(7, np.int32), None),
    ("0d-bool", np.array(True), None),
    ("0d-f64", f64(3.14159265), None),
    ("0d-leaf", f32(25.0), "leaf"),
    ("0d-pow", f32(25.0), "PowBackward0"),
    ("0d-add", f32(6.693147), "AddBackward0"),
    # 1-d
    ("1d-ints-as-floats", f32([1, 2]), None),
    ("1d-frac", f32([1.5, 2.25]), None),
    ("1d-neg", f32([-1.0, 2.5, -3.125]), None),
    ("1d-tenths", f32([0.1, 0.2, 0.3]), None),
    ("1d-empty", f32([]), None),
    ("1d-empty-int", i64([]), None),
    ("1d-empty-f64", f64([]), None),
    ("1d-tiny-mix", f32([1e-5, 1.0]), None),
    ("1d-large-mix", f32([1e10, 1.0]), None),
    ("1d-ratio-1000", f32([0.001, 1.0]), None),
    ("1d-ratio-1001", f32([0.001, 1.001]), None),
    ("1d-above-1e8", f32([1.5e8, 2.0]), None),
    ("1d-below-1e-4", f32([0.00009, 0.0001]), None),
    ("1d-nan-mix", f32([np.nan, 1.0, np.inf]), None),
    ("1d-nonfinite", f32([np.nan, np.inf, -np.inf]), None),
    ("1d-frac-nan", f32([1.5, np.nan, -np.inf]), None),
    ("1d-sci-nan", f32([1e-8, np.nan, 1.0]), None),
    ("1d-zeros", f32([0.0, 0.0]), None),
    ("1d-negzero", f32([-0.0, 1.0]), None),
    ("1d-big-ints", f32([123456, -7]), None),
    ("1d-arange-int", np.arange(10), None),
    ("1d-int-wrap", np.arange(-50, 50) * 37, None),
    ("1d-float-wrap", np.linspace(-3, 3, 30, dtype=np.float32), None),
    ("1d-randn-50", randn(50), None),
    ("1d-summary-float", np.arange(2000, dtype=np.float32), None),
    ("1d-summary-int", np.arange(1001), None),
    ("1d-summary-randn", randn(5000), None),
    ("1d-exactly-1000", randn(1000), None),
    ("1d-int64-large", i64([123456789012, -5]), None),
    ("1d-int32", np.array([1, -2, 300], np.int32), None),
    ("1d-int16", np.array([1, -2], np.int16), None),
    ("1d-int8", np.array([1, -2], np.int8), None),
    ("1d-uint8", np.array([0, 255], np.uint8), None),
    ("1d-bool", np.array([True, False]), None),
    ("1d-bool-true", np.array([True, True]), None),
    ("1d-f64", f64([1.5, 2.0]), None),
    ("1d-f64-ints", f64([1, 2]), None),
    ("1d-f16", np.array([0.1, 1000.0], np.float16), None),
    ("1d-leaf", randn(3), "leaf"),
    ("1d-add", f32([6.693147]), "AddBackward0"),
    ("1d-leaf-f64", f64([1.0, 2.0]), "leaf"),
    ("1d-sci-suffix-wrap", f32([1e10, 2e10, 3e10, 4e10, 5e10, 6e10]), "leaf"),
    ("1d-suffix-wrap-f64", (np.arange(6) * 1e10 + 1).astype(np.float64), "MulBackward0"),
    ("1d-long-suffix-wrap", randn(20, dtype=np.float64), "leaf"),
    # 2-d
    ("2d-ints-as-floats", f32([[1, 2], [3, 4]]), None),
    ("2d-randn", randn(3, 4), None),
    ("2d-int", np.arange(12).reshape(3, 4), None),
    ("2d-empty-rows", np.zeros((0, 3), np.float32), None),
    ("2d-empty-cols", np.zeros((3, 0), np.float32), None),
    ("2d-empty-int", np.zeros((0, 3), np.int64), None),
    ("2d-wide", randn(4, 15), None),
    ("2d-wide-sci", randn(3, 12, scale=1e6), None),
    ("2d-summary", randn(40, 40), None),
    ("2d-summary-tall", randn(1000, 2), None),
    ("2d-summary-wide", randn(2, 1000), None),
    ("2d-tiny", randn(3, 3, scale=1e-6), None),
    ("2d-bool", np.array([[True, False], [False, False]]), None),
    ("2d-nan", f32([[np.nan, 1.5], [2.0, -np.inf]]), None),
    ("2d-leaf", randn(2, 3), "leaf"),
    ("2d-mul", randn(5, 4), "MulBackward0"),
    ("2d-mul-wide", randn(3, 20), "MulBackward0"),
    ("2d-f64-mul", randn(3, 3, dtype=np.float64), "MulBackward0"),
    # 3-d and more
    ("3d-arange", np.arange(24, dtype=np.float32).reshape(2, 3, 4), None),
    ("3d-randn", randn(2, 2, 2), None),
    ("3d-int", np.arange(24).reshape(2, 3, 4), None),
    ("3d-summary", randn(20, 20, 20), None),
    ("3d-empty", np.zeros((2, 0, 3), np.float32), None),
    ("3d-mul", randn(2, 3, 4), "MulBackward0"),
    ("4d", randn(2, 2, 2, 2), None),
    ("4d-summary", randn(8, 8, 8, 8), None),
]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def torch_repr(torch, arr, autograd):
    t = torch.from_numpy(np.array(arr))  # a copy, and 0-d numpy scalars become arrays
    if autograd is None:
        return repr(t)
    t.requires_grad_()
    if autograd == "leaf":
        return repr(t)
    ops = {"MulBackward0": lambda x: x * 1, "AddBackward0": lambda x: x + 0, "PowBackward0": lambda x: x**1}
    out = ops[autograd](t)
    assert type(out.grad_fn).__name__ == autograd
    return repr(out)


def ours(arr, autograd, **kwargs):
    if autograd == "leaf":
        return format_tensor(arr, requires_grad=True, **kwargs)
    return format_tensor(arr, grad_fn=autograd, requires_grad=autograd is not None, **kwargs)


@pytest.mark.parametrize("arr, autograd", [pytest.param(a, g, id=i) for i, a, g in TORCH_CASES])
def test_matches_torch(torch, arr, autograd):
    assert ours(arr, autograd) == torch_repr(torch, arr, autograd)


@pytest.mark.parametrize("arr", [f32([1.5]), f64([1.5]), f64([]), i64([1]), f32(2.0)], ids=str)
def test_matches_torch_with_float64_default(torch, arr):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert format_tensor(arr, default_dtype="float64") == repr(torch.from_numpy(np.array(arr)))
    finally:
        torch.set_default_dtype(old)


def random_case(seed):
    """A random shape, dtype and value range, to catch cases the list above forgot."""
    return np.asarray(_random_values(seed))


def _random_values(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(0, 12, size=rng.integers(0, 4)))
    kind = rng.choice(["normal", "ints", "mixed", "int64", "bool", "f64"])
    scale = 10.0 ** rng.integers(-9, 11)
    if kind == "int64":
        return rng.integers(-(10 ** int(rng.integers(1, 12))), 10**6, size=shape)
    if kind == "bool":
        return rng.random(shape) > 0.5
    arr = rng.standard_normal(shape) * scale
    if kind == "ints":
        arr = np.round(arr)
    if kind == "mixed" and arr.size:
        arr.flat[rng.integers(0, arr.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
    return arr.astype(np.float64 if kind == "f64" else np.float32)


@pytest.mark.parametrize("seed", range(60))
def test_random_matches_torch(torch, seed):
    arr = random_case(seed)
    autograd = ["leaf", "MulBackward0", None][seed % 3] if arr.dtype.kind == "f" else None
    assert ours(arr, autograd) == torch_repr(torch, arr, autograd)
