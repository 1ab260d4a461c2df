"""In-place ops through a view under autograd write through to the view's base, as PyTorch's do: the base's
grad_fn becomes CopySlices, the view's AsStridedBackward0, and gradients match PyTorch and finite differences.
bernoulli's nodes (BernoulliBackward0/1, grad_fn=<NotImplemented> for bernoulli(x, p)) match PyTorch's too."""
from __future__ import annotations

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

X = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.5], [2.0, 1.0, -0.75]])

# each program: x (3 x 3, requires grad) -> a scalar loss, written once for both libraries
PROGRAMS = {
    "row_add": "y = x * 2\nv = y[0]\nv += 1\nloss = (y * y).sum()",
    "row_mul_method": "y = x * 2\ny[1].mul_(x[2])\nloss = (y * y).sum()",
    "column_slice": "y = x + 1\nc = y[:, 1:]\nc *= 3\nloss = (y ** 2).sum()",
    "transpose_view": "y = x + 0\nt = y.t()\nt[0] -= x[1]\nloss = (y * x).sum()",
    "view_of_view": "y = x * 1\nr = y[1:]\ne = r[1]\ne.mul_(x[0])\nloss = (y ** 3).sum()",
    "zero_on_view": "y = x * x\ny[2].zero_()\nloss = (y * x).sum()",
    "setitem_on_view": "y = x * 3\nv = y[0]\nv[1] = x[1, 1] * 5\nloss = (y * y).sum()",
    "view_used_after": "y = x * 2\nv = y[1]\nv.add_(1)\nloss = (v * v).sum() + y.sum()",
    "copy_into_view": "y = x * 1\ny.narrow(1, 0, 2).copy_(x[:, 1:] * 4)\nloss = (y * y).sum()",
    "unsqueeze_view": "y = x.sin()\nu = y.unsqueeze(0)\nu.div_(2)\nloss = (y * x).sum()",
}


def _run(lib, source, arr):
    x = lib.tensor(arr, requires_grad=True)
    env = {"torch": lib, "x": x}
    for line in source.split("\n"):
        name, _, expr = line.partition(" = ")
        if _ and name.isidentifier():
            env[name] = eval(expr, env)  # noqa: S307 - the test's own programs
        else:
            exec(line, env)  # noqa: S102 - the test's own programs
    return env, x


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inplace_through_a_view_matches_pytorch(name):
    source = PROGRAMS[name]
    env_e, x_e = _run(engine, source, X)
    env_t, x_t = _run(torch, source, X)
    for var in ("y", "loss"):
        np.testing.assert_allclose(env_e[var].detach().numpy(), env_t[var].detach().numpy(), rtol=1e-12)
        assert type(env_e[var].grad_fn).__name__ == type(env_t[var].grad_fn).__name__
    env_e["loss"].backward()
    env_t["loss"].backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=1e-10)
    # finite differences of the engine's own loss
    eps, fd = 1e-6, np.zeros_like(X)
    for i in np.ndindex(X.shape):
        hi, lo = X.copy(), X.copy()
        hi[i] += eps
        lo[i] -= eps
        with engine.no_grad():
            fd[i] = (_run(engine, source, hi)[0]["loss"].item() - _run(engine, source, lo)[0]["loss"].item()) / (2 * eps)
    np.testing.assert_allclose(x_e.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


def test_other_views_of_the_base_take_the_written_history():
    source = "y = x * 1\nr = y[1:]\ne = r[1]\ne.mul_(x[0])\nloss = (r * r).sum()"
    env_e, x_e = _run(engine, source, X)
    env_t, x_t = _run(torch, source, X)
    env_e["loss"].backward()
    env_t["loss"].backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=1e-10)


def test_the_view_keeps_aliasing_its_base_after_the_write():
    for lib in (engine, torch):
        x = lib.ones(2, 3, requires_grad=True)
        y = x * 2
        v = y[0]
        v += 1
        assert type(v.grad_fn).__name__ == "AsStridedBackward0"
        with lib.no_grad():
            v[0] = 7.0  # a later write through the same view still reaches y
        assert y[0, 0].item() == 7.0


def test_inplace_on_a_view_of_a_leaf_is_pytorchs_error():
    for lib in (engine, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                               "in-place operation."):
            x[0].add_(1)
        with lib.no_grad():  # the optimizer's way: allowed
            x[0].add_(1)
        assert x[0, 0].item() == 2.0


def test_writing_through_an_expanded_view_is_refused():
    for lib in (engine, torch):
        x = lib.ones(3, requires_grad=True)
        y = (x * 2).unsqueeze(0).expand(4, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single "
                                               "memory location"):
            y.add_(1)


def test_views_without_autograd_still_write_in_place():
    y = engine.zeros(2, 3)
    v = y[1]
    v += 4
    assert y.tolist() == [[0.0, 0.0, 0.0], [4.0, 4.0, 4.0]]
    assert y.grad_fn is None and v.grad_fn is None


def _bernoulli_cases(lib):
    p = lib.full((3,), 0.5, requires_grad=True)
    lib.manual_seed(0)
    drawn_into_plain = lib.empty(3).bernoulli_(p)
    drawn = lib.bernoulli(p)
    with lib.no_grad():
        quiet = lib.bernoulli(p)
    return p, drawn_into_plain, drawn, quiet


def test_bernoulli_nodes_and_zero_gradients_match_pytorch():
    p_e, into_e, drawn_e, quiet_e = _bernoulli_cases(engine)
    p_t, into_t, drawn_t, quiet_t = _bernoulli_cases(torch)
    for e, t in ((into_e, into_t), (drawn_e, drawn_t), (quiet_e, quiet_t)):
        assert e.tolist() == t.tolist()
        assert e.requires_grad == t.requires_grad
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert [f is None for f, _ in into_e.grad_fn.next_functions] == [f is None for f, _ in into_t.grad_fn.next_functions]
    (into_e.sum() + drawn_e.sum()).backward()
    (into_t.sum() + drawn_t.sum()).backward()
    assert p_e.grad.tolist() == p_t.grad.tolist() == [0.0, 0.0, 0.0]


def test_bernoulli_with_a_float_p_has_no_derivative_as_in_pytorch():
    for lib in (engine, torch):
        x = lib.full((3,), 0.5, requires_grad=True)
        b = lib.bernoulli(x, 0.3)
        assert b.requires_grad and type(b.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not implemented"):
            b.sum().backward()
