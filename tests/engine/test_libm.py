"""engine/libm.py: glibc's scalar float32 logf and log1pf, bit for bit (against the C library itself where it is glibc,
through ctypes: a test's tool, never the engine's), and binary_cross_entropy, whose ATen loop calls them, against
PyTorch."""
import ctypes
import ctypes.util

import numpy as np
import pytest

import engine
import engine.nn.functional as EF
from engine.libm import log1pf_libm, logf_libm

SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 2.0 ** -30, -(2.0 ** -30), 2.0 ** -60,
                     0.41422, -0.2929, 0.2929, 3e38, -3e38, 0.5, -0.5, 1.0000001, 0.99999994], np.float32)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    every_pattern = rng.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([every_pattern, rng.uniform(0, 1, 50_000).astype(np.float32),
                           -rng.uniform(0, 1, 50_000).astype(np.float32), SPECIALS])


def _same_bits(ours, theirs):
    both_nan = np.isnan(ours) & np.isnan(theirs)
    differ = (ours.view(np.uint32) != theirs.view(np.uint32)) & ~both_nan
    assert not differ.any(), f"{differ.sum()} differ, e.g. at {ours[differ][:3]} vs {theirs[differ][:3]}"


def _glibc():
    name = ctypes.util.find_library("m")
    if name is None or "libm.so.6" not in name:
        pytest.skip("the C library here is not glibc")
    libm = ctypes.CDLL(name)
    for fn in ("logf", "log1pf"):
        getattr(libm, fn).restype = ctypes.c_float
        getattr(libm, fn).argtypes = [ctypes.c_float]
    return libm


@pytest.mark.parametrize("name,ours", [("logf", logf_libm), ("log1pf", log1pf_libm)])
def test_every_input_gives_glibcs_bits(name, ours):
    libm = _glibc()
    x = _inputs(7)
    theirs = np.array([getattr(libm, name)(float(v)) for v in x], np.float32)
    _same_bits(ours(x), theirs)


def test_shapes_and_zero_dim_arrays_keep_their_shape():
    x = np.array([[0.25, 2.0], [1e-3, 7.0]], np.float32)
    assert logf_libm(x).shape == (2, 2) and logf_libm(np.float32(2.0)).shape == ()
    assert log1pf_libm(x.T).dtype == np.float32
    np.testing.assert_allclose(logf_libm(x), np.log(x), rtol=1e-6)
    np.testing.assert_allclose(log1pf_libm(x), np.log1p(x), rtol=1e-6)


@pytest.fixture
def pytorch(torch_one_thread):
    return torch_one_thread


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy_is_pytorchs_to_the_bit(pytorch, reduction):
    rng = np.random.default_rng(3)
    p = (1 / (1 + np.exp(-rng.standard_normal((64, 300)) * 3))).astype(np.float32)
    p.reshape(-1)[:4] = [0.0, 1.0, 1e-30, 1 - 2 ** -24]  # the logs clamped at -100, and their neighbours
    y = (rng.uniform(size=p.shape) > 0.6).astype(np.float32)
    w = rng.uniform(size=(300,)).astype(np.float32)
    for weight in (None, w):
        ours = EF.binary_cross_entropy(engine.tensor(p), engine.tensor(y), None if weight is None else engine.tensor(w),
                                       reduction=reduction).numpy()
        theirs = pytorch.nn.functional.binary_cross_entropy(
            pytorch.from_numpy(p), pytorch.from_numpy(y), None if weight is None else pytorch.from_numpy(w),
            reduction=reduction).numpy()
        _same_bits(np.atleast_1d(ours), np.atleast_1d(theirs))


def test_a_single_probability_as_a_gan_prints_it(pytorch):
    # the 1-D GAN demo's loss: one decision against label 1 (log) and label 0 (log1p)
    for v in (0.5887045, 0.40283087, 0.1234567, 0.9876543):
        for label in (0.0, 1.0):
            p = np.array([[v]], np.float32)
            ours = engine.nn.BCELoss()(engine.tensor(p), engine.tensor([[label]])).item()
            theirs = pytorch.nn.BCELoss()(pytorch.tensor(p), pytorch.tensor([[label]])).item()
            assert ours == theirs, (v, label)
