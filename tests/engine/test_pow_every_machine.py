"""float32 powers are the same on every machine: numpy's float32 power is SVML's on AVX-512 CPUs (3 ** 1.5 =
5.1961527, a few ULP off). A tensor to a scalar power is ATen's kernel (engine/sleef.py: SLEEF's powf on whole blocks,
libm's double pow rounded once on the rest); a power with a tensor exponent is computed in float64 and rounded once
(engine/ops_math.py `_power`)."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import sleef


def _rounded_once(x, c):
    return (x.astype(np.float64) ** np.float64(c)).astype(np.float32)


@pytest.mark.parametrize("c", [1.5, 0.3, -1.5, 2.5, 7.0, 1 / 3])
def test_a_float32_power_is_atens_kernel(c):
    x = np.random.default_rng(0).uniform(0.01, 20, 5000).astype(np.float32)
    got = (engine.tensor(x) ** c).detach().numpy()
    head = x.size - x.size % sleef.BLOCK  # SLEEF's powf (the exponent in float32) on whole blocks, libm's on the rest
    assert got.dtype == np.float32 and np.array_equal(got[head:], _rounded_once(x[head:], c))
    assert np.array_equal(got[:head], sleef.powf_u10(x[:head], np.float32(c)))
    both = engine.pow(engine.tensor(x), engine.tensor(np.full_like(x, c))).numpy()  # tensor ** tensor
    assert np.array_equal(both, _rounded_once(x, np.float32(c)))
    base = (np.float32(c) ** engine.tensor(x[:50] / 10)).numpy()  # number ** tensor
    expected = (np.float64(np.float32(c)) ** (x[:50] / 10).astype(np.float64)).astype(np.float32)
    assert np.array_equal(base, expected, equal_nan=True)  # a negative base: nan, as in torch


def test_the_gradient_of_a_power_uses_the_same_power():
    x = engine.tensor(np.arange(1, 12, dtype=np.float32), requires_grad=True)
    (x ** 1.5).sum().backward()
    assert np.array_equal(x.grad.numpy(), (np.float32(1.5) * _rounded_once(x.detach().numpy(), 0.5)).astype(np.float32))


def test_powers_overflow_and_stay_nan_as_float32_ones_do():
    x = engine.tensor(np.array([1e30, -2.0, 0.0, np.inf], dtype=np.float32))
    assert (x ** 2.5).numpy().tolist()[0] == np.inf
    out = (x ** 0.5).numpy()
    assert np.isnan(out[1]) and out[2] == 0 and out[3] == np.inf and out.dtype == np.float32


def test_the_arange_power_pytorch_prints():
    torch = pytest.importorskip("torch")
    ours = (engine.arange(12.) ** 1.5).numpy()
    assert np.array_equal(ours, (torch.arange(12.) ** 1.5).numpy())
