"""nn.PixelShuffle / PixelUnshuffle, AdaptiveMaxPool1d / 2d, Softmax2d, MarginRankingLoss, TripletMarginLoss,
GaussianNLLLoss, Bilinear and RReLU and their functional forms (engine/nn/more_modules.py, functional_more.py,
engine/ops_more_modules.py) against torch 2.13: reprs, values, dtypes, shapes, the nodes the graph ends in, input
and parameter gradients, Bilinear's init and RReLU's draws under a seed, and the errors' words.

Bit for bit where the engine computes as ATen does (torch on one thread: its BLAS splits long sums between threads).
NOTE: Softmax2d's softmax along dim -3 and a p-norm with p other than 1 and 2 (triplet_margin_loss) sum in numpy's
order, not ATen's: those values are compared to a few ulps. The finite-difference checks of the new op rows are in
test_gradcheck.py / test_gradgradcheck.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine as E

torch = pytest.importorskip("torch")
rng = np.random.default_rng(21)


def R(*shape, dtype=np.float32, low=None):  # noqa: N802
    a = rng.normal(size=shape) if low is None else rng.uniform(low, 2.0, size=shape)
    return np.asarray(a, dtype=dtype)


def chain(t, depth=8):
    """The grad_fn names from the output down its first branch."""
    names, fn = [], t.grad_fn
    while fn is not None and len(names) < depth:
        names.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None and type(f).__name__ != "AccumulateGrad"]
        fn = nxt[0] if nxt else None
    return names


def run(lib, fn, arrays, grad=True):
    """fn(lib, *tensors): (outputs as arrays, dtype names, grad_fn chain, input gradients) or the error."""
    ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") if isinstance(a, np.ndarray) else a
          for a in arrays]
    try:
        out = fn(lib, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        first = outs[0]
        if first.requires_grad:
            w = np.random.default_rng(1).normal(size=tuple(first.shape)).astype(first.detach().numpy().dtype)
            (first * lib.tensor(w)).sum().backward()
    except Exception as e:  # noqa: BLE001 — the error (of the forward or the backward) is what is compared
        return e
    grads = [t.grad.numpy() if isinstance(t, lib.Tensor) and t.grad is not None else None for t in ts]
    return ([o.detach().numpy() for o in outs], [str(o.dtype) for o in outs], chain(first), grads)


def compare(fn, *arrays, exact=True, grad=True, exact_grad=None):
    theirs, ours = run(torch, fn, arrays, grad), run(E, fn, arrays, grad)
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(ours) is type(theirs) and str(ours) == str(theirs), (theirs, ours)
        return theirs
    (t_out, t_dt, t_chain, t_grads), (o_out, o_dt, o_chain, o_grads) = theirs, ours
    assert o_dt == t_dt and o_chain == t_chain, (t_dt, o_dt, t_chain, o_chain)
    for a, b in zip(t_out, o_out):
        assert a.shape == b.shape
        if exact:
            np.testing.assert_array_equal(b, a)
        else:
            np.testing.assert_allclose(b, a, rtol=2e-6, atol=2e-7)
    exact_grad = exact if exact_grad is None else exact_grad
    for a, b in zip(t_grads, o_grads):
        assert (a is None) == (b is None)
        if a is not None:
            if exact_grad:
                np.testing.assert_array_equal(b, a)
            else:
                np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-7)
    return theirs


@pytest.fixture(autouse=True)
def _torch_one_thread(torch_one_thread):
    yield


def F(lib):  # noqa: N802
    return lib.nn.functional


# ---------------------------------------------------------------- reprs
@pytest.mark.parametrize("make", [
    "L.nn.PixelShuffle(3)", "L.nn.PixelUnshuffle(2)", "L.nn.PixelShuffle('a')", "L.nn.AdaptiveMaxPool2d(3)",
    "L.nn.AdaptiveMaxPool2d((3, None), return_indices=True)", "L.nn.AdaptiveMaxPool2d([2, 4])",
    "L.nn.AdaptiveMaxPool1d(5)", "L.nn.Softmax2d()", "L.nn.MarginRankingLoss()", "L.nn.MarginRankingLoss(0.5, reduction='sum')",
    "L.nn.TripletMarginLoss(margin=0.3, p=1, swap=True)", "L.nn.GaussianNLLLoss(full=True, eps=1e-3)",
    "L.nn.Bilinear(3, 4, 5)", "L.nn.Bilinear(3, 4, 5, bias=False)", "L.nn.RReLU()", "L.nn.RReLU(0.1, 0.3, True)",
    "L.nn.Sequential(L.nn.Bilinear(2, 2, 2), L.nn.RReLU(), L.nn.PixelShuffle(2))",
])
def test_reprs_are_torchs(make):
    assert repr(eval(make, {"L": E})) == repr(eval(make, {"L": torch}))  # noqa: S307 — our own expressions


def test_attributes_are_torchs():
    for lib in (torch, E):
        m = lib.nn.TripletMarginLoss(margin=1, p=3.0, eps=1e-3, swap=True, reduction="sum")
        g = lib.nn.GaussianNLLLoss(eps=1e-2)
        pool = lib.nn.AdaptiveMaxPool1d(4, True)
        r = lib.nn.RReLU(0.2)
        values = (m.margin, m.p, m.eps, m.swap, m.reduction, g.full, g.eps, g.reduction, pool.output_size,
                  pool.return_indices, r.lower, r.upper, r.inplace, lib.nn.PixelShuffle(2).upscale_factor)
        if lib is torch:
            expected = values
    assert values == expected


# ---------------------------------------------------------------- pixel shuffle
@pytest.mark.parametrize("fn, shape, r", [
    ("pixel_shuffle", (2, 8, 3, 4), 2), ("pixel_shuffle", (9, 2, 3), 3), ("pixel_shuffle", (2, 3, 4, 2, 1), 2),
    ("pixel_shuffle", (0, 4, 2, 2), 2), ("pixel_shuffle", (1, 4, 2, 2), 1), ("pixel_unshuffle", (2, 2, 4, 6), 2),
    ("pixel_unshuffle", (3, 6, 9), 3), ("pixel_unshuffle", (2, 2, 1, 4, 4), 4),
])
def test_pixel_shuffle_is_torchs(fn, shape, r):
    # (torch 2.13's backward of an empty batch fails its own shape check: no gradient taken there)
    compare(lambda L, t: getattr(F(L), fn)(t, r), R(*shape), grad=0 not in shape)
    compare(lambda L, t: getattr(F(L), fn)(t, r), rng.integers(-5, 5, shape))  # any dtype: it only moves elements
    module = "PixelShuffle" if fn == "pixel_shuffle" else "PixelUnshuffle"
    compare(lambda L, t: getattr(L.nn, module)(r)(t), R(*shape, dtype=np.float64), grad=0 not in shape)


def test_pixel_unshuffle_undoes_pixel_shuffle():
    x = E.randn(2, 12, 3, 5)
    assert E.equal(E.nn.functional.pixel_unshuffle(E.nn.functional.pixel_shuffle(x, 2), 2), x)


# ---------------------------------------------------------------- adaptive max pooling
@pytest.mark.parametrize("shape, size", [
    ((2, 3, 7, 5), 3), ((2, 3, 7, 5), (3, None)), ((2, 3, 7, 5), (None, None)), ((2, 3, 7, 5), [2, 4]),
    ((3, 7, 5), (4, 2)), ((1, 2, 4, 3), (9, 7)), ((1, 1, 3, 8), (1, 1)), ((2, 2, 5, 5), (0, 2)), ((0, 3, 4, 5), 2),
    ((2, 6, 4), (5, 11)),
])
def test_adaptive_max_pool2d_is_torchs(shape, size):
    compare(lambda L, t: F(L).adaptive_max_pool2d(t, size, return_indices=True), R(*shape))
    compare(lambda L, t: L.nn.AdaptiveMaxPool2d(size)(t), R(*shape, dtype=np.float64))


@pytest.mark.parametrize("shape, size", [((2, 3, 7), 3), ((3, 7), (4,)), ((2, 3, 4), 9), ((1, 2, 9), 1), ((2, 2, 5), 0),
                                         ((1, 2, 3000), 2)])
def test_adaptive_max_pool1d_is_torchs(shape, size):
    compare(lambda L, t: F(L).adaptive_max_pool1d(t, size, True), R(*shape))
    compare(lambda L, t: L.nn.AdaptiveMaxPool1d(size)(t), R(*shape))


@pytest.mark.parametrize("seed", range(6))
def test_adaptive_max_pool_ties_and_nans_pick_atens_element(seed):
    """Equal values (and NaNs): the gradient and the index go to the element ATen's scan keeps."""
    gen = np.random.default_rng(seed)
    h, w = (int(v) for v in gen.integers(2, 9, 2))
    x = gen.integers(-2, 3, size=(2, 3, h, w)).astype(np.float32)
    if seed % 2:
        x[gen.random(x.shape) < 0.15] = np.nan
    size = tuple(int(v) for v in gen.integers(1, 10, 2))
    compare(lambda L, t: F(L).adaptive_max_pool2d(t, size, return_indices=True), x)


@pytest.mark.parametrize("seed", range(4))
def test_the_two_window_loops_keep_the_same_elements(seed):
    """Few long windows are reduced one window at a time, many short ones one offset at a time: the same picks."""
    from engine.ops_more_modules import _window_by_offset, _window_by_window, adaptive_bounds

    gen = np.random.default_rng(seed)
    for _ in range(50):
        length, count = (int(v) for v in gen.integers(1, 15, 2))
        v = gen.integers(-2, 3, size=(3, length)).astype(np.float32)
        v[gen.random(v.shape) < 0.2] = [np.nan, -0.0, -np.inf][seed % 3]
        starts, ends = adaptive_bounds(length, count)
        for key in (None, gen.integers(0, 4, size=v.shape)):
            a, b = _window_by_offset(v, starts, ends, key), _window_by_window(v, starts, ends, key)
            np.testing.assert_array_equal(a[0].view(np.int32), b[0].view(np.int32))
            np.testing.assert_array_equal(a[1], b[1])
            if key is not None:
                np.testing.assert_array_equal(a[2], b[2])


# ---------------------------------------------------------------- Softmax2d
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5), (1, 1, 2, 2)])
def test_softmax2d_is_torchs(shape):
    compare(lambda L, t: L.nn.Softmax2d()(t), R(*shape), exact=False)


# ---------------------------------------------------------------- losses
@pytest.mark.parametrize("shapes, kwargs", [
    (((5,), (5,), (5,)), {}), (((5,), (5,), (5,)), {"margin": 0.5, "reduction": "sum"}),
    (((4, 3), (4, 3), (4, 3)), {"reduction": "none", "margin": 1}), (((4, 3), (1, 3), (4, 1)), {"margin": -0.2}),
    (((0,), (0,), (0,)), {}), (((), (), ()), {"reduction": "none"}),
])
def test_margin_ranking_loss_is_torchs(shapes, kwargs):
    a, b = R(*shapes[0]), R(*shapes[1])
    y = np.asarray(np.sign(R(*shapes[2])), dtype=np.float32)
    compare(lambda L, p, q, t: F(L).margin_ranking_loss(p, q, t, **kwargs), a, b, y)
    compare(lambda L, p, q, t: L.nn.MarginRankingLoss(**kwargs)(p, q, t), a, b, np.asarray(y, dtype=np.int64))


# (with swap the gradient goes through MinimumBackward0, whose share of g is in g's dtype: bit for bit too)
@pytest.mark.parametrize("shape, kwargs, exact", [
    ((4, 6), {}, True), ((4, 6), {"swap": True}, True), ((4, 6), {"p": 1.0, "reduction": "sum"}, True),
    ((4, 6), {"p": 3, "eps": 1e-3, "reduction": "none"}, False), ((6,), {"margin": 0.5}, True),
    ((2, 3, 4), {"swap": True, "reduction": "none"}, True), ((0, 4), {}, True), ((), {}, True),
])
def test_triplet_margin_loss_is_torchs(shape, kwargs, exact):
    a, p, n = R(*shape), R(*shape), R(*shape)
    how = {"exact": bool(exact), "exact_grad": exact is True}
    compare(lambda L, x, y, z: F(L).triplet_margin_loss(x, y, z, **kwargs), a, p, n, **how)
    compare(lambda L, x, y, z: L.nn.TripletMarginLoss(**kwargs)(x, y, z), a, p, n, **how)


@pytest.mark.parametrize("ishape, vshape, kwargs", [
    ((4, 3), (4, 3), {}), ((4, 3), (4,), {"full": True}), ((4, 3), (4, 1), {"reduction": "sum"}),
    ((4, 3), (1, 3), {"reduction": "none"}), ((2, 4, 3), (2, 1, 3), {"eps": 0.5}), ((3,), (1,), {}),
    ((3,), (), {"full": True}), ((2, 4, 3), (2, 4), {"reduction": "none", "full": True}),
])
def test_gaussian_nll_loss_is_torchs(ishape, vshape, kwargs):
    x, t, v = R(*ishape), R(*ishape), R(*vshape, low=0.05)
    v.reshape(-1)[:1] = 1e-9  # below eps: clamped, with no gradient through the clamp
    compare(lambda L, i, tt, vv: F(L).gaussian_nll_loss(i, tt, vv, **kwargs), x, t, v)
    compare(lambda L, i, tt, vv: L.nn.GaussianNLLLoss(**kwargs)(i, tt, vv), x, t, v)


def test_gaussian_nll_loss_with_a_float_variance_is_torchs():
    compare(lambda L, i, t: F(L).gaussian_nll_loss(i, t, 0.25, full=True), R(5, 2), R(5, 2))


# ---------------------------------------------------------------- Bilinear
@pytest.mark.parametrize("seed, in1, in2, out, bias, dtype", [
    (0, 3, 4, 5, True, None), (7, 20, 30, 40, True, None), (3, 6, 2, 1, False, None), (1, 33, 17, 9, True, "float64"),
])
def test_bilinear_weights_are_torchs_under_a_seed(seed, in1, in2, out, bias, dtype):
    made = []
    for lib in (torch, E):
        lib.manual_seed(seed)
        m = lib.nn.Bilinear(in1, in2, out, bias=bias, dtype=None if dtype is None else getattr(lib, dtype))
        made.append([p.detach().numpy() for p in m.parameters()] + [lib.randn(3).numpy()])  # and the generator after
    for a, b in zip(*made):
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("batch, in1, in2, out, bias", [
    ((4,), 3, 4, 5, True), ((16,), 20, 30, 40, True), ((2, 3), 6, 2, 3, False), ((), 5, 3, 2, True),
    ((7,), 12, 450, 2, True), ((9,), 25, 21, 12, False), ((0,), 3, 4, 5, True), ((5,), 1, 1, 1, True),
])
def test_bilinear_is_torchs(batch, in1, in2, out, bias):
    arrays = [R(*batch, in1), R(*batch, in2), R(out, in1, in2)] + ([R(out)] if bias else [])
    compare(lambda L, *ts: F(L).bilinear(*ts), *arrays)


def test_bilinear_module_gradients_are_torchs():
    x1, x2 = R(8, 5), R(8, 3)
    grads = []
    for lib in (torch, E):
        lib.manual_seed(4)
        m = lib.nn.Bilinear(5, 3, 7)
        loss = m(lib.tensor(x1), lib.tensor(x2)).tanh().mean()
        loss.backward()
        grads.append((loss.item(), m.weight.grad.numpy(), m.bias.grad.numpy(), chain(loss)))
    (l1, w1, b1, c1), (l2, w2, b2, c2) = grads
    assert l1 == l2 and c1 == c2
    np.testing.assert_array_equal(w2, w1)
    np.testing.assert_array_equal(b2, b1)


def test_bilinear_integers_are_torchs():
    a = [rng.integers(-3, 4, s) for s in ((2, 3), (2, 4), (5, 3, 4), (5,))]
    compare(lambda L, *ts: F(L).bilinear(*ts), *a)


# ---------------------------------------------------------------- RReLU
@pytest.mark.parametrize("seed, shape, dtype, bounds", [
    (0, (5, 7), np.float32, ()), (3, (4, 3, 8), np.float64, (0.05, 0.6)), (11, (300,), np.float32, (0.2, 0.2)),
    (2, (0,), np.float32, ()), (5, (), np.float32, (-1.0, 2)),
])
def test_rrelu_training_draws_are_torchs(seed, shape, dtype, bounds):
    def fn(L, t):
        L.manual_seed(seed)
        out = F(L).rrelu(t, *bounds, training=True)
        return out, L.rand(4, dtype=L.float64)  # the generator's state after the draws, too
    compare(fn, R(*shape, dtype=dtype))
    compare(lambda L, t: L.nn.RReLU(*bounds).eval()(t), R(*shape, dtype=dtype))


def test_rrelu_module_trains_as_torchs():
    x = R(6, 5)
    outs = []
    for lib in (torch, E):
        lib.manual_seed(9)
        net = lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.RReLU(0.1, 0.4))
        t = lib.tensor(x)
        y = net(t)
        y.sum().backward()
        net.eval()
        outs.append((y.detach().numpy(), net[0].weight.grad.numpy(), net(t).detach().numpy(), chain(y, 1)))
    for a, b in zip(*outs):
        if isinstance(a, list):
            assert a == b
        else:
            np.testing.assert_array_equal(b, a)


def test_rrelu_in_place_is_torchs():
    def fn(L, t):
        L.manual_seed(1)
        y = t * 1
        out = F(L).rrelu_(y, training=True)
        return out, y
    theirs = compare(fn, R(4, 4))
    assert theirs[2][0] == "RreluWithNoiseBackward1"
    compare(lambda L, t: L.nn.RReLU(inplace=True).eval()(t * 1), R(3, 3))


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("call", [
    "F.pixel_shuffle(L.ones(1, 8, 2, 3), 3)", "F.pixel_shuffle(L.ones(1, 8, 2, 3), 0)",
    "F.pixel_shuffle(L.ones(4, 2), 2)", "F.pixel_shuffle(L.ones(1, 8, 2, 3), 2.0)",
    "F.pixel_shuffle(L.ones(1, 8, 2, 3), True)", "F.pixel_shuffle(L.ones(1, 8, 2, 3), 3037000500)",
    "F.pixel_shuffle(L.ones(1, 8, 2, 3), 2 ** 64)", "F.pixel_shuffle('x', 2)", "L.nn.PixelShuffle(2.5)(L.ones(1, 8, 2, 2))",
    "F.pixel_unshuffle(L.ones(1, 1, 4, 6), 4)", "F.pixel_unshuffle(L.ones(1, 1, 4, 6), 3)",
    "F.pixel_unshuffle(L.ones(1, 1, 4, 6), -1)", "F.pixel_unshuffle(L.ones(3, 3), 1)",
    "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), (2,))", "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), -1)",
    "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), 2.5)", "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), '2')",
    "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), (2, 2.0))", "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), True)",
    "F.adaptive_max_pool2d(L.ones(7, 5), 2)", "F.adaptive_max_pool2d(L.ones(7, 5), (2, 2))",
    "F.adaptive_max_pool2d(L.ones(3, 0, 5), 2)", "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5, dtype=L.int64), 2)",
    "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), [True, 2])", "F.adaptive_max_pool2d(L.ones(2, 3, 4, 5), 2 ** 63)",
    "F.adaptive_max_pool2d('x', 3)", "F.adaptive_max_pool2d(L.ones(2, 3, 4), None)",
    "F.adaptive_max_pool1d(L.ones(3, 7), (3, 4))", "F.adaptive_max_pool1d(L.ones(7), 3)",
    "F.adaptive_max_pool1d(L.ones(2, 3, 7), 3.0)", "F.adaptive_max_pool1d(L.ones(2, 3, 0), 3)",
    "F.adaptive_max_pool1d(L.ones(2, 3, 7), -2)", "F.adaptive_max_pool1d('x', 3)",
    "L.nn.Softmax2d()(L.ones(2, 3))", "L.nn.Softmax2d()(L.ones(3, 4, 5, dtype=L.int64))", "L.nn.Softmax2d()('x')",
    "F.margin_ranking_loss(L.ones(4), L.ones(4), L.ones(3))", "F.margin_ranking_loss(L.ones(4), L.ones(4), L.ones(2, 4))",
    "F.margin_ranking_loss(L.ones(4), L.ones(4), L.ones(4), reduction='foo')",
    "F.margin_ranking_loss(L.ones(4), L.ones(4), L.ones(4), margin='x')", "F.margin_ranking_loss(L.ones(4), L.ones(4), 'y')",
    "F.triplet_margin_loss(L.ones(3, 4), L.ones(4), L.ones(3, 4))", "F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 5), L.ones(3, 4))",
    "F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4), L.ones(3, 4), margin=0)",
    "F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4), L.ones(3, 4), margin='a')",
    "F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4), L.ones(3, 4), p='x')",
    "F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4), L.ones(3, 4), swap=1)",
    "F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4), 'n')", "L.nn.TripletMarginLoss(margin=-1)",
    "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), L.ones(4, 2))", "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), -1.0)",
    "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), -L.ones(4, 3))", "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), 1)",
    "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), 'v')", "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), L.ones(1, 1))",
    "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), L.ones(4, 3), reduction='bad')",
    "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), L.ones(4, 3), eps='a')",
    "F.gaussian_nll_loss(L.ones(4, 3), L.ones(4, 3), L.ones(4, 3, dtype=L.int64))",
    "F.gaussian_nll_loss('i', L.ones(4, 3), L.ones(4, 3))", "F.gaussian_nll_loss(L.ones(4, 3), L.ones(5, 3), L.ones(4, 3))",
    "F.bilinear(L.ones(2, 3), L.ones(4), L.ones(5, 3, 4))", "F.bilinear(L.ones(2, 3), L.ones(3, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 4, 4))", "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 5))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4), L.ones(4))", "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4, 1))", "F.bilinear(L.ones(2, 3, dtype=L.float64), L.ones(2, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4), L.ones(5, dtype=L.int64))", "F.bilinear('a', L.ones(2, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(()), L.ones(()), L.ones(5, 3, 4))", "F.bilinear(L.ones(2, 0), L.ones(2, 4), L.ones(5, 0, 4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4), L.ones(()))",
    "L.nn.Bilinear(0, 4, 5)", "L.nn.Bilinear(-1, 4, 5)", "L.nn.Bilinear(3.0, 4, 5)",
    "L.nn.RReLU(0.5, 0.1)(L.ones(2))", "F.rrelu(L.ones(2), 'a')", "F.rrelu(L.ones(2, dtype=L.int64))",
    "F.rrelu(L.ones(2, dtype=L.int64), training=True)", "F.rrelu('x')", "F.rrelu(L.ones(2), training=1)",
    "F.rrelu(L.ones(2, dtype=L.float16), training=True)", "F.rrelu(L.ones(2, requires_grad=True), inplace=True)",
])
def test_errors_are_torchs(call):
    errors = []
    for lib in (torch, E):
        with pytest.raises(Exception) as caught:  # noqa: PT011 — the error itself is what is compared
            eval(call, {"L": lib, "F": lib.nn.functional})  # noqa: S307 — our own test expressions
        errors.append(caught.value)
    assert type(errors[1]).__name__ == type(errors[0]).__name__ and str(errors[1]) == str(errors[0]), errors


def test_the_legacy_reduction_arguments_warn_as_torchs():
    for lib in (torch, E):
        with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
            out = lib.nn.functional.margin_ranking_loss(lib.ones(3), lib.zeros(3), lib.ones(3), size_average=False)
        assert out.item() == 0.0
