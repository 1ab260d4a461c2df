"""F.interpolate's modes and nn.Upsample / UpsamplingBilinear2d (engine/ops_upsample.py, ops_stats.py) against PyTorch
2.13: outputs and gradients bit for bit over sizes, scale factors (up and down), align_corners both ways,
recompute_scale_factor, channel counts under and over 8 (ATen's channels-last kernel takes 8 at a time) and outputs
past 128 rows + columns (its generic kernel). Finite differences, gradients of gradients, torch's errors."""
import numpy as np
import pytest

import engine as E
from engine.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")



@pytest.fixture(autouse=True)
def torch_on_two_threads():
    # NOTE: on one thread torch's bilinear takes its channels-last kernel at every size (at two or more, outputs past
    # 128 rows + columns take the generic one, which flowgrad follows): another test may have left torch on one
    previous = torch.get_num_threads()
    torch.set_num_threads(max(previous, 2))
    yield
    torch.set_num_threads(previous)


SIZES = [{"scale_factor": 2}, {"scale_factor": 1.7}, {"scale_factor": 0.6}, {"size": "odd"}, {"size": "same"},
         {"scale_factor": 2.5, "recompute_scale_factor": True}, {"size": "large"}]
SHAPES = {3: [(2, 3, 5), (1, 2, 9), (1, 9, 4)], 4: [(2, 3, 5, 7), (1, 1, 3, 9), (1, 2, 4, 4), (2, 9, 4, 5)]}
MODES = [("linear", 3), ("bilinear", 4), ("bicubic", 4)]


def _resize(shape, options):
    kw = dict(options)
    if kw.get("size") == "odd":
        kw["size"] = (11, 6)[:len(shape) - 2]
    elif kw.get("size") == "same":
        kw["size"] = tuple(shape[2:])
    elif kw.get("size") == "large":  # past 128 rows + columns (and a thousand taps into each input for linear)
        kw["size"] = (70, 71)[2 - len(shape):] if len(shape) == 4 else (1000,)
    return kw


def _pair(mode, shape, align_corners, options, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x_t, x_e = torch.tensor(x, requires_grad=True), E.tensor(x, requires_grad=True)
    kw = _resize(shape, options)
    out_t = torch.nn.functional.interpolate(x_t, mode=mode, align_corners=align_corners, **kw)
    out_e = E.nn.functional.interpolate(x_e, mode=mode, align_corners=align_corners, **kw)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(out_t.shape)).astype(np.float32)
    out_t.backward(torch.tensor(g))
    out_e.backward(E.tensor(g))
    return x_t, x_e, out_t, out_e


@pytest.mark.parametrize("options", SIZES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode, ndim", MODES + [("nearest", 3), ("nearest", 4)])
def test_values_and_gradients_are_torchs(mode, ndim, align_corners, options):
    if mode == "nearest" and align_corners:
        pytest.skip("nearest takes no align_corners")
    for shape in SHAPES[ndim]:
        x_t, x_e, out_t, out_e = _pair(mode, shape, None if mode == "nearest" else align_corners, options)
        assert type(out_e.grad_fn).__name__ == type(out_t.grad_fn).__name__
        assert tuple(out_e.shape) == tuple(out_t.shape)
        assert np.array_equal(out_e.detach().numpy(), out_t.detach().numpy()), (shape, options)
        assert np.array_equal(x_e.grad.numpy(), x_t.grad.numpy()), (shape, options)


@pytest.mark.parametrize("mode, ndim", MODES)
def test_finite_differences_and_gradients_of_gradients(mode, ndim):
    shape = SHAPES[ndim][0][:2] + (4,) * (ndim - 2)
    x = E.tensor(np.random.default_rng(3).standard_normal(shape), dtype=E.float64, requires_grad=True)
    for align_corners in (False, True):
        def f(x, align_corners=align_corners):
            return E.nn.functional.interpolate(x, scale_factor=1.6, mode=mode, align_corners=align_corners)
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


def test_the_gradient_of_a_gradient_is_torchs_node():
    x_t = torch.randn(1, 1, 3, 3, dtype=torch.float64, requires_grad=True)
    x_e = E.tensor(x_t.detach().numpy(), requires_grad=True)
    grads = []
    for lib, x in ((torch, x_t), (E, x_e)):
        y = lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")
        g, = lib.autograd.grad((y ** 2).sum(), x, create_graph=True)
        grads.append((type(g.grad_fn).__name__, g.sum()))
        g.sum().backward()
    assert grads[0][0] == grads[1][0]
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=1e-12)


def test_modules_are_torchs():
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 5)).astype(np.float32)
    for name, kw in (("Upsample", {"scale_factor": 2, "mode": "bilinear", "align_corners": False}),
                     ("Upsample", {"size": (4, 7), "mode": "bicubic"}), ("UpsamplingBilinear2d", {"scale_factor": 2}),
                     ("UpsamplingNearest2d", {"size": (6, 6)})):
        ours, theirs = getattr(E.nn, name)(**kw), getattr(torch.nn, name)(**kw)
        assert repr(ours) == repr(theirs)
        assert np.array_equal(ours(E.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())


@pytest.mark.parametrize("mode, shape, kw", [
    ("bilinear", (1, 1, 4), {"scale_factor": 2}), ("linear", (1, 1, 4, 4), {"scale_factor": 2}),
    ("bicubic", (1, 1, 4), {"size": 3}), ("nearest", (1, 1, 4), {"scale_factor": 2, "align_corners": True}),
    ("bilinear", (1, 1, 4, 4), {"size": (3, 3), "scale_factor": 2}), ("bilinear", (1, 1, 4, 4), {}),
])
def test_errors_are_torchs(mode, shape, kw):
    with pytest.raises(Exception) as theirs:
        torch.nn.functional.interpolate(torch.zeros(shape), mode=mode, **kw)
    with pytest.raises(Exception) as ours:
        E.nn.functional.interpolate(E.zeros(shape), mode=mode, **kw)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
