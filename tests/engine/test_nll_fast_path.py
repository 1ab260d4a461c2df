"""ops._nll's path for the common case (no class weights, no ignored target) gives the general path's numbers
bit for bit, values and gradients, for every reduction; other ranks and ignored targets take the general path."""
import numpy as np
import pytest

import engine
from engine import ops_loss as ops


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_path_equals_the_weighted_path_with_unit_weights(reduction, dtype):
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((37, 11)).astype(dtype)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    target = rng.integers(0, 11, 37)
    ones = np.ones(11, dtype)
    fast = ops._nll(logp, target, reduction)
    general = ops._nll(logp, target, reduction, ones)
    np.testing.assert_array_equal(np.asarray(fast), np.asarray(general))
    assert np.asarray(fast).dtype == np.asarray(general).dtype
    g = np.asarray(rng.standard_normal(np.shape(fast))).astype(dtype)
    np.testing.assert_array_equal(ops._nll_vjp(g, fast, logp, target, reduction),
                                  ops._nll_vjp(g, general, logp, target, reduction, ones))


def test_ignored_targets_and_higher_ranks_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    for shape, tshape in (((8, 5), (8,)), ((2, 5, 3, 4), (2, 3, 4))):
        x = rng.standard_normal(shape).astype(np.float32)
        t = rng.integers(0, 5, tshape)
        t.reshape(-1)[::3] = -100
        for lib in (engine, torch):
            xt = lib.tensor(x.copy(), requires_grad=True)
            loss = lib.nn.functional.cross_entropy(xt, lib.tensor(t.copy()))
            loss.backward()
            if lib is engine:
                got = (float(loss.item()), xt.grad._data.copy())
            else:
                want = (float(loss.item()), xt.grad.numpy().copy())
        assert got[0] == pytest.approx(want[0], rel=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-7)
