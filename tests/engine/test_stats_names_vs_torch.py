"""Names programs bring past issue 21 §3 (engine/tensor_stats.py) against torch 2.13: median, nansum / nanmean, dist,
bincount, addcmul / addcdiv (and in place), movedim / moveaxis, take_along_dim, repeat_interleave, tril_indices /
triu_indices, Tensor.multinomial: values, dtypes, grad_fn names and the gradients of a loss through them; the op-table
rows' gradients against finite differences too."""
import numpy as np
import pytest

import engine as fg

torch = pytest.importorskip("torch")
rng = np.random.default_rng(2026)
DATA = rng.normal(size=(3, 4)).astype(np.float32)
TIED = np.array([[3., 1., 2., 2.], [2., 2., 5., 2.], [0.5, -1., 0.5, 4.]], np.float32)
NAN = np.array([[1., np.nan, 2., 0.], [2., 3., -1., 7.], [np.nan, np.nan, 1., 1.]], np.float32)

# (name, fn(lib, x) -> tensor or tuple of tensors, input data): each output compared, and x's gradient of a loss
CASES = [
    ("median all", lambda L, x: L.median(x), DATA),
    ("median ties", lambda L, x: x.median(), TIED),
    ("median dim", lambda L, x: L.median(x, 1), DATA),
    ("median dim ties", lambda L, x: x.median(dim=1), TIED),
    ("median dim 0 keepdim", lambda L, x: L.median(x, 0, keepdim=True), TIED),
    ("median dim -1 nan", lambda L, x: x.median(-1), NAN),
    ("median nan", lambda L, x: L.median(x), NAN),
    ("nansum", lambda L, x: L.nansum(x), NAN),
    ("nansum dim", lambda L, x: x.nansum(1), NAN),
    ("nansum dims keepdim", lambda L, x: L.nansum(x, (0, 1), keepdim=True), NAN),
    ("nanmean", lambda L, x: L.nanmean(x), NAN),
    ("nanmean dim", lambda L, x: x.nanmean(dim=0), NAN),
    ("dist", lambda L, x: L.dist(x, x.detach() * 0.5 + 1), DATA),
    ("dist p1", lambda L, x: x.dist(L.ones(4), 1), DATA),
    ("dist p3", lambda L, x: L.dist(x, L.zeros(3, 1), 3), DATA),
    ("dist inf", lambda L, x: L.dist(x, L.zeros(4), float("inf")), DATA),
    ("dist p0", lambda L, x: L.dist(x, x.detach().round()), DATA),
    ("addcmul", lambda L, x: L.addcmul(x, x * 2, x.detach() + 1, value=0.3), DATA),
    ("addcmul method", lambda L, x: x.addcmul(L.ones(4), x), DATA),
    ("addcdiv", lambda L, x: L.addcdiv(L.ones(1), x, x.detach() ** 2 + 1, value=-2), DATA),
    ("addcdiv method", lambda L, x: x.addcdiv(x, L.full((3, 4), 3.0)), DATA),
    ("movedim", lambda L, x: L.movedim(x.reshape(3, 2, 2), 0, -1), DATA),
    ("moveaxis tuple", lambda L, x: x.reshape(3, 2, 2).moveaxis((0, 1), (2, 0)), DATA),
    ("take_along_dim flat", lambda L, x: L.take_along_dim(x, L.tensor([5, 0, 11])), DATA),
    ("take_along_dim argsort", lambda L, x: L.take_along_dim(x, x.argsort(dim=1), dim=1), DATA),
    ("take_along_dim broadcast", lambda L, x: x.take_along_dim(L.tensor([[0, 3]]), 1), DATA),
    ("repeat_interleave int", lambda L, x: L.repeat_interleave(x, 2), DATA),
    ("repeat_interleave dim", lambda L, x: x.repeat_interleave(3, dim=1), DATA),
    ("repeat_interleave counts", lambda L, x: x.repeat_interleave(L.tensor([1, 0, 2]), dim=0), DATA),
    ("unfold overlapping", lambda L, x: x.unfold(1, 3, 1), DATA),
    ("unfold strided", lambda L, x: x.unfold(0, 2, 2), DATA),
    ("unfold whole", lambda L, x: x.reshape(-1).unfold(0, 12, 5), DATA),
]


@pytest.mark.parametrize("name, fn, data", CASES, ids=[c[0] for c in CASES])
def test_values_grad_fns_and_gradients_match_torch(name, fn, data):
    got = {}
    for lib in (torch, fg):
        x = lib.tensor(data, requires_grad=True)
        out = fn(lib, x)
        outs = tuple(out) if isinstance(out, tuple) else (out,)
        differentiable = [o for o in outs if o.requires_grad]
        loss = sum((o * lib.arange(o.numel()).reshape(o.shape).to(o.dtype)).nansum() for o in differentiable)
        loss.backward()
        got[lib] = (outs, x.grad, [o.grad_fn.name() if o.grad_fn is not None else None for o in outs])
    (t_outs, t_grad, t_fns), (e_outs, e_grad, e_fns) = got[torch], got[fg]
    assert e_fns == t_fns
    for t, e in zip(t_outs, e_outs):
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(e_grad.numpy(), t_grad.numpy(), rtol=1e-5, atol=1e-6)


def test_median_prints_as_torchs_return_type():
    x = TIED.tolist()
    assert repr(fg.median(fg.tensor(x), 1)) == repr(torch.median(torch.tensor(x), 1))
    assert repr(fg.tensor([4, 1, 3, 2]).median()) == repr(torch.tensor([4, 1, 3, 2]).median())


@pytest.mark.parametrize("args, kwargs", [(([0, 1, 1, 3],), {}), (([2, 2],), {"minlength": 5}),
                                          (([],), {"minlength": 2}), (([0, 1, 1],), {"weights": [0.5, 1.0, 2.0]}),
                                          (([0, 3],), {"weights": "f64"})])
def test_bincount_matches_torch(args, kwargs):
    out = []
    for lib in (torch, fg):
        kw = dict(kwargs)
        if kw.get("weights") == "f64":
            kw["weights"] = lib.tensor([1.5, 2.0], dtype=lib.float64)
        elif "weights" in kw:
            kw["weights"] = lib.tensor(kw["weights"])
        out.append(lib.bincount(lib.tensor(args[0], dtype=lib.int64), **kw))
    assert str(out[1].dtype) == str(out[0].dtype) and out[1].tolist() == out[0].tolist()


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3), (4, 2, 1), (2, 5, -1), (0, 3), (3, 4, 10), (3, 3, -5)])
def test_triangle_indices_match_torch(fn, args):
    t, e = getattr(torch, fn)(*args), getattr(fg, fn)(*args)
    assert str(e.dtype) == str(t.dtype) and e.tolist() == t.tolist()


def test_in_place_addcmul_and_addcdiv_match_torch():
    got = []
    for lib in (torch, fg):
        p = lib.tensor(DATA.copy())
        p.addcmul_(lib.ones(4) * 2, p, value=-0.1).addcdiv_(p, lib.full((3, 4), 4.0), value=0.5)
        got.append(p.numpy())
    np.testing.assert_array_equal(got[1], got[0])  # the same float32 bits: ATen's order of the products


def test_an_adam_step_written_with_addcmul_matches_torch():
    got = []
    for lib in (torch, fg):
        p, g = lib.tensor(DATA.copy()), lib.tensor(DATA[::-1].copy() * 0.1)
        m, v = lib.zeros(3, 4), lib.zeros(3, 4)
        for _ in range(3):
            m.mul_(0.9).add_(g, alpha=0.1)
            v.mul_(0.999).addcmul_(g, g, value=0.001)
            p.addcdiv_(m, v.add(1e-8), value=-0.01)  # (torch's float32 sqrt is MKL's, not correctly rounded)
        got.append(p.numpy())
    # (ATen fuses addcmul's multiply-add on its vectorised body only: see engine/ops_stats.py)
    np.testing.assert_allclose(got[1], got[0], rtol=1e-6)


def test_add_and_sub_with_alpha_are_one_node_and_one_rounding_as_in_torch():
    a, b = rng.normal(size=4096).astype(np.float32), rng.normal(size=4096).astype(np.float32)
    for call in (lambda L, x, y: x.add(y, alpha=0.1), lambda L, x, y: L.sub(x, y, alpha=-0.37),
                 lambda L, x, y: x.clone().add_(y, alpha=3), lambda L, x, y: x.clone().sub_(y, alpha=1e-3)):
        t, e = call(torch, torch.tensor(a), torch.tensor(b)), call(fg, fg.tensor(a), fg.tensor(b))
        np.testing.assert_array_equal(e.numpy(), t.numpy())  # a fused multiply-add: b * alpha is not rounded first
    x, y = fg.tensor([1.0, 2.0], requires_grad=True), fg.tensor([3.0, 4.0], requires_grad=True)
    z = x.sub(y, alpha=2)
    z.sum().backward()
    assert z.grad_fn.name() == "SubBackward0" and y.grad.tolist() == [-2.0, -2.0] and x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        fg.tensor([1, 2]).add(fg.tensor([1, 1]), alpha=0.5)


def test_multinomial_method_draws_as_torch():
    for replacement in (True, False):
        draws = [lib.tensor([0.1, 0.5, 0.4]).multinomial(2, replacement, generator=lib.Generator().manual_seed(3))
                 for lib in (torch, fg)]
        assert draws[1].tolist() == draws[0].tolist()


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.median(L.tensor([1.0]), 5), IndexError),
    (lambda L: L.median(L.zeros(2, 0), 1), IndexError),
    (lambda L: L.bincount(L.tensor([-1, 2])), RuntimeError),
    (lambda L: L.bincount(L.tensor([[1, 2]])), RuntimeError),
    (lambda L: L.bincount(L.tensor([1.5])), RuntimeError),
    (lambda L: L.bincount(L.tensor([1, 2]), weights=L.ones(3)), RuntimeError),
    (lambda L: L.dist(L.tensor([1, 2]), L.tensor([1, 2])), RuntimeError),
    (lambda L: L.addcdiv(L.ones(2), L.tensor([1, 2]), L.tensor([1, 2])), RuntimeError),
    (lambda L: L.movedim(L.zeros(2, 3), (0, 1), (1,)), RuntimeError),
    (lambda L: L.movedim(L.zeros(2, 3), (0, 0), (1, 0)), RuntimeError),
    (lambda L: L.take_along_dim(L.zeros(2, 3), L.tensor([[0]], dtype=L.int32), 1), RuntimeError),
    (lambda L: L.take_along_dim(L.zeros(2, 3), L.tensor([0]), 1), RuntimeError),
    (lambda L: L.repeat_interleave(L.zeros(3), L.tensor([1, 2])), RuntimeError),
    (lambda L: L.repeat_interleave(L.zeros(2), -1), RuntimeError),
    (lambda L: L.tril_indices(-1, 2), RuntimeError),
])
def test_wrong_arguments_raise_as_torch_raises(call, kind):
    for lib in (torch, fg):
        with pytest.raises(kind):
            call(lib)


@pytest.mark.parametrize("size", [4, 1, 3, (5,), 10])
def test_adaptive_avg_pool1d_matches_torch(size):
    x = rng.normal(size=(2, 3, 10)).astype(np.float32)
    got = []
    for lib in (torch, fg):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.adaptive_avg_pool1d(t, size)
        (y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        module = lib.nn.AdaptiveAvgPool1d(size)
        got.append((y.detach().numpy(), t.grad.numpy(), y.grad_fn.name(), repr(module), module(t[0]).shape))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-6)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)
    assert got[1][2:] == got[0][2:]


def test_strides_match_torchs_for_views():
    x = np.arange(24.0).reshape(2, 3, 4)
    for make in (lambda L, t: t, lambda L, t: t.transpose(0, 2), lambda L, t: t.expand(5, 2, 3, 4), lambda L, t: t[:, 1],
                 lambda L, t: t[..., ::2], lambda L, t: t.permute(1, 0, 2).contiguous(), lambda L, t: t.sum(1)):
        got = [make(lib, lib.tensor(x)) for lib in (torch, fg)]
        assert got[1].stride() == got[0].stride() and got[1].stride(-1) == got[0].stride(-1)


@pytest.mark.parametrize("kwargs", [{"scale_factor": 2}, {"size": (5, 7)}, {"scale_factor": (0.5, 1.5)}, {"size": 3},
                                    {"scale_factor": 3, "recompute_scale_factor": True}, {"size": (3, 4)}])
@pytest.mark.parametrize("spatial", [1, 2])
def test_nearest_interpolation_matches_torch(kwargs, spatial):
    if spatial == 1:
        kwargs = {k: (v[0] if isinstance(v, tuple) else v) for k, v in kwargs.items()}
    x = rng.normal(size=(2, 3, 5) if spatial == 1 else (2, 3, 3, 4)).astype(np.float32)
    got = []
    for lib in (torch, fg):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, **kwargs)
        (y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        up = lib.nn.Upsample(**{k: v for k, v in kwargs.items() if k != "recompute_scale_factor"})
        got.append((y.detach().numpy(), t.grad.numpy(), y.grad_fn.name(), repr(up)))
    np.testing.assert_array_equal(got[1][0], got[0][0])
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)
    assert got[1][2:] == got[0][2:]
