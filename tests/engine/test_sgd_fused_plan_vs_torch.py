"""engine/optim/fused.py: plain SGD's fused plan is kept while the parameters' arrays are the same and made
again when a program replaces one; parameters in Fortran order or viewing another tensor go one at a time.
Every case: the same bits as torch's one-at-a-time add_ after each step."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def _run(lib, init, grads, replace_at, replacement, lr=0.0317):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    opt = lib.optim.SGD(params, lr=lr)
    seen = []
    for step, gs in enumerate(grads):
        if step == replace_at:  # a program's `p.data = ...` between steps
            params[1].data = lib.tensor(replacement.copy())
        for p, g in zip(params, gs):
            p.grad = lib.tensor(g.copy())
        opt.step()
        seen.append([_bits(p.detach().numpy() if lib is torch else p._data) for p in params])
    return seen


@pytest.mark.parametrize("layout", ["c", "fortran", "view"])
def test_fused_sgd_follows_replaced_and_unusual_arrays(layout):
    import engine

    rng = np.random.default_rng(11)
    shapes = [(6, 5), (5,), (4, 3), (7,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[(rng.standard_normal(s) * 10.0 ** rng.integers(-5, 1)).astype(np.float32) for s in shapes]
             for _ in range(5)]
    replacement = rng.standard_normal((5,)).astype(np.float32)
    expected = _run(torch, init, grads, 2, replacement)
    got = _run(engine, init, grads, 2, replacement)
    if layout != "c":
        # The same values, stored in Fortran order or as a view of a bigger array: set before the first step.
        params_engine = []
        for i, a in enumerate(init):
            t = engine.tensor(a.copy(), requires_grad=True)
            if layout == "fortran" and a.ndim == 2:
                t._data = np.asfortranarray(t._data)
            elif layout == "view" and i == 0:
                t._data = np.concatenate([t._data, np.zeros_like(t._data)])[: a.shape[0]]
            params_engine.append(t)
        opt = engine.optim.SGD(params_engine, lr=0.0317)
        got = []
        for step, gs in enumerate(grads):
            if step == 2:
                params_engine[1].data = engine.tensor(replacement.copy())
            for p, g in zip(params_engine, gs):
                p.grad = engine.tensor(g.copy())
            opt.step()
            got.append([_bits(p._data) for p in params_engine])
    for step_expected, step_got in zip(expected, got):
        for a, b in zip(step_expected, step_got):
            np.testing.assert_array_equal(a, b)


def test_fused_sgd_with_lr_zero_and_infinite_gradients():
    """lr = 0: saxpy would skip the update, torch still adds 0 * inf = NaN; the numpy path does as torch."""
    import engine

    rng = np.random.default_rng(12)
    shapes = [(6, 5), (5,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes]]
    grads[0][0][0, 0] = np.inf
    expected = _run(torch, init, grads, -1, None, lr=0.0)
    got = _run(engine, init, grads, -1, None, lr=0.0)
    for a, b in zip(expected[0], got[0]):
        np.testing.assert_array_equal(a, b)


def test_fused_sgd_without_kept_buffers(monkeypatch):
    """A plan too big to keep its buffers between steps makes them per step: the same bits."""
    from engine.optim import fused

    monkeypatch.setattr(fused, "KEEP_UP_TO", 0)
    test_fused_sgd_follows_replaced_and_unusual_arrays("c")
