"""engine/tensor_extra_names.py against torch 2.13: erfc, erfinv, kthvalue, mode, aminmax, msort, gcd, lcm, isin,
vander — values and indices (ties and NaN included: which copy a pick returns is ATen's), dtypes, grad_fn names,
gradients, and the errors' words."""
from __future__ import annotations

import numpy as np
import pytest

import engine as fg

torch = pytest.importorskip("torch")
rng = np.random.default_rng(21)


def _both(fn, *arrays, grad=True):
    """fn on engine and torch tensors made from `arrays` (float ones requiring grad): (engine result, torch result,
    engine leaves, torch leaves)."""
    out = []
    for lib in (fg, torch):
        leaves = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out.append((fn(lib, *leaves), leaves))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def _same(a, b):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert type(a.grad_fn).__name__ == (type(b.grad_fn).__name__ if b.grad_fn is not None else "NoneType")


WITH_TIES = rng.integers(0, 4, (4, 23)).astype(np.float32)
WITH_NAN = WITH_TIES.copy()
WITH_NAN[rng.random(WITH_NAN.shape) < 0.2] = np.nan


@pytest.mark.parametrize("x", [WITH_TIES, WITH_NAN, rng.integers(0, 3, (3, 40)).astype(np.float32),
                               rng.normal(size=(2, 3, 5)).astype(np.float32)], ids=["ties", "nan", "long", "3d"])
@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, True), (1, False)])
def test_kthvalue_and_mode_pick_what_torch_picks(x, dim, keepdim):
    for k in (1, 2, x.shape[dim] // 2 + 1, x.shape[dim]):
        e, t, _, _ = _both(lambda L, a, k=k: L.kthvalue(a, k, dim, keepdim), x)
        _same(e.values, t.values)
        _same(e.indices, t.indices)
    e, t, _, _ = _both(lambda L, a: a.mode(dim, keepdim=keepdim), x)
    _same(e.values, t.values)
    _same(e.indices, t.indices)
    assert repr(e).replace("grad_fn=<ModeBackward0>", "") == repr(t).replace("grad_fn=<ModeBackward0>", "")


def test_mode_on_many_random_rows_is_torch_s_including_long_rows_and_nan():
    x = rng.integers(0, 6, (200, 70)).astype(np.float64)
    x[rng.random(x.shape) < 0.05] = np.nan
    e, t = fg.mode(fg.tensor(x), 1), torch.mode(torch.tensor(x), 1)
    np.testing.assert_array_equal(e.indices.numpy(), t.indices.numpy())
    np.testing.assert_array_equal(e.values.numpy(), t.values.numpy())
    ints = rng.integers(-3, 3, (50, 30))
    e, t = fg.mode(fg.tensor(ints), 0), torch.mode(torch.tensor(ints), 0)
    _same(e.values, t.values)
    _same(e.indices, t.indices)


@pytest.mark.parametrize("fn", [
    lambda L, a: L.kthvalue(a, 3, 1).values.sum() + L.mode(a, 0).values.sum(),
    lambda L, a: L.aminmax(a).min * 2 + L.aminmax(a, dim=1, keepdim=True).max.sum(),
    lambda L, a: (L.erfc(a) * L.erfinv(a / 4)).sum() + L.msort(a)[0].sum(),
])
def test_gradients_are_torch_s(fn):
    x = rng.integers(-3, 4, (4, 5)).astype(np.float32)  # ties everywhere: the shares and picks are torch's
    e, t, (ex,), (tx,) = _both(fn, x)
    e.backward()
    t.backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erfc_and_erfinv_are_bit_for_bit(dtype):
    x = np.concatenate([rng.uniform(-6, 6, 5000), [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    p = np.concatenate([rng.uniform(-1, 1, 5000), [1.0, -1.0, 1.5, -2.0, 0.0, np.nan]]).astype(dtype)
    for name, a in (("erfc", x), ("erfinv", p)):
        for method in (False, True):
            e = getattr(fg.tensor(a), name)() if method else getattr(fg, name)(fg.tensor(a))
            t = getattr(torch, name)(torch.tensor(a))
            np.testing.assert_array_equal(e.numpy(), t.numpy())
            assert str(e.dtype) == str(t.dtype)
    for lib in (fg, torch):
        assert str(lib.special.erfc(lib.tensor([1, 2])).dtype) == "torch.float32"
    w = fg.tensor(p[:10].copy())
    w.erfinv_()
    np.testing.assert_array_equal(w.numpy(), torch.erfinv(torch.tensor(p[:10])).numpy())


def test_aminmax_and_msort():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    for kwargs in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
        e, t, _, _ = _both(lambda L, a, kw=kwargs: L.aminmax(a, **kw), x)
        _same(e.min, t.min)
        _same(e.max, t.max)
    e, t, _, _ = _both(lambda L, a: L.msort(a), x)
    _same(e, t)
    assert repr(fg.aminmax(fg.tensor([1.0, 3.0]))) == repr(torch.aminmax(torch.tensor([1.0, 3.0])))


def test_gcd_lcm_isin_vander():
    a = np.array([12, -18, 0, 7])
    b = np.array([8, 6, 0, -21], np.int32)
    for fn in ("gcd", "lcm"):
        _same(getattr(fg, fn)(fg.tensor(a), fg.tensor(b)), getattr(torch, fn)(torch.tensor(a), torch.tensor(b)))
        _same(getattr(fg.tensor(b), fn)(fg.tensor(3)), getattr(torch.tensor(b), fn)(torch.tensor(3)))
    e, t = fg.tensor(a), torch.tensor(a)
    e.gcd_(fg.tensor(b)), t.gcd_(torch.tensor(b))
    _same(e, t)
    for args in ((a, b), (a, 7)):
        for invert in (False, True):
            e = fg.isin(fg.tensor(args[0]), fg.tensor(args[1]) if isinstance(args[1], np.ndarray) else args[1], invert=invert)
            t = torch.isin(torch.tensor(args[0]), torch.tensor(args[1]) if isinstance(args[1], np.ndarray) else args[1],
                           invert=invert)
            _same(e, t)
    _same(fg.isin(7, fg.tensor(a)), torch.isin(7, torch.tensor(a)))
    for x in (np.array([1.5, -2.0, 3.0], np.float32), np.array([1, 2, 3], np.int8)):
        for kwargs in ({}, {"N": 4}, {"N": 1}, {"N": 0}, {"increasing": True}, {"N": 5, "increasing": True}):
            e, t, _, _ = _both(lambda L, v, kw=kwargs: L.vander(v, **kw), x)
            np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
            assert str(e.dtype) == str(t.dtype) and e.shape == t.shape
    e, t, _, _ = _both(lambda L, v: L.vander(v), np.array([1.5, -2.0], np.float32))
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "FlipBackward0"


ERRORS = [
    lambda L: L.kthvalue(L.tensor([True, False]), 1),
    lambda L: L.kthvalue(L.tensor([3.0, 1.0]), 3),
    lambda L: L.kthvalue(L.tensor([3.0, 1.0]), 0),
    lambda L: L.kthvalue(L.ones(2, 0), 1, 1),
    lambda L: L.kthvalue(L.tensor(3.0), 1, dim=1),
    lambda L: L.mode(L.tensor([])),
    lambda L: L.mode(L.ones(2, 0), 1),
    lambda L: L.aminmax(L.tensor([])),
    lambda L: L.aminmax(L.ones(2, 0), dim=1),
    lambda L: L.gcd(L.tensor([1.0]), L.tensor([2.0])),
    lambda L: L.lcm(L.tensor([1]), L.tensor([2.5])),
    lambda L: L.vander(L.ones(2, 2)),
    lambda L: L.vander(L.ones(2), N=-1),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_torch_s(case):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[case](fg)
    assert str(ours.value) == str(theirs.value)


def test_zero_dim_inputs():
    for lib_results in zip(*(
            (L.kthvalue(L.tensor(3.0), 1), L.mode(L.tensor(5.0)), L.aminmax(L.tensor(2.0))) for L in (fg, torch))):
        assert repr(lib_results[0]) == repr(lib_results[1])


GAMMA_INPUTS = np.concatenate([rng.uniform(-8, 30, 4000), [0.0, -0.0, -1.0, -2.0, 1.0, 2.0, np.inf, -np.inf, np.nan,
                                                             1e-8, 1e20, -2.5, 9.99, 10.0, 10.01]])


def test_digamma_is_bit_for_bit_in_float32_and_the_family_within_ulps():
    x32 = GAMMA_INPUTS.astype(np.float32)
    e, t = fg.digamma(fg.tensor(x32)), torch.digamma(torch.tensor(x32))
    np.testing.assert_array_equal(e.numpy(), t.numpy())  # ATen's float arithmetic, glibc's logf
    for dtype, rtol in ((np.float32, 3e-7), (np.float64, 1e-13)):
        x = GAMMA_INPUTS.astype(dtype)
        for name in ("lgamma", "digamma"):
            e, t = getattr(fg, name)(fg.tensor(x)), getattr(torch, name)(torch.tensor(x))
            assert str(e.dtype) == str(t.dtype)
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=1e-6)  # (absolute near roots)
        for n in (0, 1, 2, 4):
            # (float32 near the negative poles: ATen's float arithmetic loses digits the float64 one keeps)
            y = x[:300] if dtype == np.float64 else np.abs(x[:300])
            e, t = fg.polygamma(n, fg.tensor(y)), torch.polygamma(n, torch.tensor(y))
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol * 10, atol=1e-6)


def test_the_gamma_family_s_nodes_gradients_and_names():
    x = np.array([0.7, 1.5, 3.25, -0.5], np.float32)

    def fn(L, a):
        return (L.lgamma(a) + a.digamma() * 2 + L.polygamma(2, a) + L.special.gammaln(a) + L.special.psi(a)
                + L.special.polygamma(1, a)).sum()
    e, t, (ex,), (tx,) = _both(fn, x)
    e.backward()
    t.backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-5)
    for name in ("lgamma", "digamma"):
        e, t, _, _ = _both(lambda L, a, nm=name: getattr(L, nm)(a), x)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    e, t, _, _ = _both(lambda L, a: L.polygamma(1, a), x)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "PolygammaBackward0"
    for lib in (fg, torch):
        assert str(lib.lgamma(lib.tensor([1, 2])).dtype) == "torch.float32"
    w, v = fg.tensor(x.copy()), torch.tensor(x.copy())
    w.lgamma_(), v.lgamma_()
    np.testing.assert_allclose(w.numpy(), v.numpy(), rtol=3e-7)


@pytest.mark.parametrize("call", [lambda L: L.polygamma(-1, L.ones(2)), lambda L: L.polygamma(1.5, L.ones(2))])
def test_polygamma_s_errors_are_torch_s(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(fg)
    assert str(ours.value) == str(theirs.value)
