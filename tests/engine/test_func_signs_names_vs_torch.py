"""torch.func details against PyTorch 2.13 (issue 21 section 3): jacfwd's zeros carry forward mode's signs (a
Jacobian entry f'(x_i)·0 is -0.0 where f'(x_i) < 0, row by row, where jacrev's follow the columns), vmap's output
is named as PyTorch's batched result (not StackBackward0), and F.linear's nodes are at::linear's."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

X = [1.0, -2.0, 0.5, -0.25]


def _functions(lib):
    return {
        "sin": lambda x: x.sin(), "square": lambda x: x * x, "abs": lambda x: x.abs(), "neg": lambda x: -x,
        "tanh": lambda x: x.tanh(), "scaled": lambda x: x[0] * x, "relu": lambda x: lib.relu(x),
        "cumsum": lambda x: x.cumsum(0), "exp": lambda x: (x * 0.5).exp(), "pow": lambda x: x ** 3,
        "matmul": lambda x: lib.ones(2, 4) @ x, "sum": lambda x: x.sum(),
    }


@pytest.mark.parametrize("name", list(_functions(torch)))
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_jacobian_zeros_have_torchs_signs(name, transform):
    out = {}
    for lib in (engine, torch):
        j = getattr(lib.func, transform)(_functions(lib)[name])(lib.tensor(X))
        out[lib] = j.detach().numpy() if lib is torch else np.asarray(j._data)
    # NOTE: values agree to libm's last bit (numpy's cos is correctly rounded, PyTorch's is not always)
    np.testing.assert_allclose(out[engine], out[torch], rtol=1e-6, atol=0)
    np.testing.assert_array_equal(np.signbit(out[engine]), np.signbit(out[torch]))


def test_hessian_signs_and_values():
    out = {}
    for lib in (engine, torch):
        h = lib.func.hessian(lambda x: (x.sin() * x).sum())(lib.tensor(X))
        out[lib] = h.detach().numpy() if lib is torch else np.asarray(h._data)
    np.testing.assert_allclose(out[engine], out[torch], rtol=1e-6, atol=0)
    np.testing.assert_array_equal(np.signbit(out[engine]), np.signbit(out[torch]))


def test_jacfwd_through_a_custom_function_still_works():
    class Cube(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2  # not twice differentiable: jacfwd must not use a double backward here

    j = engine.func.jacfwd(Cube.apply)(engine.tensor(X))
    np.testing.assert_allclose(np.asarray(j._data), np.diag(3 * np.asarray(X) ** 2), rtol=1e-6)


def _vmapped(lib):
    F = lib.nn.functional
    W = lib.ones(3, 2) * 0.5
    return {
        "sin": lambda x: x.sin(), "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(0), "mean": lambda x: x.mean(),
        "max": lambda x: x.max(), "min": lambda x: x.min(), "mv": lambda x: lib.ones(2, 3) @ x, "vm": lambda x: x @ W,
        "dot": lambda x: x.dot(x), "norm": lambda x: x.norm(), "t": lambda x: x.unsqueeze(0).t(),
        "mse": lambda x: F.mse_loss(x, lib.zeros(3)), "prod": lambda x: x.prod(), "linear": lambda x: F.linear(x, W.t()),
        "softmax": lambda x: F.softmax(x, 0), "index": lambda x: x[0], "where": lambda x: lib.where(x > 0, x, x * 2),
        "matmul_2d": lambda x: x.unsqueeze(0) @ W, "var": lambda x: x.var(), "cat": lambda x: lib.cat([x, x]),
    }


@pytest.mark.parametrize("name", list(_vmapped(torch)))
def test_vmap_output_is_named_as_torchs_batched_result(name):
    names, values = {}, {}
    for lib in (engine, torch):
        x = lib.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 5 - 1, requires_grad=True)
        out = lib.func.vmap(_vmapped(lib)[name])(x)
        names[lib] = type(out.grad_fn).__name__
        out.sum().backward()
        values[lib] = (out.detach().numpy(), x.grad.numpy())
    assert names[engine] == names[torch]
    for a, b in zip(values[engine], values[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3,), (4, 3), (5, 4, 3)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_nodes_are_at_linears(shape, with_bias):
    chains = {}
    for lib in (engine, torch):
        w = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(2, requires_grad=True) if with_bias else None
        fn = lib.nn.functional.linear(lib.ones(*shape, requires_grad=True), w, b).grad_fn
        chain = []
        while fn is not None and len(chain) < 3:
            chain.append(type(fn).__name__)
            nxt = [n for n, _ in fn.next_functions if n is not None and type(n).__name__ != "AccumulateGrad"]
            fn = nxt[0] if nxt else None
        chains[lib] = chain
    assert chains[engine] == chains[torch]
