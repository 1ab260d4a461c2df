"""float32 results bit for bit with PyTorch (issue 21): sums and means in ATen's cascade order, x ** c through
ATen's pow special cases, mse_loss's backward, a one-row matrix product as MKL sums it. Gradients where a backward
changed are checked against finite differences too."""
import math

import numpy as np
import pytest

import engine
from engine import linalg_ops
from engine.cascade_sum import SERIAL_LIMIT, torch_sum

torch = pytest.importorskip("torch")
# NOTE: ATen's float32 order depends on the vector width it picked for this CPU; the engine emulates AVX2's
if torch.backends.cpu.get_cpu_capability() != "AVX2":
    pytest.skip(f"PyTorch runs {torch.backends.cpu.get_cpu_capability()} kernels here; the engine's float32 order "
                "is AVX2's", allow_module_level=True)

SHAPES_AND_DIMS = [
    ((0,), None), ((1,), None), ((7,), None), ((8,), None), ((9,), None), ((33,), None), ((513,), None),
    ((2000,), None), ((4097,), None), ((SERIAL_LIMIT,), None), ((64, 3), None), ((64, 3), 0), ((64, 3), 1),
    ((3, 64), 1), ((3, 64), 0), ((64, 40), 0), ((5, 7, 9), 1), ((5, 7, 9), 2), ((5, 7, 9), 0), ((200, 300), 0),
    ((200, 300), 1), ((200, 30, 7), 1), ((1000, 100), 0), ((2000, 1), 0), ((3, 1, 5), 1), ((4, 0, 3), 1),
    ((3, 4, 5), (1, 2)), ((3, 4, 5), (0, 1)),
]


def _bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def _same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)  # a NaN's sign and payload are not compared
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(expected)[~nan])


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)


@pytest.mark.parametrize(("shape", "dim"), SHAPES_AND_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_mean_match_torch_bit_for_bit(shape, dim, keepdim):
    x = _data(shape, len(shape) * 1000 + sum(shape))
    t, e = torch.from_numpy(x), engine.tensor(x)
    if dim is None:
        _same(e.sum()._data, t.sum().numpy())
        if x.size:
            _same(e.mean()._data, t.mean().numpy())
        return
    _same(e.sum(dim=dim, keepdim=keepdim)._data, t.sum(dim=dim, keepdim=keepdim).numpy())
    _same(e.mean(dim=dim, keepdim=keepdim)._data, t.mean(dim=dim, keepdim=keepdim).numpy())


@pytest.mark.parametrize(("shape", "dim"), [((64, 3), 0), ((64, 3), 1), ((40, 64), 0), ((9, 33), 1), ((8, 9), None)])
def test_sums_of_transposed_and_strided_tensors_match_torch(shape, dim):
    x = _data(shape, 7)
    for tv, ev in ((torch.from_numpy(x).t(), engine.tensor(x).t()), (torch.from_numpy(x)[::2], engine.tensor(x)[::2])):
        expected = tv.sum() if dim is None else tv.sum(dim)
        _same((ev.sum() if dim is None else ev.sum(dim))._data, expected.numpy())


def test_sums_of_specials_match_torch_without_warnings():
    x = np.array([1.0, np.inf, -np.inf, 2.0, -0.0, np.nan, 3.0, 4.0, 5.0] * 3, np.float32)
    for part in (x[:2], x[1:3], x[3:5], x, -np.zeros(9, np.float32)):
        with np.errstate(all="raise"):
            got = engine.tensor(part).sum()._data
        _same(got, torch.from_numpy(part).sum().numpy())


def test_linspace_sum_of_the_polynomial_tutorial_matches_torch():
    tx = torch.linspace(-math.pi, math.pi, 2000)
    ex = engine.linspace(-math.pi, math.pi, 2000)
    _same(ex._data, tx.numpy())
    _same((ex ** 3).sum()._data, (tx ** 3).sum().numpy())
    _same((2.0 * (ex * 0.5 - ex ** 2) * ex ** 3).sum()._data, (2.0 * (tx * 0.5 - tx ** 2) * tx ** 3).sum().numpy())


def test_other_dtypes_keep_numpys_result_and_huge_sums_are_torchs_on_one_thread():
    rng = np.random.default_rng(3)
    x64 = rng.standard_normal(1000)
    assert torch_sum(x64) == x64.sum()
    ints = np.arange(100, dtype=np.int64)
    assert engine.tensor(ints).sum().item() == 4950
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # NOTE: on more threads torch splits a sum past SERIAL_LIMIT: other last bits
    try:
        for shape in [(SERIAL_LIMIT + 1,), (40_000,), (300, 200), (70_000, 3), (1 << 20,)]:
            big = rng.standard_normal(shape).astype(np.float32)
            assert torch_sum(big) == torch.from_numpy(big).sum().item()
            for dim in range(len(shape)):
                _same(torch_sum(big, dim), torch.from_numpy(big).sum(dim).numpy())
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("exponent", [2, 3, -2, 2.0, 3.0, -1, 0.5, 0, 1, 4, 1.5, -3])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 2000])
def test_pow_scalar_matches_torch(exponent, n):
    x = _data((n,), n)
    if exponent in (0.5, 1.5):
        x = np.abs(x)
    t, e = torch.from_numpy(x), engine.tensor(x)
    got, expected = (e ** exponent)._data, (t ** exponent).numpy()
    if exponent in (2, 3, -2, -1, 0, 1):
        _same(got, expected)
    else:  # sqrt and std::pow/SLEEF powf: a last-bit difference at most
        np.testing.assert_allclose(got, expected, rtol=3e-7, atol=0)
    _same(e.pow(exponent)._data, (e ** exponent)._data)


@pytest.mark.parametrize("exponent", [2, 3, -2, 4])
def test_pow_scalar_gradient_matches_torch_and_finite_differences(exponent):
    x = np.abs(_data((9,), 1)) + np.float32(0.5)
    t = torch.from_numpy(x.copy()).requires_grad_()
    e = engine.tensor(x.copy(), requires_grad=True)
    (t ** exponent).sum().backward()
    (e ** exponent).sum().backward()
    if exponent != 4:
        _same(e.grad._data, t.grad.numpy())
    xd = x.astype(np.float64)
    h = 1e-6
    fd = ((xd + h) ** exponent - (xd - h) ** exponent) / (2 * h)
    np.testing.assert_allclose(e.grad._data, fd, rtol=1e-4)


def test_pow_scalar_second_derivative_still_works():
    e = engine.tensor([1.5, -2.0, 0.25], requires_grad=True)
    (g,) = engine.autograd.grad((e ** 3).sum(), e, create_graph=True)
    (gg,) = engine.autograd.grad(g.sum(), e)
    np.testing.assert_allclose(gg._data, 6 * e._data, rtol=1e-6)


@pytest.mark.parametrize("shape", [(64, 1), (7, 3), (2000,), (1,)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_loss_and_its_gradients_match_torch(shape, reduction):
    a, b = _data(shape, 11), _data(shape, 12)
    ta, tb = torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(b.copy()).requires_grad_()
    ea, eb = engine.tensor(a.copy(), requires_grad=True), engine.tensor(b.copy(), requires_grad=True)
    tl = torch.nn.functional.mse_loss(ta, tb, reduction=reduction)
    el = engine.nn.functional.mse_loss(ea, eb, reduction=reduction)
    _same(el._data, tl.detach().numpy())
    tl.backward()
    el.backward()
    _same(ea.grad._data, ta.grad.numpy())
    _same(eb.grad._data, tb.grad.numpy())


def test_mse_loss_gradient_matches_finite_differences():
    a, b = _data((5,), 3).astype(np.float64), _data((5,), 4).astype(np.float64)
    ea = engine.tensor(a, requires_grad=True)
    engine.nn.functional.mse_loss(ea, engine.tensor(b)).backward()
    h = 1e-6
    fd = [(np.mean((a + h * np.eye(5)[i] - b) ** 2) - np.mean((a - h * np.eye(5)[i] - b) ** 2)) / (2 * h)
          for i in range(5)]
    np.testing.assert_allclose(ea.grad._data, fd, rtol=1e-6)


@pytest.mark.parametrize(("k", "n"), [(64, 3), (256, 32), (3, 64), (32, 1), (2000, 4), (1, 5)])
def test_one_row_products_match_torch(k, n):
    a, b, c = _data((1, k), k), _data((k, n), n), _data((n,), 5)
    ta, tb, tc = map(torch.from_numpy, (a, b, c))
    _same((engine.tensor(a) @ engine.tensor(b))._data, (ta @ tb).numpy())
    _same(engine.mm(engine.tensor(a), engine.tensor(b))._data, torch.mm(ta, tb).numpy())
    _same(linalg_ops._addmm(c, a, b), torch.addmm(tc, ta, tb).numpy())  # addmm's kernel: not on the torch surface


@pytest.mark.parametrize(("batch", "fan_in", "fan_out"), [(64, 3, 1), (256, 2, 32), (7, 9, 4)])
def test_linear_weight_gradient_matches_torch(batch, fan_in, fan_out):
    x, w, bias = _data((batch, fan_in), 1), _data((fan_out, fan_in), 2), _data((fan_out,), 3)
    tw, ew = torch.from_numpy(w.copy()).requires_grad_(), engine.tensor(w.copy(), requires_grad=True)
    tb, eb = torch.from_numpy(bias.copy()).requires_grad_(), engine.tensor(bias.copy(), requires_grad=True)
    upstream = _data((batch, fan_out), 4)  # a given output gradient: general products are not MKL's bits
    torch.nn.functional.linear(torch.from_numpy(x), tw, tb).backward(torch.from_numpy(upstream))
    engine.nn.functional.linear(engine.tensor(x), ew, eb).backward(engine.tensor(upstream))
    _same(eb.grad._data, tb.grad.numpy())
    if fan_out == 1:  # grad.t() @ input is one row: MKL's order; wider products keep numpy's BLAS
        _same(ew.grad._data, tw.grad.numpy())
    else:
        np.testing.assert_allclose(ew.grad._data, tw.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize(("dim", "keepdim"), [((), False), (1, True), (0, False), ((0, 1), True), (-1, False)])
def test_tensor_amax_amin_methods_match_torch_with_ties(name, dim, keepdim):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0], [0.0, 0.0, 3.0]], np.float32)
    t, e = torch.from_numpy(x.copy()).requires_grad_(), engine.tensor(x.copy(), requires_grad=True)
    upstream = getattr(t, name)(dim, keepdim)
    got = getattr(e, name)(dim, keepdim)
    _same(got._data, upstream.detach().numpy())
    assert type(got.grad_fn).__name__ == type(upstream.grad_fn).__name__
    weights = np.arange(1, upstream.numel() + 1, dtype=np.float32).reshape(upstream.shape)
    upstream.backward(torch.from_numpy(weights))
    got.backward(engine.tensor(weights))
    _same(e.grad._data, t.grad.numpy())  # ties share the gradient evenly, as PyTorch's


def test_tensor_amax_hostile_arguments_raise_torchs_errors():
    e = engine.tensor([[1.0, 2.0]])
    for bad in ((0, 0), 5, "x", 10**30):
        with pytest.raises((RuntimeError, IndexError, TypeError)):
            e.amax(bad)
    with pytest.raises(IndexError, match="non-zero size"):
        engine.zeros(0, 3).amin(0)
    assert e.amax(dim=1, keepdim=True).shape == (1, 1)


@pytest.mark.parametrize(("call", "args", "kwargs"), [
    ("bernoulli_", (0.5,), {}), ("bernoulli_", (), {}), ("bernoulli_", ("p_tensor",), {}), ("random_", (), {}),
    ("random_", (5,), {}), ("random_", (0, 5), {}), ("random_", (), {"to": 5}), ("random_", (), {"from": 1, "to": 5}),
])
def test_random_overwrites_record_pytorchs_node_and_a_zero_gradient(call, args, kwargs):
    def run(lib):
        leaf = lib.ones(4, requires_grad=True)
        y = leaf * 1
        real_args = tuple(lib.full((4,), 0.25) if a == "p_tensor" else a for a in args)
        getattr(y, call)(*real_args, **kwargs)
        name = type(y.grad_fn).__name__
        (y * 2).sum().backward()
        return name, np.asarray(leaf.grad.numpy() if lib is torch else leaf.grad._data)
    (tn, tg), (en, eg) = run(torch), run(engine)
    assert en == tn
    _same(eg, tg)
