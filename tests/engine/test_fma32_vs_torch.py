"""engine/optim/fma.py: the optimizers' float32 multiply-add equals ATen's fused one (`add_(y, alpha=)`) bit for
bit, on random values of every magnitude and on the inputs where float64-then-float32 rounds twice wrongly."""
from fractions import Fraction

import numpy as np
import pytest

from engine.optim.fma import fma32

torch = pytest.importorskip("torch")


def _torch_add(z, y, alpha):
    zt = torch.from_numpy(z.copy())
    zt.add_(torch.from_numpy(y), alpha=float(alpha))
    return zt.numpy()


def _bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def _round32(q):
    """A Fraction rounded once to float32 (nearest, ties to even): the exact reference."""
    f = np.float32(float(q))
    if not np.isfinite(f):
        return f
    best = min((np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))),
               key=lambda c: (abs(Fraction(float(c)) - q), int(np.asarray(c).view(np.uint32)) & 1))
    return np.float32(best)


def _double_rounding_traps(rng, n):
    """z + x*y landing within 2**-70 relative of a float32 halfway point (normal and subnormal), both sides,
    odd and even z: float64 rounds the sum onto the halfway point and float32's tie-break can go wrong."""
    zs, ys, alphas = [], [], []
    for _ in range(n):
        e = int(rng.integers(-100, 100))
        k = int(rng.integers(0, 1 << 23))
        sign = float(rng.choice([-1.0, 1.0]))
        side = float(rng.choice([-1.0, 1.0]))
        if rng.random() < 0.25:  # subnormal: z = k * 2**-149, the product 2**-150 * (1 - 2**-46)
            zs.append(sign * k * 2.0 ** -149)
            alphas.append(side * (1 + 2.0 ** -23) * 2.0 ** -30)
            ys.append(sign * (1 - 2.0 ** -23) * 2.0 ** -120)
        else:
            zs.append(sign * (1 + k * 2.0 ** -23) * 2.0 ** e)
            alphas.append(side * (1 + 2.0 ** -23))
            ys.append(sign * (1 - 2.0 ** -23) * 2.0 ** (e - 24))
    return np.array(zs, np.float32), np.array(ys, np.float32), np.array(alphas, np.float32)


def test_the_double_rounding_example_of_the_note():
    z = np.full(20, 1 + 2.0 ** -23, np.float32)
    y = np.full(20, -2.0 ** -24 * (1 - 2.0 ** -23), np.float32)
    alpha = -(1 + 2.0 ** -23)
    naive = (np.asarray(y, np.float64) * np.float32(alpha) + z).astype(np.float32)
    expected = _torch_add(z, y, alpha)
    assert not np.array_equal(_bits(naive), _bits(expected))  # the trap is real
    np.testing.assert_array_equal(_bits(fma32(alpha, y, z)), _bits(expected))


def test_traps_match_torch_and_the_exact_rounding():
    rng = np.random.default_rng(0)
    z, y, alphas = _double_rounding_traps(rng, 400)
    for alpha in np.unique(alphas):
        sel = alphas == alpha
        got = fma32(float(alpha), y[sel], z[sel])
        np.testing.assert_array_equal(_bits(got), _bits(_torch_add(z[sel], y[sel], alpha)))
    got = fma32(alphas, y, z)  # an array multiplier (addcmul, lerp)
    exact = [_round32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))) for a, b, c in zip(alphas, y, z)]
    np.testing.assert_array_equal(_bits(got), _bits(exact))


def test_traps_in_a_big_array_match_torch():
    """Big arrays take the float32 bracket first (fma.py): the traps sit among ordinary SGD-sized values."""
    rng = np.random.default_rng(4)
    z, y, alphas = _double_rounding_traps(rng, 3000)
    alpha = -(1 + 2.0 ** -23)
    sel = alphas == np.float32(alpha)
    n = 40000
    zz = rng.uniform(-0.05, 0.05, n).astype(np.float32)
    yy = (rng.standard_normal(n) * 1e-3).astype(np.float32)
    at = rng.choice(n, int(sel.sum()), replace=False)
    zz[at], yy[at] = z[sel], y[sel]
    np.testing.assert_array_equal(_bits(fma32(alpha, yy, zz)), _bits(_torch_add(zz, yy, alpha)))


@pytest.mark.parametrize("seed", range(6))
def test_random_values_of_every_magnitude_match_torch(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000)) if seed % 2 else int(rng.integers(4096, 30000))
    with np.errstate(over="ignore"):
        z = (rng.standard_normal(n) * 10.0 ** rng.integers(-44, 38, n)).astype(np.float32)
        y = (rng.standard_normal(n) * 10.0 ** rng.integers(-44, 38, n)).astype(np.float32)
    for alpha in (-0.01, 0.1 * rng.standard_normal(), -(1 + 2.0 ** -23), 1e-30, -3.0e20):
        with np.errstate(over="ignore", invalid="ignore"):
            got = fma32(alpha, y, z)
        np.testing.assert_array_equal(_bits(got), _bits(_torch_add(z, y, alpha)))


def test_zeros_infinities_nan_and_0d():
    z = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1.0], np.float32)
    y = np.array([0.0, 0.0, 1.0, np.inf, 1.0, 3.4e38, -3.4e38, -0.0], np.float32)
    for alpha in (1.0, -1.0, 0.0, 2.0):
        with np.errstate(over="ignore", invalid="ignore"):
            got = fma32(alpha, y, z)
        np.testing.assert_array_equal(_bits(got), _bits(_torch_add(z, y, alpha)))
    zero_d = fma32(-0.5, np.array(3.0, np.float32), np.array(1.0, np.float32))
    assert zero_d.shape == () and zero_d.dtype == np.float32 and float(zero_d) == -0.5


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("duplicate", [False, True])
def test_plain_sgd_group_update_is_bit_exact(maximize, duplicate):
    """Plain SGD updates a group's small parameters by one multiply-add over their concatenation and its big
    ones alone: the same bits as torch's one-at-a-time add_, also with a parameter listed twice."""
    import warnings

    import engine

    rng = np.random.default_rng(3)
    shapes = [(200, 100), (100,), (3, 4), (), (1, 7)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[(rng.standard_normal(s) * 10.0 ** rng.integers(-6, 2)).astype(np.float32) for s in shapes]
             for _ in range(4)]
    out = []
    for lib in (engine, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]  # engine.tensor(ndarray) shares it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = lib.optim.SGD(params + params[2:3] if duplicate else params, lr=0.0123, maximize=maximize)
        for gs in grads:
            for p, g in zip(params, gs):
                p.grad = lib.tensor(g.copy())
            opt.step()
        out.append([_bits(p.detach().numpy() if lib is torch else p._data) for p in params])
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_large_arrays_with_infinities_and_nan_match_torch_without_warnings():
    import warnings

    rng = np.random.default_rng(9)
    z = rng.standard_normal(20000).astype(np.float32)  # big enough for the float32 bracket (fma.py)
    y = rng.standard_normal(20000).astype(np.float32)
    z[:4] = [np.inf, -np.inf, np.nan, 3.0e38]
    y[4:8] = [np.inf, -np.inf, np.nan, -3.0e38]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alpha in (-0.01, 7.0):
            with np.errstate(over="ignore", invalid="ignore"):
                expected = _torch_add(z, y, alpha)
            got = fma32(alpha, y, z)
            np.testing.assert_array_equal(_bits(got), _bits(expected))
