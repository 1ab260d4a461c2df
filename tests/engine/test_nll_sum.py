"""engine/nll_sum.py: the vectorised cascade is the kernel's loop, bit for bit (torch itself: test_mkl_vs_torch.py)."""
import numpy as np
import pytest

from engine.nll_sum import cascade_sum, kernel_loop, nll_sums

SIZES = [1, 2, 15, 16, 17, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 4097, 65_537]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_vectorised_cascade_adds_as_the_loop(size, dtype):
    rng = np.random.default_rng(size)
    losses = (rng.standard_normal(size) * 10 ** rng.uniform(-3, 3, size)).astype(dtype)
    weights = rng.uniform(0, 2, size).astype(dtype)
    everyone = np.ones(size, bool)
    assert cascade_sum(losses).tobytes() == kernel_loop(losses, None, everyone)[0].tobytes()
    fast, slow = nll_sums(losses, weights, everyone), kernel_loop(losses, weights, everyone)
    assert [v.tobytes() for v in fast] == [v.tobytes() for v in slow]


def test_ignored_samples_move_where_a_level_passes_up():
    # a sample skipped at index 16 keeps level 0 adding past it: not the same as a zero loss there
    rng = np.random.default_rng(7)
    losses = rng.standard_normal(300).astype(np.float32) * np.float32(1e4)
    counted = np.ones(300, bool)
    counted[::16] = False
    total, count = nll_sums(losses, None, counted)
    assert count == counted.sum()
    assert total.tobytes() == kernel_loop(losses, None, counted)[0].tobytes()
    zeroed = np.where(counted, losses, np.float32(0))
    assert np.isclose(total, cascade_sum(zeroed), rtol=1e-5)
