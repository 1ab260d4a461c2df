"""Finite differences (float64) through programs' own differentiable ops: a custom autograd.Function with two
inputs and two outputs inside a larger graph, and a gradient its backward returns broadcast (summed back)."""
import numpy as np

import engine as torch

rng = np.random.default_rng(1)


class SinMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x.sin() * w, (x * w).sum()

    @staticmethod
    def backward(ctx, g_out, g_sum):
        x, w = ctx.saved_tensors
        return g_out * x.cos() * w + g_sum * w, g_out * x.sin() + g_sum * x  # w's gradient is (3, 4): summed to (4,)


def loss(x, w):
    a, s = SinMul.apply(x, w)
    return (a * a).sum() + s * 0.5


def numeric(f, arrays, i, eps=1e-6):
    grad = np.zeros_like(arrays[i])
    for idx in np.ndindex(arrays[i].shape):
        hi = [a.copy() for a in arrays]
        lo = [a.copy() for a in arrays]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        grad[idx] = (f(*[torch.tensor(a) for a in hi]).item() - f(*[torch.tensor(a) for a in lo]).item()) / (2 * eps)
    return grad


def test_custom_function_matches_finite_differences():
    xs = [rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,))]
    ts = [torch.tensor(a, requires_grad=True) for a in xs]
    loss(*ts).backward()
    for i, t in enumerate(ts):
        np.testing.assert_allclose(t.grad.numpy(), numeric(loss, xs, i), rtol=1e-5, atol=1e-7)


def test_hooks_scale_gradients_exactly():
    xs = [rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,))]
    ts = [torch.tensor(a, requires_grad=True) for a in xs]
    a, s = SinMul.apply(*ts)
    a.register_hook(lambda g: g * 3)
    ((a * a).sum() + s * 0.5).backward()

    def scaled(x, w):  # the same loss with the first output's gradient tripled: a chain of a * 3 with no value change
        a, s = SinMul.apply(x, w)
        return (a * a).sum() * 3 + s * 0.5

    for i, t in enumerate(ts):
        np.testing.assert_allclose(t.grad.numpy(), numeric(scaled, xs, i), rtol=1e-5, atol=1e-7)
