"""PyTorch's view replay (engine/view_replay.py): after an in-place op under autograd on a base, or through one of
its views, every other view of that base sees the written values and takes the base's new history
(AsStridedBackward0), so gradients through it are PyTorch's. Checked against torch and finite differences."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import engine
from engine import views

torch = pytest.importorskip("torch")

X = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.5], [2.0, 1.0, -0.75]])

# each program: x (3 x 3, requires grad) -> a scalar loss; `views` names the views whose grad_fn is compared
PROGRAMS = {
    "two_rows": ("y = x * 2\na = y[0]\nb = y[1]\na.mul_(3)\nloss = (b * b).sum() + (a * a).sum()", "ab"),
    "row_then_column": ("y = x * 2\na = y[0]\nc = y[:, 1]\na.mul_(5)\nloss = (c * c).sum()", "ac"),
    "overlapping_slices": ("y = x * 1\nr = y[1:]\ne = r[1]\ne.mul_(x[0])\nloss = (r * r).sum()", "re"),
    "base_in_place": ("y = x * 2\nv = y[0]\ny.mul_(3)\nloss = (v * v).sum()", "v"),
    "base_add_tensor": ("y = x * 2\nv = y[:, 2]\ny.add_(x)\nloss = (v ** 3).sum()", "v"),
    "transpose_sibling": ("y = x + 0\nt = y.t()\nr = y[1]\nr.add_(x[0])\nloss = (t * x).sum()", "tr"),
    "two_writes": ("y = x * 1\na = y[0]\nb = y[1]\nc = y[:, 0]\na.mul_(2)\nb.add_(a)\n"
                   "loss = (c * c).sum() + (a * b).sum()", "abc"),
    "setitem_on_base": ("y = x * 3\nv = y[0]\nw = y[1:, 1]\ny[1] = x[0] * 5\nloss = (v * v).sum() + (w * x[0, :2]).sum()",
                        "vw"),
    "base_zero": ("y = x * x\nv = y[2]\ny.zero_()\nloss = ((v + x[0]) ** 2).sum()", "v"),
    "view_of_view_sibling": ("y = x * 2\nr = y[1:]\ns = y[:, :2]\nr.mul_(x[0])\nloss = (s * s).sum()", "rs"),
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
def test_other_views_take_the_written_history_as_in_pytorch(name):
    source, names = PROGRAMS[name]
    env_e, x_e = _run(engine, source, X)
    env_t, x_t = _run(torch, source, X)
    for var in ("y", "loss", *names):
        np.testing.assert_allclose(env_e[var].detach().numpy(), env_t[var].detach().numpy(), rtol=1e-12)
        assert type(env_e[var].grad_fn).__name__ == type(env_t[var].grad_fn).__name__, var
    env_e["loss"].backward()
    env_t["loss"].backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=1e-10)
    eps, fd = 1e-6, np.zeros_like(X)
    for i in np.ndindex(X.shape):
        hi, lo = X.copy(), X.copy()
        hi[i] += eps
        lo[i] -= eps
        with engine.no_grad():
            fd[i] = (_run(engine, source, hi)[0]["loss"].item() - _run(engine, source, lo)[0]["loss"].item()) / (2 * eps)
    np.testing.assert_allclose(x_e.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


def test_a_view_of_a_base_without_grad_takes_the_written_history():
    results = []
    for lib in (engine, torch):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.zeros(2, 3)
        row, column = y[1], y[:, 0]
        row.copy_(w * 2)  # y and its other views now depend on w
        loss = (column * 10).sum() + (row * row).sum()
        loss.backward()
        results.append((type(column.grad_fn).__name__, column.detach().numpy().copy(), w.grad.numpy().copy()))
    (name_e, col_e, grad_e), (name_t, col_t, grad_t) = results
    assert name_e == name_t
    np.testing.assert_array_equal(col_e, col_t)
    np.testing.assert_allclose(grad_e, grad_t)


def test_writes_without_autograd_keep_views_as_they_were():
    for lib in (engine, torch):
        y = lib.zeros(2, 3)
        v = y[0]
        y.add_(1)
        assert v.grad_fn is None and v.sum().item() == 3.0


def test_the_view_list_stays_bounded_in_a_long_loop():
    """A loop taking a view of one base each step keeps only the live ones (hostile: memory stays bounded)."""
    x = engine.ones(50, 3, requires_grad=True)
    y = x * 2
    for step in range(20_000):
        _ = y[step % 50]
    gc.collect()
    entry = views._VIEWS[id(y)]
    assert len(entry[1]) <= 2 * views._PRUNE_FROM + 64
    del y, entry
    gc.collect()
    assert not any(ref() is None for ref, _ in views._VIEWS.values())  # a dead base's entry is dropped


def test_an_expanded_sibling_is_left_alone_and_writes_through_it_are_refused():
    x = engine.ones(3, requires_grad=True)
    y = x * 2
    wide = y.unsqueeze(0).expand(4, 3)
    y[0:2].mul_(3)  # replay skips the expanded view (PyTorch would replay it lazily, with stride 0)
    assert wide.shape == (4, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
        wide.add_(1)


@pytest.mark.parametrize("op", ["exp_", "sigmoid_", "tanh_"])
def test_a_base_with_views_keeps_its_version_check_on_a_saved_result(op):
    """An op that saves its result (exp_) on a base with a live view, then another in-place op: backward is refused
    with PyTorch's message, as it is without the view (the written-into memory is what the node reads)."""
    messages = []
    for lib in (engine, torch):
        x = lib.tensor(X, requires_grad=True)
        y = x * 1
        v = y[0]  # noqa: F841 - kept alive: the base has a live view
        getattr(y, op)()
        y.mul_(2)
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        messages.append(str(error.value))
    assert messages[0] == messages[1]
