"""The deprecated Module.register_backward_hook as PyTorch 2.13 still runs it: the hook sees the gradients of the
module's last op (grad_input per next_function of the output's grad_fn), may replace them, warns in PyTorch's words,
and cannot be mixed with register_full_backward_hook."""
import warnings

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def scenario(lib):
    lib.manual_seed(0)
    seen = []

    def hook(m, gi, go):
        seen.append((type(m).__name__, [None if g is None else g.detach().numpy().copy() for g in gi],
                     [g.detach().numpy().copy() for g in go]))

    lin = lib.nn.Linear(3, 2)
    seq = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
    tanh = lib.nn.Tanh()
    with lib.no_grad():  # the same weights in both libraries
        for m in (lin, seq[0]):
            m.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7 - 0.3))
            m.bias.copy_(lib.tensor([0.1, -0.2]))
    for m in (lin, seq, tanh):
        m.register_backward_hook(hook)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=lib.float32, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = lin(x) + tanh(seq(x))
    y.sum().backward()

    def double(m, gi, go):
        return tuple(None if g is None else g * 2 for g in gi)
    lin2 = lib.nn.Linear(3, 1)
    lin2.register_backward_hook(double)
    x2 = lib.ones(2, 3, requires_grad=True)
    lin2(x2).sum().backward()
    return seen, [(str(w.message), w.category) for w in caught], x.grad.numpy(), x2.grad.numpy(), \
        lin2.weight.grad.numpy() / lin2.weight.grad.numpy().max()


def test_hook_sees_the_last_ops_gradients_as_torchs():
    e_seen, e_warn, e_grad, e_grad2, e_w = scenario(engine)
    t_seen, t_warn, t_grad, t_grad2, t_w = scenario(torch)
    assert [s[0] for s in e_seen] == [s[0] for s in t_seen]
    for (_, egi, ego), (_, tgi, tgo) in zip(e_seen, t_seen):
        assert len(egi) == len(tgi) and len(ego) == len(tgo)
        for a, b in zip(egi + ego, tgi + tgo):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert e_warn == t_warn
    np.testing.assert_allclose(e_grad, t_grad, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(e_grad2, t_grad2, rtol=1e-6)
    np.testing.assert_allclose(e_w, t_w, rtol=1e-6)


def message(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 — compared with PyTorch's
        return type(e).__name__, str(e)
    return None


def test_errors_as_torchs():
    def mixed(lib):
        m = lib.nn.Linear(3, 1)
        m.register_full_backward_hook(lambda *a: None)
        m.register_backward_hook(lambda *a: None)

    def mixed_other_way(lib):
        m = lib.nn.Linear(3, 1)
        m.register_backward_hook(lambda *a: None)
        m.register_full_backward_hook(lambda *a: None)

    def wrong_count(lib):
        def bad(m, gi, go):
            return (gi[0],)
        m = lib.nn.Linear(3, 1)
        m.register_backward_hook(bad)
        m(lib.ones(2, 3, requires_grad=True)).sum().backward()
    for case in (mixed, mixed_other_way, wrong_count):
        assert message(lambda case=case: case(engine)) == message(lambda case=case: case(torch))
