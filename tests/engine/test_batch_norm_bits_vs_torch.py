"""Batch norm's float32 forward and running statistics bit for bit against PyTorch's CPU kernel (train and eval,
(N, C) through the channels-last reduction and (N, C, L)/(N, C, H, W) through the contiguous one)."""
import numpy as np
import pytest

import engine
from engine import batch_norm_cpu

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def two_threads(monkeypatch):
    """PyTorch's (N, C) sums follow its thread count; the engine models the 2-thread split (this machine's, and
    torch's default on it). NOTE: an earlier test may leave torch on one thread, whose sums the engine does not model."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.setattr(batch_norm_cpu, "THREADS", 2)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("shape", [(16, 5), (3, 4), (128, 20), (8, 3, 7), (4, 3, 5, 6), (2, 16, 9, 9)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_forward_and_running_stats_are_torchs(shape, affine, monkeypatch):
    eval_x = np.random.default_rng(len(shape) * 100 + shape[0]).standard_normal(shape).astype(np.float32)
    outs = []
    for lib in (torch, engine):
        cls = lib.nn.BatchNorm1d if len(shape) < 4 else lib.nn.BatchNorm2d
        m = cls(shape[1], affine=affine, momentum=0.3)
        if affine:
            with lib.no_grad():
                m.weight.copy_(lib.tensor(np.random.default_rng(1).standard_normal(shape[1]).astype(np.float32)))
                m.bias.copy_(lib.tensor(np.random.default_rng(2).standard_normal(shape[1]).astype(np.float32)))
        got = []
        for step in range(3):
            x = (np.random.default_rng(step).standard_normal(shape) * 3 + step).astype(np.float32)
            got.append(m(lib.tensor(x)).detach().numpy().copy())
            got += [m.running_mean.numpy().copy(), m.running_var.numpy().copy()]
        m.eval()
        got.append(m(lib.tensor(eval_x)).detach().numpy().copy())
        outs.append(got)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_normalised_columns_print_as_torchs():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((32, 4)) * 5 + 2).astype(np.float32)
    ours = engine.nn.BatchNorm1d(4)(engine.tensor(x))
    theirs = torch.nn.BatchNorm1d(4)(torch.tensor(x))
    assert ours.tolist() == theirs.tolist()
    assert str(ours[:3]) == str(theirs[:3])
