"""engine/cascade_sum.py's fast paths give bit for bit what its first, plain implementation gave
(tests/engine/cascade_sum_reference.py, kept as the reference): every full length of a contiguous sum up to 1,100 and
random ones up to SERIAL_LIMIT, random shapes, dims, layouts (transposed, sliced, broadcast, size-1 axes), keepdim,
signed zeros, infinities and NaNs, other dtypes; and the same against PyTorch where it is installed."""
import warnings

import cascade_sum_reference as reference
import numpy as np
import pytest

from engine.cascade_sum import SERIAL_LIMIT, torch_sum


def _same(got, expected):
    """Same type, shape, dtype and bits (a NaN's sign and payload are not compared: torch prints every NaN alike)."""
    assert type(got) is type(expected)
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    nan = np.isnan(expected) if expected.dtype.kind == "f" else np.zeros(expected.shape, bool)
    np.testing.assert_array_equal(np.isnan(got) if got.dtype.kind == "f" else nan, nan)
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}.get(expected.dtype.itemsize)
    if expected.dtype.kind == "f" and width is not None:
        np.testing.assert_array_equal(got.view(width)[~nan], expected.view(width)[~nan])
    else:
        np.testing.assert_array_equal(got, expected)


def _data(rng, shape, specials=False):
    x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)
    if specials and x.size:
        picks = rng.integers(0, x.size, max(1, x.size // 50))
        x.reshape(-1)[picks] = rng.choice(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38], np.float32),
                                          picks.size)
    return x


def _check(a, dims=None, keepdim=False):
    with warnings.catch_warnings(record=True) as reference_warnings:
        warnings.simplefilter("always")
        expected = reference.torch_sum(a, dims, keepdim)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        got = torch_sum(a, dims, keepdim)
    _same(got, expected)
    # the cascade paths are silent (inf - inf is nan without a warning, as torch's); numpy's keep numpy's warnings
    assert [str(w.message) for w in warned] == [str(w.message) for w in reference_warnings]


@pytest.mark.parametrize("lengths", [range(1, 400), range(400, 1100)])
def test_every_short_full_sum_matches_the_reference(lengths):
    rng = np.random.default_rng(lengths[0])
    for n in lengths:
        _check(_data(rng, n))


def test_random_long_full_sums_match_the_reference():
    rng = np.random.default_rng(21)
    lengths = [*rng.integers(1100, SERIAL_LIMIT + 1, 150), SERIAL_LIMIT, SERIAL_LIMIT - 1, SERIAL_LIMIT + 1,
               512 * 16, 512 * 16 - 1, 512 * 16 + 8, 512 * 64, 2000, 4096, 100_000]
    for n in lengths:
        _check(_data(rng, int(n)))


def test_all_zero_and_signed_zero_sums_are_positive_zero_as_atens():
    for n in (1, 3, 7, 8, 9, 31, 32, 33, 511, 512, 513, 2000, 8192, 8200):
        for value in (0.0, -0.0):
            x = np.full(n, value, np.float32)
            _check(x)
            _check(x.reshape(n, 1), (0,), True)
            assert np.signbit(torch_sum(x)) == np.False_


def test_sums_with_infinities_nans_and_overflow_match_without_warnings():
    rng = np.random.default_rng(7)
    for n in [*range(1, 70), 511, 512, 2000, 5000, 33000]:
        _check(_data(rng, n, specials=True))
    _check(np.full(2000, 3e38, np.float32))
    _check(np.array([np.inf, -np.inf] * 600, np.float32))


def _random_layout(rng, shape):
    """A float32 array of `shape` stored contiguously, transposed, sliced with a step, or broadcast."""
    kind = rng.integers(0, 5)
    if kind == 0:
        return _data(rng, shape, specials=rng.random() < 0.2)
    if kind == 1:  # a transpose of a contiguous array
        perm = rng.permutation(len(shape))
        base = _data(rng, tuple(shape[p] for p in perm))
        return base.transpose(np.argsort(perm))
    if kind == 2:  # every other element along one axis
        axis = rng.integers(0, len(shape))
        wide = list(shape)
        wide[axis] *= 2
        return _data(rng, tuple(wide))[tuple(slice(None, None, 2) if d == axis else slice(None) for d in range(len(shape)))]
    if kind == 3:  # a slice of a wider last axis (a strided row)
        return _data(rng, (*shape[:-1], shape[-1] + 3))[..., 1:shape[-1] + 1]
    axis = rng.integers(0, len(shape))  # broadcast along one axis (stride 0)
    small = list(shape)
    small[axis] = 1
    return np.broadcast_to(_data(rng, tuple(small)), shape)


def test_random_shapes_dims_layouts_and_keepdim_match_the_reference():
    rng = np.random.default_rng(2026)
    sizes = [1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 129, 257, 600]
    for _ in range(900):
        ndim = int(rng.integers(1, 5))
        shape = tuple(int(rng.choice(sizes)) for _ in range(ndim))
        while np.prod(shape) > 200_000:
            shape = shape[1:]
            ndim -= 1
        a = _random_layout(rng, shape)
        pick = rng.integers(0, 4)
        if pick == 0:
            dims = None
        elif pick == 1:
            dims = int(rng.integers(-ndim, ndim))
        else:
            count = int(rng.integers(1, ndim + 1))
            dims = tuple(int(d) for d in rng.choice(ndim, count, replace=False))
            if rng.random() < 0.3:
                dims = tuple(d - ndim for d in dims)  # negative dims as torch accepts them
        _check(a, dims, bool(rng.integers(0, 2)))


@pytest.mark.parametrize(("shape", "dims"), [
    ((2000, 1), (0,)), ((100, 1), (0,)), ((256, 32), (0,)), ((256, 1), (0,)), ((64, 1), None), ((12058, 27), (1,)),
    ((27, 27), None), ((1, 27), (1,)), ((1, 2000), (0,)), ((3, 1, 5), (1,)), ((1, 1, 40), (0, 2)), ((5, 1), (0,)),
    ((513, 40), (0,)), ((40, 513), (1,)), ((9, 33), (1,)), ((1000, 100), (0,)), ((4, 0, 3), (1,)), ((0,), None),
])
@pytest.mark.parametrize("keepdim", [False, True])
def test_the_engines_common_shapes_match_the_reference(shape, dims, keepdim):
    rng = np.random.default_rng(sum(shape))
    _check(_data(rng, shape), dims, keepdim)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int64, np.int32, np.bool_])
def test_other_dtypes_keep_numpys_sum(dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((33, 17)) * 50).astype(dtype)
    for dims in (None, 0, 1, (0, 1)):
        _check(a, dims, False)
        _check(a, dims, True)


def test_a_0d_array_sums_to_itself():
    _check(np.array(2.5, np.float32))
    _check(np.array(-0.0, np.float32))
    _check(np.array(2.5, np.float32), None, True)
    for dims in (0, -1, (0,), (-1,), ()):
        _check(np.array(2.5, np.float32), dims, False)
        _check(np.array(2.5, np.float32), dims, True)


def test_the_fast_paths_match_torch():
    torch = pytest.importorskip("torch")
    if torch.backends.cpu.get_cpu_capability() != "AVX2":
        pytest.skip("the engine's float32 order is AVX2's")
    rng = np.random.default_rng(5)
    for n in [*range(1, 80), *rng.integers(80, SERIAL_LIMIT + 1, 60)]:
        x = _data(rng, int(n))
        _same(torch_sum(x), torch.from_numpy(x).sum().numpy()[()])
    for shape, dims in [((2000, 1), (0,)), ((256, 32), (0,)), ((100, 1), (0,)), ((12058, 27), (1,)), ((513, 40), (0,)),
                        ((40, 513), (1,)), ((7, 9, 11), (1, 2))]:
        x = _data(rng, shape)
        _same(torch_sum(x, dims, True), torch.from_numpy(x).sum(dim=dims, keepdim=True).numpy())
