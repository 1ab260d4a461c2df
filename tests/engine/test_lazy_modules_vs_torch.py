"""Lazy layers (engine/nn/lazy.py) against PyTorch: the first call shapes and initialises them with the same draws,
turns them into the eager class, and everything before it prints and fails as in PyTorch."""
import copy
import warnings

import numpy as np
import pytest

import engine
import engine.nn as enn

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Lazy modules are a new feature")

LAYERS = [("LazyLinear", (5,), {}, (3, 7)), ("LazyLinear", (2,), {"bias": False}, (4, 2, 6)),
          ("LazyConv1d", (4, 3), {"padding": 1}, (2, 5, 9)), ("LazyConv2d", (6, 5), {"padding": 2}, (2, 3, 8, 8)),
          ("LazyConv2d", (4, 3), {"groups": 2, "stride": 2}, (6, 9, 9)),
          ("LazyBatchNorm1d", (), {"momentum": 0.2}, (6, 4)), ("LazyBatchNorm2d", (), {}, (2, 3, 4, 4))]


def _pair(name, args, kwargs):
    return getattr(enn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_a_lazy_layer_prints_initialises_and_computes_as_torchs(name, args, kwargs, shape):
    ours, theirs = _pair(name, args, kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, repr(p)) for n, p in ours.named_parameters()] == [(n, repr(p)) for n, p in theirs.named_parameters()]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    engine.manual_seed(3)
    torch.manual_seed(3)
    y_ours, y_theirs = ours(engine.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name.removeprefix("Lazy")
    assert repr(ours) == repr(theirs)
    for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == m and np.array_equal(p.detach().numpy(), q.detach().numpy()), n  # the same draws, at the call
    for (n, p), (m, q) in zip(ours.state_dict().items(), theirs.state_dict().items()):  # running statistics too
        assert n == m and np.allclose(p.numpy(), q.numpy(), rtol=1e-6, atol=1e-7), n
    np.testing.assert_allclose(y_ours.detach().numpy(), y_theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert not hasattr(ours, "has_uninitialized_params") and not hasattr(theirs, "has_uninitialized_params")


def test_uninitialized_parameters_allow_what_torch_allows():
    ours, theirs = enn.LazyLinear(3), torch.nn.LazyLinear(3)
    for a, b in ((ours.weight, theirs.weight), (ours.bias, theirs.bias)):
        assert repr(a) == repr(b) == str(a) == "<UninitializedParameter>"
        assert (a.requires_grad, a.grad, a.is_leaf, a.is_floating_point(), tuple(a.size())) == \
               (b.requires_grad, b.grad, b.is_leaf, b.is_floating_point(), tuple(b.size()))
        assert str(a.dtype) == str(b.dtype) and repr(a.data) == repr(b.data)
    assert enn.parameter.is_lazy(ours.weight) and not enn.parameter.is_lazy(enn.Parameter(engine.ones(1)))
    twin = copy.deepcopy(ours)
    assert repr(twin.weight) == "<UninitializedParameter>" and twin.weight is not ours.weight


@pytest.mark.parametrize("use", [lambda w: w.sum(), lambda w: w + 1, lambda w: w.numel(), lambda w: w.mul_(2),
                                 lambda w: w.shape, lambda w: w.dim(), lambda w: w.detach(), lambda w: w.tolist(),
                                 lambda w: w.requires_grad_(False)])
def test_every_other_use_fails_with_torchs_error(use):
    with pytest.raises(Exception) as theirs:
        use(torch.nn.LazyLinear(3).weight)
    with pytest.raises(type(theirs.value)) as ours:
        use(enn.LazyLinear(3).weight)
    assert str(ours.value).split(" in <")[0] == str(theirs.value).split(" in <")[0]
    if "<method '" in str(theirs.value):
        assert str(theirs.value).split("<method '")[1].split("'")[0] == str(ours.value).split("<method '")[1].split("'")[0]


def test_an_optimizer_made_before_the_first_call_trains_the_shaped_parameters():
    net = enn.Sequential(enn.LazyLinear(4), enn.ReLU(), enn.LazyLinear(1))
    opt = engine.optim.SGD(net.parameters(), lr=0.1)
    loss = net(engine.ones(2, 3)).sum()
    loss.backward()
    before = net[0].weight.detach().clone()
    opt.step()
    assert net[0].weight.shape == (4, 3) and not engine.equal(net[0].weight, before)
    assert type(net[0]) is enn.Linear and type(net[0].weight) is enn.Parameter


def test_loading_a_state_dict_shapes_a_lazy_net_as_torchs_load_hook_does():
    for nn, lib in ((enn, engine), (torch.nn, torch)):
        lib.manual_seed(0)
        src = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
        src(lib.ones(3, 6))
        dst = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
        dst.load_state_dict(src.state_dict())
        assert dst[0].weight.shape == (4, 6) and repr(dst).startswith("Sequential(\n  (0): LazyLinear(in_features=0")
        x = lib.ones(2, 6)
        assert lib.equal(dst(x), src(x)) and "Linear(in_features=6, out_features=4" in repr(dst)


@pytest.mark.parametrize("build,x", [(lambda nn: nn.LazyConv2d(4, 3, groups=2), (1, 3, 8, 8)),
                                     (lambda nn: nn.LazyConv2d(4, 3), (8, 8)), (lambda nn: nn.LazyLinear(-1), (2, 3)),
                                     (lambda nn: nn.LazyBatchNorm1d(), (3,))])
def test_a_first_call_that_cannot_shape_the_layer_fails_as_torchs(build, x):
    with pytest.raises(Exception) as theirs:
        build(torch.nn)(torch.ones(*x))
    with pytest.raises(type(theirs.value)) as ours:
        build(enn)(engine.ones(*x))
    assert str(ours.value) == str(theirs.value)


def test_a_bias_registered_as_none_can_be_set_later():
    # Linear(bias=False) registers `bias` as a parameter slot, so a Parameter assigned later is the module's
    m = enn.Linear(2, 3, bias=False)
    m.bias = enn.Parameter(engine.ones(3))
    assert m.bias is m._parameters["bias"] and [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert engine.equal(m(engine.zeros(1, 2)), engine.ones(1, 3))
