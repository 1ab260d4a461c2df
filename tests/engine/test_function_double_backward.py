"""Custom autograd.Function under create_graph (its backward's own ops are recorded, so second derivatives work),
backward(create_graph=True, inputs=...), ctx.mark_dirty, once_differentiable, set_materialize_grads: finite
differences in float64, and the same programs against PyTorch when it is installed."""
import numpy as np
import pytest

import engine

rng = np.random.default_rng(3)


def functions(lib):
    """The same custom Functions written against `lib` (engine or torch)."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2

    class SinMul(lib.autograd.Function):  # two inputs, two outputs, a gradient broadcast back to (4,)
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x.sin() * w, (x * w).sum()

        @staticmethod
        def backward(ctx, g_out, g_sum):
            x, w = ctx.saved_tensors
            return g_out * x.cos() * w + g_sum * w, g_out * x.sin() + g_sum * x

    class Once(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.exp()

    class Double_(lib.autograd.Function):  # in place, marked dirty
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Pair(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return (g1 * 2 if g1 is not None else 0) + (g2 * 3 if g2 is not None else 0)

    seen = []
    return Cube, SinMul, Once, Double_, Pair, seen


def loss(lib, x, w):
    Cube, SinMul = functions(lib)[:2]
    a, s = SinMul.apply(Cube.apply(x), w)
    return (a * a).sum() + s * 0.5


def hvp(x, w, vx, vw):
    """(H v) of loss at (x, w) with create_graph through both custom Functions."""
    ts = [engine.tensor(x, requires_grad=True), engine.tensor(w, requires_grad=True)]
    gx, gw = engine.autograd.grad(loss(engine, *ts), ts, create_graph=True)
    assert gx.grad_fn is not None and gw.grad_fn is not None
    return [g.numpy() for g in engine.autograd.grad((gx * engine.tensor(vx)).sum() + (gw * engine.tensor(vw)).sum(),
                                                     ts)]


def first(x, w):
    ts = [engine.tensor(x, requires_grad=True), engine.tensor(w, requires_grad=True)]
    return [g.numpy() for g in engine.autograd.grad(loss(engine, *ts), ts)]


def test_gradgradcheck_through_custom_functions():
    x, w = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))
    vx, vw = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))
    got = hvp(x, w, vx, vw)
    eps = 1e-6
    hi, lo = first(x + eps * vx, w + eps * vw), first(x - eps * vx, w - eps * vw)
    for g, h, l in zip(got, hi, lo):
        np.testing.assert_allclose(g, (h - l) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_backward_create_graph_with_inputs_accumulates_a_graph():
    Cube = functions(engine)[0]
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    w = engine.tensor([1.0, 1.0], requires_grad=True)
    (Cube.apply(x) * w).sum().backward(create_graph=True, inputs=[x])
    assert w.grad is None and type(x.grad.grad_fn).__name__ == "CopyBackwards"
    np.testing.assert_allclose(x.grad.detach().numpy(), [3.0, 12.0])
    x.grad.sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.detach().numpy(), [9.0, 24.0])  # 3x^2 + 6x


def test_once_differentiable_refuses_a_second_derivative():
    Once = functions(engine)[2]
    x = engine.tensor([0.5, 1.0], requires_grad=True)
    g, = engine.autograd.grad(Once.apply(x).sum(), x)  # first order works
    np.testing.assert_allclose(g.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)
    g, = engine.autograd.grad((Once.apply(x) ** 2).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_mark_dirty_makes_the_input_the_output():
    Double_ = functions(engine)[3]
    a = engine.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    c = Double_.apply(b)
    assert c is b and type(c.grad_fn).__name__ == "Double_Backward"
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place"):
        Double_.apply(a)


def test_set_materialize_grads_false_passes_none():
    Pair, seen = functions(engine)[4:]
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    _, q = Pair.apply(x)
    q.sum().backward()
    assert seen == [(True, False)]
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


# ---------------------------------------------------------------- against PyTorch
def _both(program):
    torch = pytest.importorskip("torch")
    return program(engine), program(torch)


def _close(a, b):
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x.detach().numpy()), y.detach().numpy(), rtol=1e-6, atol=1e-9)


def test_second_derivatives_match_torch():
    x0, w0 = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))

    def program(lib):
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True)
        gx, gw = lib.autograd.grad(loss(lib, x, w), (x, w), create_graph=True)
        hx, hw = lib.autograd.grad(gx.sum() + (gw ** 2).sum(), (x, w))
        return gx, gw, hx, hw, type(gx.grad_fn).__name__

    e, t = _both(program)
    _close(e[:4], t[:4])
    assert e[4] == t[4]


def test_mark_dirty_once_differentiable_and_inputs_match_torch():
    def program(lib):
        Cube, _, Once, Double_, _, _ = functions(lib)
        x = lib.tensor([0.5, -1.5], requires_grad=True, dtype=lib.float64)
        y = Double_.apply(Cube.apply(x) * 1)
        y.backward(lib.ones(2, dtype=lib.float64), create_graph=True, inputs=[x])
        first = x.grad.clone()
        x.grad.sum().backward(inputs=[x])
        g, = lib.autograd.grad((Once.apply(x) * 3).sum(), x)
        return first, x.grad, g, repr(y).replace("Double_", "D")

    e, t = _both(program)
    _close(e[:3], t[:3])
    assert e[3] == t[3]
