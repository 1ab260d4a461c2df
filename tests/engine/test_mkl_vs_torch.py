"""PyTorch's own digits: MKL's vector maths and products (engine/vml.py, engine/mkl_gemm.py) and ATen's SLEEF
kernels (engine/sleef.py: sigmoid, softmax, log_softmax; engine/nll_sum.py: nll_loss's cascade; engine/aten_norm.py:
the 2-norm and clip_grad_norm_), bit for bit
against PyTorch 2.13 on one thread. Without MKL the fallbacks are checked against correctly rounded values."""
import os
import pathlib
import platform
import re
import subprocess
import sys

import numpy as np
import pytest

import engine
import engine.nn.functional as EF
from engine import mkl, mkl_gemm, sleef, vml

ROOT = pathlib.Path(__file__).resolve().parents[2]
torch = pytest.importorskip("torch")
if platform.machine() not in ("x86_64", "AMD64"):  # ATen's SLEEF blocks and lanes here are x86's (AVX2 / AVX-512)
    pytest.skip("the ported kernels follow ATen's x86 builds", allow_module_level=True)
needs_mkl = pytest.mark.skipif(not mkl.AVAILABLE, reason="the mkl wheel is not installed here")


@pytest.fixture(autouse=True)
def _one_thread():
    # NOTE: on more threads MKL splits some products between them and sums those in another order
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _bits_equal(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    both_nan = np.isnan(ours) & np.isnan(theirs)
    mismatched = (ours != theirs) & ~both_nan
    assert not mismatched.any(), f"{mismatched.sum()} of {ours.size} differ, e.g. {ours[mismatched][:3]} vs " \
                                 f"{theirs[mismatched][:3]}"


def test_the_image_keeps_every_library_the_engine_loads():
    keep = re.search(r'MKL_KEEP="([^"]+)"', (ROOT / "Dockerfile").read_text()).group(1).split()
    assert sorted(keep) == sorted(mkl.REQUIRED)


UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "tanh", "exp", "log", "log2", "log10", "sqrt", "erf"]


def _inputs(name, dtype, rng, n=20_000):
    x = rng.standard_normal(n) * 4
    if name in ("asin", "acos"):
        x = np.tanh(x)
    if name in ("log", "log2", "log10", "sqrt"):
        x = np.abs(x) + 1e-3
    return x.astype(dtype)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_elementwise_functions_are_torchs(name, dtype):
    x = _inputs(name, dtype, np.random.default_rng(len(name)))
    _bits_equal(getattr(engine, name)(engine.tensor(x)).numpy(), getattr(torch, name)(torch.from_numpy(x)).numpy())
    # a strided view, a 0-d tensor, integers (computed in float32, as in torch)
    view = x.reshape(100, 200)[:, ::3]
    _bits_equal(getattr(engine, name)(engine.tensor(x.reshape(100, 200))[:, ::3]).numpy(),
                getattr(torch, name)(torch.from_numpy(np.ascontiguousarray(view))).numpy())
    _bits_equal(getattr(engine, name)(engine.tensor(x[7])).numpy(), getattr(torch, name)(torch.tensor(x[7])).numpy())
    ints = np.arange(1, 40)
    _bits_equal(getattr(engine, name)(engine.tensor(ints)).numpy(), getattr(torch, name)(torch.tensor(ints)).numpy())


@needs_mkl
@pytest.mark.parametrize("name", ["sin", "cos", "exp", "log", "tanh", "sqrt", "erf", "sigmoid"])
def test_their_gradients_are_torchs(name):
    x = _inputs(name, np.float32, np.random.default_rng(3), 5_000)
    g = np.random.default_rng(4).standard_normal(5_000).astype(np.float32)
    ours, theirs = engine.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    getattr(engine, name)(ours).backward(engine.tensor(g))
    getattr(torch, name)(theirs).backward(torch.tensor(g))
    _bits_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_without_mkl_each_function_is_rounded_once_from_float64(monkeypatch):
    monkeypatch.setattr(vml, "_KERNELS", {})
    x = _inputs("exp", np.float32, np.random.default_rng(0))
    for name in ("sin", "exp", "tanh"):
        fallback = vml._function(name)
        _bits_equal(fallback(x), getattr(np, name)(x.astype(np.float64)).astype(np.float32))
    assert vml._function("exp")(np.float32(1)) == np.float32(np.exp(1.0))


def test_the_engine_runs_without_mkl():
    code = ("import engine, numpy as np; from engine import mkl, mkl_gemm; assert not mkl.AVAILABLE; "
            "a = engine.tensor([[1., 2.], [3., 4.]]); print((a @ a).tolist(), a.exp().sum().item())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={**os.environ, "FLOWGRAD_NO_MKL": "1"})
    assert out.stdout.startswith("[[7.0, 10.0], [15.0, 22.0]]")


@needs_mkl
def test_matrix_products_are_torchs_at_every_shape_and_layout():
    rng = np.random.default_rng(1)
    for trial in range(240):
        m, k, n = (int(v) for v in rng.integers(1, 150, 3))
        kind = trial % 8
        if kind == 0:
            m, k, n = int(rng.integers(1, 40)), int(rng.integers(1000, 6000)), int(rng.integers(1, 40))
        m, n, k = (1 if kind == 1 else m), (1 if kind == 2 else n), (1 if kind == 3 else k)
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        if (trial // 8) % 2:
            b = np.ascontiguousarray(b.T).T  # a Linear layer's W.t()
        if (trial // 16) % 2:
            a = np.ascontiguousarray(a.T).T  # a gradient's g.t()
        bias = rng.standard_normal(n).astype(np.float32) if trial % 3 == 0 else None
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        theirs = torch.addmm(torch.from_numpy(bias), ta, tb) if bias is not None else ta @ tb
        _bits_equal(mkl_gemm.product(a, b, bias), theirs.numpy())
    for trial in range(60):
        m, k = (int(v) for v in rng.integers(1, 300, 2))
        a = rng.standard_normal((m, k)).astype(np.float32)
        if trial % 2:
            a = np.ascontiguousarray(a.T).T
        v = rng.standard_normal(k).astype(np.float32)
        _bits_equal(mkl_gemm.matrix_vector(a, v), torch.mv(torch.from_numpy(a), torch.from_numpy(v)).numpy())


@needs_mkl
def test_a_linear_layers_forward_and_backward_are_torchs():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    w = (rng.standard_normal((128, 784)) * 0.03).astype(np.float32)
    bias = rng.standard_normal(128).astype(np.float32)
    g = rng.standard_normal((64, 128)).astype(np.float32)
    grads = []
    for lib, F in ((engine, EF), (torch, torch.nn.functional)):
        xs, ws, bs = (lib.tensor(v, requires_grad=True) for v in (x, w, bias))
        out = F.linear(xs, ws, bs)
        out.backward(lib.tensor(g))
        grads.append([out.detach().numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()])
    for ours, theirs in zip(*grads):
        _bits_equal(ours, theirs)


def test_sigmoid_is_atens_kernel_on_every_layout():
    rng = np.random.default_rng(5)
    for shape in [(20_000,), (7,), (33,), (64, 45), (3, 5, 70), ()]:
        x = np.asarray(rng.standard_normal(shape) * 6, np.float32)
        views = [lambda t: t, lambda t: t.T if t.ndim == 2 else t, lambda t: t[..., 3:] if t.ndim else t]
        for view in views:
            _bits_equal(engine.sigmoid(view(engine.tensor(x))).numpy(),
                        torch.sigmoid(view(torch.from_numpy(x))).numpy())
    special = np.tile(np.array([0, -0.0, 1e-40, -200, 200, 88, -88, -103, -104.5, np.inf, -np.inf, np.nan],
                               np.float32), 4)
    _bits_equal(engine.sigmoid(engine.tensor(special)).numpy(), torch.sigmoid(torch.from_numpy(special)).numpy())
    _bits_equal(sleef.expf_u10(np.zeros(3, np.float32)), np.ones(3, np.float32))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax_are_torchs_forward_and_backward(name):
    rng = np.random.default_rng(6)
    for shape in [(7,), (4, 3), (300, 10), (64, 27), (5, 4, 33), (2, 1000), (3, 16), (1, 1), (6, 17)]:
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        ours, theirs = engine.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, ref = getattr(engine, name)(ours, -1), getattr(torch, name)(theirs, -1)
        out.backward(engine.tensor(g))
        ref.backward(torch.tensor(g))
        _bits_equal(out.detach().numpy(), ref.detach().numpy())
        _bits_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_sleefs_log_is_within_an_ulp_and_handles_the_edges():
    # bit for bit it is checked through log_softmax above (its per-row log); here its accuracy and special values
    d = np.random.default_rng(8).random(50_000).astype(np.float32) * 100 + np.float32(1e-30)
    values = sleef.logf_u10(d)
    assert np.max(np.abs(values.astype(np.float64) - np.log(d.astype(np.float64))) / np.spacing(values)) <= 1.0
    edges = sleef.logf_u10(np.float32([0, -1, np.inf, np.nan, 1]))
    assert edges[0] == -np.inf and np.isnan(edges[1]) and edges[2] == np.inf and np.isnan(edges[3]) and edges[4] == 0


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_sums_as_atens_cascade(reduction):
    rng = np.random.default_rng(7)
    for trial in range(60):
        n, c = int(rng.integers(1, 700)), int(rng.integers(2, 12))
        x = (rng.standard_normal((n, c)) * 2).astype(np.float32)
        y = rng.integers(0, c, n)
        kwargs = {}
        if trial % 3 == 1:
            kwargs["weight"] = rng.random(c).astype(np.float32)
        if trial % 3 == 2:
            y[rng.random(n) < 0.2] = -100
        ours = EF.cross_entropy(engine.tensor(x), engine.tensor(y), reduction=reduction,
                                **{k: engine.tensor(v) for k, v in kwargs.items()})
        theirs = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(y), reduction=reduction,
                                                   **{k: torch.tensor(v) for k, v in kwargs.items()})
        _bits_equal(ours.numpy(), theirs.numpy())


def test_the_2_norm_sums_in_atens_order():
    rng = np.random.default_rng(9)
    for n in (1, 3, 4, 5, 7, 8, 9, 13, 15, 17, 45, 200, 1000, 100_000):
        for _ in range(20):
            w = rng.standard_normal(n).astype(np.float32)
            theirs = torch.linalg.vector_norm(torch.from_numpy(w))
            for ours in (engine.linalg.vector_norm(engine.tensor(w)), engine.norm(engine.tensor(w)),
                         engine.tensor(w).norm(), engine.linalg.vector_norm(engine.tensor(w).reshape(1, -1), 2, (0, 1))):
                _bits_equal(ours.numpy(), theirs.numpy())


def test_the_2_norm_along_the_last_dim_sums_each_row_in_atens_order():
    # the word-embeddings tutorial's nearest words: cosine_similarity divides by these norms
    rng = np.random.default_rng(10)
    for rows, size in ((1, 1), (3, 5), (12, 10), (4, 8), (2, 9), (5, 13), (7, 31), (3, 200), (2, 1001)):
        for keep in (False, True):
            w = (rng.standard_normal((rows, size)) * np.exp(rng.standard_normal((rows, size)))).astype(np.float32)
            theirs = torch.linalg.vector_norm(torch.from_numpy(w), dim=-1, keepdim=keep)
            for ours in (engine.linalg.vector_norm(engine.tensor(w), dim=-1, keepdim=keep),
                         engine.tensor(w).norm(2, 1, keepdim=keep)):
                _bits_equal(ours.numpy(), theirs.numpy())
            w3 = w.reshape(1, rows, size)
            _bits_equal(engine.tensor(w3).norm(dim=2).numpy(), torch.from_numpy(w3).norm(dim=2).numpy())
    emb = rng.standard_normal((12, 10)).astype(np.float32)
    ours = EF.cosine_similarity(engine.tensor(emb[3:4]), engine.tensor(emb))
    _bits_equal(ours.numpy(), torch.nn.functional.cosine_similarity(torch.from_numpy(emb[3:4]), torch.from_numpy(emb)).numpy())


def test_clip_grad_norm_is_torchs():
    rng = np.random.default_rng(10)
    for _ in range(40):
        shapes = [(int(rng.integers(1, 40)), int(rng.integers(1, 40))), (int(rng.integers(1, 60)),)]
        grads = [(rng.standard_normal(s) * 3).astype(np.float32) for s in shapes]
        results = []
        for lib in (engine, torch):
            params = [lib.zeros(s, requires_grad=True) for s in shapes]
            for p, g in zip(params, grads):
                p.grad = lib.tensor(g)
            total = lib.nn.utils.clip_grad_norm_(params, 1.0)
            results.append([total.numpy()] + [p.grad.numpy() for p in params])
        for ours, theirs in zip(*results):
            _bits_equal(ours, theirs)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_are_atens_welford_and_two_pass(name):
    rng = np.random.default_rng(11)
    cases = [((32, 64), 0), ((32, 64), 1), ((100, 3), 0), ((4, 1000), 1), ((2, 3, 4), -1), ((50,), None),
             ((40_000,), None), ((7, 5), None)]
    for shape, dims in cases:
        for correction in (0, 1):
            for keep in (False, True):
                w = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
                kwargs = dict(dim=dims, correction=correction, keepdim=keep) if dims is not None else \
                    dict(correction=correction)
                ours, theirs = engine.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
                out, ref = getattr(ours, name)(**kwargs), getattr(theirs, name)(**kwargs)
                g = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
                out.backward(engine.tensor(g))
                ref.backward(torch.tensor(g))
                _bits_equal(out.detach().numpy(), ref.detach().numpy())
                _bits_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_scalar_powers_take_atens_special_kernels():
    x = (np.random.default_rng(12).random(20_000) * 10 + 1e-3).astype(np.float32)
    for exponent in (0.5, -0.5, -1, 2, 3, -2):
        _bits_equal((engine.tensor(x) ** exponent).numpy(), (torch.from_numpy(x) ** exponent).numpy())
    # 1 is a copy and 0 ones (x ** 2's backward asks for x ** 1): no powf, also for nan, inf and -0
    x[:4] = [np.nan, np.inf, -0.0, 0.0]
    for exponent in (0, 1, 0.0, 1.0):
        ours = (engine.tensor(x) ** exponent).numpy()
        _bits_equal(ours, (torch.from_numpy(x) ** exponent).numpy())
        assert np.signbit(ours[2]) == (exponent == 1)


def test_sums_past_atens_grain_are_one_cascade_as_on_one_thread():
    rng = np.random.default_rng(13)
    for shape in [(32_769,), (40_000,), (70_000, 3), (1 << 20,)]:
        big = rng.standard_normal(shape).astype(np.float32)
        _bits_equal(engine.tensor(big).sum().numpy(), torch.from_numpy(big).sum().numpy())
        _bits_equal(engine.tensor(big).mean().numpy(), torch.from_numpy(big).mean().numpy())


def test_other_scalar_powers_are_sleefs_powf_then_libms_pow():
    rng = np.random.default_rng(14)
    for shape in [(20_000,), (7,), (45,), (64, 33), ()]:
        x = np.asarray(rng.standard_normal(shape) * 3, np.float32)
        for exponent in (4.0, 5, 1.5, 0.3, -3.0, 7, 2.5, -0.7):
            for view in (lambda t: t, lambda t: t.T if t.ndim == 2 else t, lambda t: t[..., 3:] if t.ndim else t):
                _bits_equal((view(engine.tensor(x)) ** exponent).numpy(), (view(torch.from_numpy(x)) ** exponent).numpy())
    special = np.tile(np.float32([0, -0.0, 1, -1, 2, -2, np.inf, -np.inf, np.nan, 1e-40, 0.5, -0.5]), 4)
    for exponent in (4.0, 0.3, -3.0, 1.5, -2.5):
        _bits_equal((engine.tensor(special) ** exponent).numpy(), (torch.from_numpy(special) ** exponent).numpy())


def test_silu_forward_and_backward_are_atens():
    rng = np.random.default_rng(15)
    for shape in [(20_000,), (7,), (45,), (64, 33), ()]:
        x = np.asarray(rng.standard_normal(shape) * 4, np.float32)
        g = np.asarray(rng.standard_normal(shape), np.float32)
        ours, theirs = engine.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, ref = EF.silu(ours), torch.nn.functional.silu(theirs)
        out.backward(engine.tensor(g))
        ref.backward(torch.tensor(g))
        _bits_equal(out.detach().numpy(), ref.detach().numpy())
        _bits_equal(ours.grad.numpy(), theirs.grad.numpy())
