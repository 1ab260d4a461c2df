"""Same seed, same numbers: the engine's random functions against real PyTorch's CPU generator.

Integer and uniform draws must agree bit for bit; normal draws within 2 ulps of the dtype (the
engine reproduces PyTorch's AVX2 Box-Muller exactly, but other CPUs may take other kernels).
Skipped when torch (the test-only extra) is absent.
"""
import contextlib
import io
import math
import textwrap

import numpy as np
import pytest

import engine
from engine import random as erandom

torch = pytest.importorskip("torch")

SEEDS = [0, 1, 42, 2**32 + 7, 67280421310721]
# both sides of 16 (scalar Box-Muller vs the 16-wide fill), multiples of 16 and not, empty and 0-d
SHAPES = [(), (0,), (1,), (2,), (3,), (5,), (8,), (15,), (16,), (17,), (20,), (31,), (32,), (33,), (47,), (4, 4), (3, 5),
          (5, 4), (2, 3, 4), (100,), (1000,), (4097,)]
DTYPES = ["float32", "float64", "float16"]


def arr(t):
    if isinstance(t, engine.Tensor):
        return np.asarray(t._data)
    return t.detach().numpy()


def assert_same(a, b):
    a, b = arr(a), arr(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    if a.dtype.kind == "f":  # bit for bit, signed zeros included
        assert a.tobytes() == b.tobytes()


def assert_ulps(a, b, ulps=2):
    a, b = arr(a), arr(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.size == 0:
        return
    spacing = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(a.dtype))
    assert (np.abs(a.astype(np.float64) - b.astype(np.float64)) <= ulps * spacing.astype(np.float64)).all(), \
        f"more than {ulps} ulps apart: {a} vs {b}"


def both(seed, fn):
    """fn(lib) under each library after the same manual_seed."""
    engine.manual_seed(seed)
    torch.manual_seed(seed)
    return fn(engine), fn(torch)


def _torch_bernoulli_uses_mkl():
    """On Intel CPUs PyTorch draws bernoulli_(float p) from MKL's stream (not reproducible here)."""
    torch.manual_seed(0)
    got = torch.empty(64).bernoulli_(0.5)
    torch.manual_seed(0)
    expected = (torch.rand(64, dtype=torch.float64) < 0.5).float()
    return not torch.equal(got, expected)


needs_plain_bernoulli = pytest.mark.skipif(_torch_bernoulli_uses_mkl(),
                                           reason="this CPU's PyTorch draws bernoulli_(p) with MKL")


# ---------------------------------------------------------------- the classic printout
def test_seed_zero_randn_prints_what_pytorch_prints():
    engine.manual_seed(0)
    assert str(engine.randn(3)) == "tensor([ 1.5410, -0.2934, -2.1788])"
    a, b = both(0, lambda lib: lib.randn(3))
    assert str(a) == str(b)


def test_unseeded_generator_uses_pytorch_default_seed():
    e, t = engine.Generator(), torch.Generator()
    assert e.initial_seed() == t.initial_seed() == 67280421310721
    assert_same(engine.rand(7, generator=e), torch.rand(7, generator=t))
    engine.reset_run_state()
    assert engine.initial_seed() == 67280421310721


# ---------------------------------------------------------------- rand / randn over shapes and thresholds
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("factory, check", [("rand", assert_same), ("randn", assert_ulps)], ids=["rand_bit_for_bit", "randn_2ulps"])
def test_rand_and_randn_over_shapes(factory, check, shape, dtype):
    for seed in SEEDS[:3]:
        a, b = both(seed, lambda lib: getattr(lib, factory)(shape, dtype=getattr(lib, dtype)))
        check(a, b)


X86_VECTOR_KERNELS = torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


@pytest.mark.skipif(not X86_VECTOR_KERNELS, reason="PyTorch takes its AVX2 normal kernel only on x86 CPUs with AVX2")
@pytest.mark.parametrize("dtype", DTYPES)
def test_randn_bit_for_bit_where_pytorch_uses_its_avx2_kernel(dtype):
    for n in (1, 15, 16, 17, 33, 1000, 4099):
        for seed in SEEDS:
            a, b = both(seed, lambda lib, n=n: lib.randn(n, dtype=getattr(lib, dtype)))
            assert_same(a, b)
            a, b = both(seed, lambda lib, n=n: lib.empty(n, dtype=getattr(lib, dtype)).normal_(-0.7, 1.9))
            assert_same(a, b)


@pytest.mark.parametrize("shape", [(3,), (2, 5), (17,), (4, 8), (6, 7)], ids=str)
def test_printouts_match(shape):
    for seed in SEEDS:
        a, b = both(seed, lambda lib: (lib.randn(*shape), lib.rand(*shape), lib.randint(0, 9, shape), lib.randn(shape[0])))
        assert [str(x) for x in a] == [str(x) for x in b]


def test_large_randn_is_vectorised_and_matches():
    a, b = both(5, lambda lib: lib.randn(256, 1001))
    assert_ulps(a, b)
    a, b = both(5, lambda lib: lib.randn(70001, dtype=lib.float64))
    assert_ulps(a, b)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 15, 16, 17, 40])
@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_with_mean_and_std(n, dtype):
    for mean, std in [(0.0, 1.0), (1.3, 0.37), (-2.0, 5.5), (0.5, 0.0)]:
        a, b = both(3, lambda lib, mean=mean, std=std: lib.zeros(n, dtype=getattr(lib, dtype)).normal_(mean, std))
        assert_ulps(a, b)


@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 100])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_bounds_bit_for_bit(n, dtype):
    for low, high in [(0.0, 1.0), (-0.5, 0.5), (-0.123, 0.77), (-3.3, 7.1), (1e-3, 1e3), (2.0, 2.0), (-1e6, -1e6 + 1)]:
        a, b = both(11, lambda lib, low=low, high=high: lib.empty(n, dtype=getattr(lib, dtype)).uniform_(low, high))
        assert_same(a, b)


def test_float16_uniform_and_integers():
    for low, high in [(-0.3, 2.2), (0.0, 1.0), (-1000.0, -999.0)]:
        a, b = both(0, lambda lib, low=low, high=high: lib.zeros(1000, dtype=lib.float16).uniform_(low, high))
        assert_same(a, b)
    a, b = both(0, lambda lib: lib.randint(-5, 100, (40,), dtype=lib.float16))
    assert_same(a, b)


def test_non_contiguous_tensors_fill_in_memory_order():
    def prog(lib):
        x = lib.zeros(4, 5).t()
        x.normal_()  # < 16 elements? no: 20, but not contiguous -> the scalar path
        y = lib.zeros(20, 3).t()
        y.uniform_(-1, 2)
        z = lib.zeros(6, 8)[:, ::2]
        z.normal_(1.0, 2.0)
        return lib.cat([x.reshape(-1), y.reshape(-1), z.reshape(-1)])

    a, b = both(4, prog)
    assert_ulps(a, b)


# ---------------------------------------------------------------- integers
@pytest.mark.parametrize("high", [1, 2, 10, 100, 2**16, 2**28 - 1, 2**28, 2**31, 2**32, 2**40, 2**62])
def test_randint_both_sides_of_the_64_bit_threshold(high):
    for low in (0, -3):
        for size in [(1,), (5,), (17,), (3, 4)]:
            a, b = both(9, lambda lib, low=low, size=size: lib.randint(low, high, size))
            assert_same(a, b)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float32", "float64"])
def test_randint_dtypes(dtype):
    high = 200 if dtype == "uint8" else 10**6
    a, b = both(2, lambda lib: lib.randint(3, high, (50,), dtype=getattr(lib, dtype)))
    assert_same(a, b)
    a, b = both(2, lambda lib: lib.randint(high, (2, 7), dtype=getattr(lib, dtype)))
    assert_same(a, b)


def test_randint_float_range_beyond_its_mantissa():
    with pytest.warns(UserWarning):
        engine.randint(0, 2**31, (2,), dtype=engine.float32)
    with pytest.warns(UserWarning):
        a, b = both(0, lambda lib: lib.randint(0, 2**31, (50,), dtype=lib.float32))
    assert_same(a, b)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 16, 17, 100, 1000, 20000])
def test_randperm(n):
    for seed in SEEDS[:3]:
        a, b = both(seed, lambda lib: lib.randperm(n))
        assert_same(a, b)
    a, b = both(1, lambda lib: lib.randperm(n, dtype=lib.int32))
    assert_same(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_random_(dtype):
    def prog(lib):
        dt = getattr(lib, dtype)
        outs = [lib.zeros(40, dtype=dt).random_(), lib.zeros(40, dtype=dt).random_(2 if dtype == "bool" else 7)]
        if dtype != "bool":
            outs += [lib.zeros(40, dtype=dt).random_(3, 9), lib.zeros(40, dtype=dt).random_(3, None),
                     lib.zeros(40, dtype=dt).random_(to=5)]
        return [o.to(lib.float64) for o in outs]

    for x, y in zip(*both(6, prog)):
        assert_same(x, y)


@pytest.mark.parametrize("bounds", [(-10**30, 10**30), (10**30,), (2**63,), (0, 2**63), (-2**63 - 1, 0)])
def test_random_bounds_past_int64_overflow_as_pytorchs(bounds):
    """PyTorch reads random_'s bounds as C int64: past them it raises before drawing (the engine drew zeros)."""
    messages = []
    for lib in (engine, torch):
        with pytest.raises(ValueError) as e:
            lib.ones(3).random_(*bounds)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


# ---------------------------------------------------------------- bernoulli and dropout
@needs_plain_bernoulli
@pytest.mark.parametrize("n", [1, 5, 16, 17, 1000])
def test_bernoulli(n):
    for p in (0.0, 0.3, 0.5, 1.0):
        a, b = both(1, lambda lib, p=p: lib.zeros(n).bernoulli_(p))
        assert_same(a, b)
    a, b = both(1, lambda lib: lib.zeros(n, dtype=lib.float64).bernoulli_(0.7))
    assert_same(a, b)


@pytest.mark.parametrize("n", [1, 5, 17, 300])
@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_with_probability_tensors(n, dtype):
    a, b = both(8, lambda lib: lib.bernoulli(lib.rand(n, dtype=getattr(lib, dtype))))
    assert_same(a, b)
    a, b = both(8, lambda lib: lib.zeros(n, 3).bernoulli_(lib.rand(3, dtype=getattr(lib, dtype))))
    assert_same(a, b)


@needs_plain_bernoulli
@pytest.mark.parametrize("p", [0.1, 0.2, 0.5, 0.8])
@pytest.mark.parametrize("shape", [(1,), (7,), (16,), (17,), (4, 8), (64, 33)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_noise_is_pytorchs_dropout_mask(p, shape, dtype):
    np_dt = np.dtype(dtype)
    x = torch.linspace(-2, 3, math.prod(shape), dtype=getattr(torch, dtype)).reshape(shape)

    engine.manual_seed(13)
    torch.manual_seed(13)
    noise = erandom.dropout_noise(shape, p, np_dt)
    expected = torch.nn.functional.dropout(x, p, training=True)
    assert noise.dtype == np_dt
    got = x.numpy() * noise
    assert got.tobytes() == expected.numpy().tobytes()
    # and the generators stay in step afterwards
    assert_same(engine.rand(5), torch.rand(5))


def test_dropout_noise_with_a_generator_and_p_one():
    g = engine.Generator().manual_seed(3)
    tg = torch.Generator().manual_seed(3)
    noise = erandom.dropout_noise((10,), 0.25, np.float32, generator=g)
    mask = torch.empty(10).bernoulli_(0.75, generator=tg).div_(0.75)
    if not _torch_bernoulli_uses_mkl():
        assert noise.tobytes() == mask.numpy().tobytes()
    assert (erandom.dropout_noise((4,), 1.0, np.float32) == 0).all()


# ---------------------------------------------------------------- torch.normal
def test_torch_normal_overloads():
    progs = [lambda lib: lib.normal(lib.arange(20.0), lib.arange(20.0) / 10),
             lambda lib: lib.normal(lib.arange(20.0), 0.5),
             lambda lib: lib.normal(2.0, lib.arange(5.0)),
             lambda lib: lib.normal(2.0, 3.0, (4, 5)),
             lambda lib: lib.normal(-1.0, 0.5, size=(3,))]
    for prog in progs:
        a, b = both(21, prog)
        assert_ulps(a, b)


# ---------------------------------------------------------------- call order: interleaved draws
def _interleaved(lib, g=None):
    kw = {} if g is None else {"generator": g}
    out = [lib.randn(1, **kw), lib.randn(3, **kw), lib.rand(2, **kw), lib.randn(17, **kw),
           lib.randn(5, dtype=lib.float64, **kw), lib.randint(0, 10, (4,), **kw), lib.randperm(9, **kw),
           lib.randn(1, **kw), lib.rand(3, 3, dtype=lib.float64, **kw), lib.randint(-5, 2**30, (3,), **kw),
           lib.randn(16, **kw), lib.randn(2, 2, **kw), lib.zeros(6).normal_(0.5, 2.0, **kw),
           lib.zeros(33).uniform_(-1, 1, **kw), lib.bernoulli(lib.full((5,), 0.5), **kw), lib.randn(1, **kw)]
    return [o.to(lib.float64).reshape(-1) for o in out]


@pytest.mark.parametrize("seed", SEEDS)
def test_interleaved_calls_keep_pytorchs_order(seed):
    for x, y in zip(*both(seed, _interleaved)):
        assert_ulps(x, y)


def test_cached_normal_survives_other_draws():
    # randn(1) leaves the second Box-Muller value cached; rand does not touch it; randn(1) uses it
    def prog(lib):
        return [lib.randn(1), lib.rand(4), lib.randn(1), lib.randn(20), lib.randn(1), lib.randn(1)]

    for x, y in zip(*both(0, prog)):
        assert_ulps(x, y)


# ---------------------------------------------------------------- generator objects and state
def test_generator_objects_are_independent_of_the_global_one():
    e, t = engine.Generator().manual_seed(123), torch.Generator().manual_seed(123)
    engine.manual_seed(5)
    torch.manual_seed(5)
    for x, y in zip(_interleaved(engine, e), _interleaved(torch, t)):
        assert_ulps(x, y)
    assert_same(engine.rand(4), torch.rand(4))  # the global generators never moved
    assert e.initial_seed() == t.initial_seed() == 123
    assert isinstance(engine.manual_seed(1), engine.Generator)
    assert engine.Generator().manual_seed(7).initial_seed() == 7


@pytest.mark.parametrize("seed", [0, 5, 2**32 + 5, 2**63, 2**64 - 1, -1, -5, 3.7])
def test_seed_handling(seed):
    engine.manual_seed(seed)
    torch.manual_seed(seed)
    assert engine.initial_seed() == torch.initial_seed()
    assert_same(engine.rand(6), torch.rand(6))


def test_seed_out_of_range():
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError) as e:
            engine.manual_seed(bad)
        with pytest.raises(Exception) as t:
            torch.manual_seed(bad)
        assert str(e.value) == str(t.value)


def test_torch_seed_is_fresh_and_applied():
    s = engine.seed()
    assert engine.initial_seed() == s and 0 <= s < 2**53
    values = engine.rand(3)
    engine.manual_seed(s)
    assert_same(engine.rand(3), values)


@pytest.mark.parametrize("draws", [lambda lib: None, lambda lib: lib.randn(1), lambda lib: lib.randn(3),
                                   lambda lib: lib.rand(624), lambda lib: lib.rand(700),
                                   lambda lib: lib.randn(5, dtype=lib.float64)])
def test_get_rng_state_is_pytorchs_bytes(draws):
    engine.manual_seed(77)
    torch.manual_seed(77)
    draws(engine)
    draws(torch)
    e, t = engine.get_rng_state(), torch.get_rng_state()
    assert e.dtype is engine.uint8 and tuple(e.shape) == (5056,)
    assert arr(e).tobytes() == arr(t).tobytes()


def test_set_rng_state_round_trips_and_crosses_libraries():
    engine.manual_seed(3)
    torch.manual_seed(3)
    engine.randn(3)
    torch.randn(3)  # a cached normal is part of the state
    saved_e, saved_t = engine.get_rng_state(), torch.get_rng_state()
    first = engine.randn(20), engine.randn(1)
    engine.set_rng_state(saved_e)
    again = engine.randn(20), engine.randn(1)
    for x, y in zip(first, again):
        assert_same(x, y)
    # torch's state loaded into the engine, and the engine's into torch
    engine.manual_seed(999)
    engine.set_rng_state(engine.tensor(saved_t.numpy()))
    torch.set_rng_state(torch.from_numpy(arr(saved_e).copy()))
    assert_ulps(engine.randn(21), torch.randn(21))
    assert_ulps(engine.randn(1), torch.randn(1))


def test_generator_get_and_set_state():
    e, t = engine.Generator().manual_seed(8), torch.Generator().manual_seed(8)
    engine.rand(5, generator=e)
    torch.rand(5, generator=t)
    assert arr(e.get_state()).tobytes() == arr(t.get_state()).tobytes()
    state = e.get_state()
    a = engine.randint(0, 100, (10,), generator=e)
    assert e.set_state(state) is e
    assert_same(engine.randint(0, 100, (10,), generator=e), a)


def test_bad_states_are_refused():
    with pytest.raises(TypeError, match="ByteTensor"):
        engine.set_rng_state(engine.zeros(5056))
    with pytest.raises(RuntimeError, match="size 5056"):
        engine.set_rng_state(engine.zeros(10, dtype=engine.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        engine.set_rng_state(engine.zeros(5056, dtype=engine.uint8))


# ---------------------------------------------------------------- nn.init and default initialisation
def test_linear_4_16_has_pytorchs_weights():
    a, b = both(0, lambda lib: lib.nn.Linear(4, 16))
    assert_same(a.weight, b.weight)
    assert_same(a.bias, b.bias)
    assert str(a.weight) == str(b.weight)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_models_initialise_in_pytorchs_order(seed):
    def model(lib):
        return lib.nn.Sequential(lib.nn.Linear(784, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10),
                                 lib.nn.Linear(10, 1, bias=False), lib.nn.Linear(1, 3, dtype=lib.float64))

    a, b = both(seed, model)
    for (na, pa), (nb, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert na == nb
        assert_same(pa, pb)
    assert_same(engine.rand(3), torch.rand(3))


@pytest.mark.parametrize("name,kwargs", [
    ("uniform_", {}), ("uniform_", {"a": -2.0, "b": 0.5}), ("normal_", {}), ("normal_", {"mean": 1.0, "std": 0.2}),
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}), ("kaiming_normal_", {}),
    ("kaiming_normal_", {"nonlinearity": "tanh"}),
])
@pytest.mark.parametrize("shape", [(3, 2), (16, 4), (7, 9), (4, 3, 2, 2)], ids=str)
def test_nn_init(name, kwargs, shape):
    a, b = both(17, lambda lib: getattr(lib.nn.init, name)(lib.empty(*shape), **kwargs))
    assert_ulps(a, b)
    g, tg = engine.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    assert_ulps(getattr(engine.nn.init, name)(engine.empty(*shape), generator=g, **kwargs),
                getattr(torch.nn.init, name)(torch.empty(*shape), generator=tg, **kwargs))


def test_calculate_gain():
    for args in [("linear",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                 ("leaky_relu", math.sqrt(5)), ("selu",), ("conv2d",)]:
        assert engine.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


# ---------------------------------------------------------------- a seeded tutorial
TRAINING = """
torch.manual_seed(42)
x = torch.randn(32, 4)
true_w = torch.randn(4, 1)
y = x @ true_w + 0.1 * torch.randn(32, 1)
model = nn.Linear(4, 1)
loss_fn = nn.MSELoss()
opt = optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    print(step, loss)
print(model.weight)
print(model.bias)
perm = torch.randperm(8)
print(perm, torch.randint(0, 10, (5,)), torch.rand(2))
"""


def _run(src, lib):
    out = io.StringIO()
    ns = {"torch": lib, "nn": lib.nn, "optim": lib.optim}
    with contextlib.redirect_stdout(out):
        exec(textwrap.dedent(src), ns)  # our own test program
    return out.getvalue()


def test_seeded_training_loop_prints_pytorchs_losses():
    printed = _run(TRAINING, engine)
    assert printed == _run(TRAINING, torch)
    assert "grad_fn=<MseLossBackward0>" in printed


# ---------------------------------------------------------------- issue 10: multinomial, trunc_normal_, orthogonal_
MULTINOMIAL_CASES = [
    ([0.1, 0.2, 0.3, 0.4], 1, False), ([0.1, 0.2, 0.3, 0.4], 3, False), ([0.1, 0.2, 0.3, 0.4], 20, True),
    ([[1.0, 0, 2, 5, 0.5], [0, 3, 1, 0, 2], [3, 3, 3, 3, 3]], 2, False), ([[1.0, 0, 2, 5, 0.5], [0, 0, 1, 0, 0]], 50, True),
    ([[1.0, 0, 2, 5, 0.5], [0, 0, 1, 0, 0]], 1, True), (np.random.default_rng(0).random(1000).tolist(), 300, True),
    (np.random.default_rng(1).random(1000).tolist(), 300, False), ([1e-30, 1.0, 1e30], 40, True),
]


@pytest.mark.parametrize("probs, n, replacement", MULTINOMIAL_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_draws_pytorchs_indices(probs, n, replacement, dtype):
    got = []
    for lib in (torch, engine):
        g = lib.Generator().manual_seed(7)
        a = lib.multinomial(lib.tensor(probs, dtype=getattr(lib, dtype)), n, replacement, generator=g)
        lib.manual_seed(3)
        b = lib.multinomial(lib.tensor(probs, dtype=getattr(lib, dtype)), n, replacement=replacement)
        got.append((a.tolist(), b.tolist(), str(a.dtype), lib.rand(3).tolist(), torch.rand(1, generator=None).shape))
    assert got[0] == got[1]


@pytest.mark.parametrize("probs", ["[0.1, -1.0]", "[0.1, float('nan')]", "[0.1, float('inf')]", "[0.0, 0.0]",
                                   "[[1.0, 1.0], [0.0, 0.0]]", "[[1.0, 1.0], [1.0, -1.0]]"])
@pytest.mark.parametrize("n, replacement", [(3, True), (1, False), (2, False)])
def test_multinomial_refuses_bad_distributions_as_pytorch(probs, n, replacement):
    msgs = []
    for lib in (torch, engine):
        lib.manual_seed(0)
        with pytest.raises(RuntimeError) as e:
            lib.multinomial(lib.tensor(eval(probs)), n, replacement)
        msgs.append((str(e.value), lib.rand(2).tolist()))  # and the generator left where PyTorch leaves it
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("make, n", [("torch.tensor([1, 2])", 1), ("torch.ones(2, 2, 2)", 1), ("torch.ones(3)", 0),
                                     ("torch.ones(3)", 4)])
def test_multinomial_argument_errors_match(make, n):
    msgs = []
    for lib in (torch, engine):
        with pytest.raises(RuntimeError) as e:
            lib.multinomial(eval(make, {"torch": lib}), n)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("kwargs", [{}, {"mean": 0.5, "std": 0.2, "a": 0.0, "b": 1.0}, {"a": 2.0, "b": 5.0},
                                    {"a": -0.1, "b": 0.1}, {"mean": 3.0, "std": 0.5, "a": -1.0, "b": 1.0}])
@pytest.mark.parametrize("dtype, shape", [("float32", (4, 500)), ("float64", (3, 7)), ("float32", (17,))])
def test_trunc_normal_gives_pytorchs_numbers(kwargs, dtype, shape):
    import warnings

    out = []
    for lib in (torch, engine):
        g = lib.Generator().manual_seed(1)
        w = lib.empty(*shape, dtype=getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = lib.nn.init.trunc_normal_(w, **kwargs, generator=g)
        assert r is w
        out.append(arr(w))
    assert out[1].dtype == out[0].dtype and out[1].tobytes() == out[0].tobytes()
    lo, hi = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
    assert out[1].min() >= np.float32(lo) and out[1].max() <= np.float32(hi)


@pytest.mark.parametrize("shape", [(3, 5), (6, 4), (4, 2, 3), (1, 1), (8, 8)])
@pytest.mark.parametrize("gain", [1, 2.5])
def test_orthogonal_gives_pytorchs_matrix(shape, gain):
    out = []
    for lib in (torch, engine):
        lib.manual_seed(2)
        w = lib.empty(*shape)
        lib.nn.init.orthogonal_(w, gain=gain)
        out.append(arr(w))
    np.testing.assert_allclose(out[1], out[0], rtol=0, atol=2e-6 * gain)  # LAPACK QR rounding, same draws
    m = out[1].reshape(shape[0], -1)
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-5 * gain ** 2)
    assert torch.rand(1).item() == pytest.approx(engine.rand(1).item())  # the generators moved alike


def test_init_errors_match():
    for lib in (torch, engine):
        with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
            lib.nn.init.orthogonal_(lib.empty(3))
