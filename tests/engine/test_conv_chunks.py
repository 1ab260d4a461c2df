"""engine/ops_conv.py: a convolution whose im2col would pass COLS_CHUNK_ELEMENTS runs image by image (runs of
images); its output and gradients are the whole batch's, and the limits see one run's columns, not the batch's."""
import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import ops_conv
from engine.limits import LimitExceeded, limited

CASES = [((5, 3, 9, 9), (4, 3, 3, 3), {}), ((6, 4, 8, 8), (6, 2, 3, 3), {"groups": 2, "padding": 1, "stride": 2}),
         ((7, 2, 11), (3, 2, 4), {"dilation": 2}), ((3, 1, 6, 6), (2, 1, 2, 2), {"padding": "same"})]


def _run(xs, ws, kwargs):
    rng = np.random.default_rng(0)
    x = engine.tensor(rng.standard_normal(xs).astype(np.float32), requires_grad=True)
    w = engine.tensor(rng.standard_normal(ws).astype(np.float32), requires_grad=True)
    b = engine.tensor(rng.standard_normal(ws[0]).astype(np.float32), requires_grad=True)
    conv = F.conv2d if len(xs) == 4 else F.conv1d
    y = conv(x, w, b, **kwargs)
    (y * y).sum().backward()
    return [t.detach().numpy() for t in (y, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("xs,ws,kwargs", CASES)
@pytest.mark.parametrize("chunk", [1, 100, 300])
def test_a_batch_in_runs_of_images_is_the_whole_batchs_convolution(xs, ws, kwargs, chunk, monkeypatch):
    whole = _run(xs, ws, kwargs)
    monkeypatch.setattr(ops_conv, "COLS_CHUNK_ELEMENTS", chunk)
    for a, b in zip(_run(xs, ws, kwargs), whole):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-4)  # the weight gradient adds the runs in order


def test_the_limits_count_one_run_of_columns_not_the_batchs():
    # pytorch/examples' MNIST conv2 on 64 images: 10.6 million columns at once, 2 million by runs
    x, w = engine.zeros(64, 32, 26, 26), engine.zeros(64, 32, 3, 3)
    with limited(max_tensor_elements=4_000_000, max_live_elements=16_000_000, max_graph_nodes=100):
        assert F.conv2d(x, w).shape == (64, 64, 24, 24)
    with pytest.raises(LimitExceeded, match="max_tensor_elements"):
        with limited(max_tensor_elements=2_000_000, max_live_elements=16_000_000, max_graph_nodes=100):
            F.conv2d(x, w)  # its output alone is 2,359,296 elements


def test_against_torch_in_runs_of_images(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(ops_conv, "COLS_CHUNK_ELEMENTS", 500)
    xs, ws, kwargs = CASES[1]
    ours = _run(xs, ws, kwargs)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(xs).astype(np.float32), requires_grad=True)
    w = torch.tensor(rng.standard_normal(ws).astype(np.float32), requires_grad=True)
    b = torch.tensor(rng.standard_normal(ws[0]).astype(np.float32), requires_grad=True)
    y = torch.nn.functional.conv2d(x, w, b, **kwargs)
    (y * y).sum().backward()
    for a, t in zip(ours, (y, x.grad, w.grad, b.grad)):
        np.testing.assert_allclose(a, t.detach().numpy(), rtol=1e-4, atol=1e-4)
