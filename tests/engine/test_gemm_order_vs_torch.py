"""float32 mm / addmm / mv in the order torch's BLAS sums them on an AVX-512 host (engine/gemm_order.py).

Where `ordered_product` answers, it must equal torch bit for bit over random shapes and layouts (row- and column-major
A and B, with and without a bias); where it answers None the engine keeps numpy's product. End to end: a Linear(3, 1)
layer's forward and its SGD steps print PyTorch's numbers, as bench/long.py's print_every_step does.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import engine
from engine import gemm_order

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not gemm_order.ACTIVE, reason="the orders are MKL's AVX-512 kernels'")


def _matrix(gen, rows, cols, column_major):
    return torch.randn(cols, rows, generator=gen).t() if column_major else torch.randn(rows, cols, generator=gen)


def test_every_product_it_orders_is_torchs_bit_for_bit():
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(7)
    rnd = random.Random(3)
    ordered = 0
    for _ in range(700):
        m = rnd.choice([1, 2, 3, 4, 5, 8, 16, 64, 100, 256, 1000])
        k = rnd.choice([*range(1, 13), 16, 20, 32, 50, 64, 100, 256, 784])
        n = rnd.choice([*range(1, 10), 10, 12, 16, 32])
        a = _matrix(gen, m, k, rnd.random() < 0.5)
        b = _matrix(gen, k, n, rnd.random() < 0.5)
        bias = torch.randn(n, generator=gen) if rnd.random() < 0.5 else None
        expected = (a @ b if bias is None else torch.addmm(bias, a, b)).numpy()
        out = gemm_order.ordered_product(a.numpy(), b.numpy(), None if bias is None else bias.numpy())
        if out is None:
            continue
        ordered += 1
        assert out.dtype == np.float32 and out.flags.c_contiguous
        assert np.array_equal(out, expected), (m, k, n, a.is_contiguous(), b.is_contiguous(), bias is not None)
    assert ordered > 150  # the sweep reached the kernels it claims


@pytest.mark.parametrize(("rows", "depth"), [(64, 3), (2000, 3), (50, 2), (7, 4), (300, 1)])
def test_matrix_vector_products_are_torchs(rows, depth):
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(rows + depth)
    a, v = torch.randn(rows, depth, generator=gen), torch.randn(depth, generator=gen)
    out = engine.tensor(a.numpy()) @ engine.tensor(v.numpy())
    assert np.array_equal(out.numpy(), (a @ v).numpy())
    g = torch.randn(rows, generator=gen)  # mv's gradient for A: an outer product (each element one product, exact)
    a_t, a_e = a.clone().requires_grad_(), engine.tensor(a.numpy(), requires_grad=True)
    (a_t @ v).backward(g)
    (a_e @ engine.tensor(v.numpy())).backward(engine.tensor(g.numpy()))
    assert np.array_equal(a_e.grad.numpy(), a_t.grad.numpy())


def test_a_linear_layer_trains_as_in_pytorch():
    """Linear(3, 1) + mse_loss + SGD over 64 rows: numpy's fused multiply-adds made a fifth of the outputs differ in
    the last bit, and the printed loss from step 9 on (bench/long.py print_every_step)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    engine.manual_seed(0)
    x_t, x_e = torch.randn(64, 3), engine.randn(64, 3)
    w_true = [[1.5], [-2.0], [0.5]]
    y_t, y_e = x_t @ torch.tensor(w_true) + 0.3, x_e @ engine.tensor(w_true) + 0.3
    model_t, model_e = torch.nn.Linear(3, 1), engine.nn.Linear(3, 1)
    opt_t = torch.optim.SGD(model_t.parameters(), lr=0.05)
    opt_e = engine.optim.SGD(model_e.parameters(), lr=0.05)
    for _ in range(30):
        loss_t = torch.nn.functional.mse_loss(model_t(x_t), y_t)
        loss_e = engine.nn.functional.mse_loss(model_e(x_e), y_e)
        assert loss_e.item() == loss_t.item()
        opt_t.zero_grad()
        opt_e.zero_grad()
        loss_t.backward()
        loss_e.backward()
        opt_t.step()
        opt_e.step()
    for p_t, p_e in zip(model_t.parameters(), model_e.parameters()):
        assert np.array_equal(p_e.detach().numpy(), p_t.detach().numpy())


def test_what_it_leaves_to_numpy():
    f32 = np.ones((8, 4), np.float32)
    assert gemm_order.ordered_product(f32.astype(np.float64), np.ones((4, 2))) is None  # float64: numpy's
    assert gemm_order.ordered_product(f32, np.ones((4, 16), np.float32)) is None  # 16 columns: the FMA kernel
    assert gemm_order.product_order(np.ones((64, 300), np.float32), np.ones((300, 2), np.float32)) is None  # deep
    assert gemm_order.product_order(np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)) is None  # 3 rows


@pytest.mark.parametrize("depth", [5, 6, 7, 8])
@pytest.mark.parametrize("rows", [4, 5, 7, 64, 1001])
def test_one_output_linear_layers_are_torchs(rows, depth):
    """Linear(5..8, 1): MKL sums rows four at a time with two of the products apart, the rows left over in k order."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(rows * 10 + depth)
    x, w, b = torch.randn(rows, depth, generator=gen), torch.randn(1, depth, generator=gen), torch.randn(1, generator=gen)
    out = engine.nn.functional.linear(engine.tensor(x.numpy()), engine.tensor(w.numpy()), engine.tensor(b.numpy()))
    assert np.array_equal(out.numpy(), torch.nn.functional.linear(x, w, b).numpy())
    assert gemm_order.product_order(x.numpy(), w.numpy().T) == gemm_order.PAIRED_TAIL
