"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) and gradcheck/gradgradcheck against PyTorch:
the same functions written once against either library, on several shapes and tuple inputs/outputs; results,
output structure, create_graph and strict mode, and PyTorch's messages."""
import warnings

import numpy as np
import pytest

import engine
import engine.autograd.functional as EAF

torch = pytest.importorskip("torch")
TAF = torch.autograd.functional

rng = np.random.default_rng(3)


def arrays(*shapes):
    return [rng.normal(size=s) for s in shapes]


def both(arrs, requires_grad=False):
    """The same float64 inputs for torch and the engine (a tuple when more than one)."""
    t = tuple(torch.tensor(a, requires_grad=requires_grad) for a in arrs)
    e = tuple(engine.tensor(a, requires_grad=requires_grad) for a in arrs)
    return (t, e) if len(arrs) > 1 else (t[0], e[0])


def same(e, t, rtol=1e-10, atol=1e-12):
    """Equal structure (tuples nested alike), shapes and values."""
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t), (type(e), e)
        for a, b in zip(e, t):
            same(a, b, rtol, atol)
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


# (name, function of the library, input shapes): functions with one or several inputs and outputs
FUNCTIONS = [
    ("sin_times_sum", lambda L: lambda x: x.sin() * x.sum(), [(3,)]),
    ("matrix", lambda L: lambda x: (x @ x.T).tanh(), [(2, 3)]),
    ("scalar", lambda L: lambda x: (x.exp() * x).sum(), [(4,)]),
    ("two_inputs", lambda L: lambda x, y: x * y.sin() + x ** 2, [(3,), (3,)]),
    ("two_outputs", lambda L: lambda x: (x.sigmoid(), (x ** 3).sum()), [(2, 2)]),
    ("both_tuples", lambda L: lambda x, y: (x @ y, (x * 2).sum(0)), [(2, 3), (3, 2)]),
    ("softmax", lambda L: lambda x: L.softmax(x, 0), [(5,)]),
    ("unused_input", lambda L: lambda x, y: x * 2, [(3,), (2,)]),
]


@pytest.mark.parametrize("name,make,shapes", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_jacobian_matches_torch(name, make, shapes):
    t_in, e_in = both(arrays(*shapes))
    same(EAF.jacobian(make(engine), e_in), TAF.jacobian(make(torch), t_in))
    same(EAF.jacobian(make(engine), e_in, vectorize=True), TAF.jacobian(make(torch), t_in, vectorize=True))
    same(EAF.jacobian(make(engine), e_in, create_graph=True), TAF.jacobian(make(torch), t_in, create_graph=True))


@pytest.mark.parametrize("name,make,shapes", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_vjp_and_jvp_match_torch(name, make, shapes):
    arrs = arrays(*shapes)
    t_in, e_in = both(arrs)
    t_out = make(torch)(*(t_in if isinstance(t_in, tuple) else (t_in,)))
    outs = t_out if isinstance(t_out, tuple) else (t_out,)
    v_out = arrays(*[tuple(o.shape) for o in outs])
    tv, ev = both(v_out)
    same(EAF.vjp(make(engine), e_in, ev), TAF.vjp(make(torch), t_in, tv))
    tu, eu = both(arrays(*shapes))
    same(EAF.jvp(make(engine), e_in, eu), TAF.jvp(make(torch), t_in, tu))
    same(EAF.jvp(make(engine), e_in, eu, create_graph=True), TAF.jvp(make(torch), t_in, tu, create_graph=True))


SCALAR_FUNCTIONS = [
    ("cubic", lambda x: (x ** 3).sum(), [(3,)]),
    ("logsumexp", lambda x: (x.exp().sum()).log(), [(2, 3)]),
    ("pair", lambda x, y: (x.sin() * y.cos()).sum() + (x * x * y).sum(), [(3,), (3,)]),
    ("bilinear", lambda x, W: (x @ W @ x), [(3,), (3, 3)]),
    ("linear", lambda x: (x * 2).sum(), [(3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", SCALAR_FUNCTIONS, ids=[f[0] for f in SCALAR_FUNCTIONS])
def test_hessian_hvp_vhp_match_torch(name, fn, shapes):
    t_in, e_in = both(arrays(*shapes))
    same(EAF.hessian(fn, e_in), TAF.hessian(fn, t_in))
    same(EAF.hessian(fn, e_in, create_graph=True), TAF.hessian(fn, t_in, create_graph=True))
    tv, ev = both(arrays(*shapes))
    same(EAF.hvp(fn, e_in, ev), TAF.hvp(fn, t_in, tv))
    same(EAF.vhp(fn, e_in, ev), TAF.vhp(fn, t_in, tv))


def test_create_graph_results_differentiate_like_torch():
    a = rng.normal(size=3)
    tx, ex = torch.tensor(a, requires_grad=True), engine.tensor(a, requires_grad=True)
    tj = TAF.jacobian(lambda v: v.sin() * v, tx, create_graph=True)
    ej = EAF.jacobian(lambda v: v.sin() * v, ex, create_graph=True)
    same(engine.autograd.grad(ej.sum(), ex)[0], torch.autograd.grad(tj.sum(), tx)[0])
    th = TAF.hvp(lambda v: (v ** 4).sum(), tx, torch.ones(3, dtype=torch.float64), create_graph=True)[1]
    eh = EAF.hvp(lambda v: (v ** 4).sum(), ex, engine.ones(3, dtype=engine.float64), create_graph=True)[1]
    same(engine.autograd.grad(eh.sum(), ex)[0], torch.autograd.grad(th.sum(), tx)[0])


def message(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 — the message and type are what is compared
        return type(e).__name__, str(e)
    return None


ERROR_CASES = [
    lambda L, F: F.jacobian(lambda x: 3.0, L.ones(2)),
    lambda L, F: F.jacobian(lambda x: x, (L.ones(2), 3)),
    lambda L, F: F.jacobian(lambda x: x, [L.ones(2)]),
    lambda L, F: F.jacobian(lambda x, y: x * 2, (L.ones(2), L.ones(2)), strict=True),
    lambda L, F: F.jacobian(lambda x: L.ones(2), L.ones(2), strict=True),
    lambda L, F: F.jacobian(lambda x: x, L.ones(2), strategy="sideways"),
    lambda L, F: F.jacobian(lambda x: x, L.ones(2), strategy="forward-mode"),
    lambda L, F: F.jacobian(lambda x: x, L.ones(2), strict=True, vectorize=True),
    lambda L, F: F.hessian(lambda x: x * 2, L.ones(2)),
    lambda L, F: F.hessian(lambda x: (x, x), L.ones(2)),
    lambda L, F: F.hessian(lambda x: (x * 2).sum(), L.ones(2), strict=True),
    lambda L, F: F.vjp(lambda x: x * 2, L.ones(2)),
    lambda L, F: F.vjp(lambda x: x * 2, L.ones(2), L.ones(3)),
    lambda L, F: F.vjp(lambda x: (x, x), L.ones(2), (L.ones(2),)),
    lambda L, F: F.jvp(lambda x: x * 2, L.ones(2)),
    lambda L, F: F.jvp(lambda x, y: x * 2, (L.ones(2), L.ones(2)), (L.ones(2), L.ones(3))),
    lambda L, F: F.hvp(lambda x: x * 2, L.ones(2), L.ones(2)),
    lambda L, F: F.vhp(lambda x: (x, x), L.ones(2), L.ones(2)),
    lambda L, F: F.vhp(lambda x: (x ** 2).sum(), L.ones(2)),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors_in_torchs_words(case):
    make = ERROR_CASES[case]
    expected = message(lambda: make(torch, TAF))
    got = message(lambda: make(engine, EAF))
    assert expected is not None
    assert got[0] == expected[0]
    assert got[1] == expected[1].replace("torch.", "engine.") or got[1] == expected[1]


# ---- gradcheck / gradgradcheck
class TorchSinBad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sin()  # wrong: the derivative of sin is cos


class EngineSinBad(engine.autograd.Function):
    forward = staticmethod(TorchSinBad.forward)
    backward = staticmethod(TorchSinBad.backward)


def test_gradcheck_passes_where_torchs_does():
    for fn, shapes in [(lambda x: x.sin() * x, [(3,)]), (lambda x, y: (x @ y).tanh(), [(2, 3), (3, 2)]),
                       (lambda x: (x.exp().sum(), x * 2), [(2, 2)])]:
        arrs = arrays(*shapes)
        t_in = tuple(torch.tensor(a, requires_grad=True) for a in arrs)
        e_in = tuple(engine.tensor(a, requires_grad=True) for a in arrs)
        assert torch.autograd.gradcheck(fn, t_in) is True
        assert engine.autograd.gradcheck(fn, e_in) is True
        assert engine.autograd.gradgradcheck(fn, e_in) is True


def test_gradcheck_on_a_wrong_backward_fails_with_torchs_message():
    a = rng.normal(size=3)
    tx, ex = torch.tensor(a, requires_grad=True), engine.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError) as t_err:
        torch.autograd.gradcheck(TorchSinBad.apply, (tx,))
    with pytest.raises(RuntimeError) as e_err:
        engine.autograd.gradcheck(EngineSinBad.apply, (ex,))
    assert type(e_err.value).__name__ == type(t_err.value).__name__ == "GradcheckError"
    assert str(e_err.value) == str(t_err.value)
    assert torch.autograd.gradcheck(TorchSinBad.apply, (tx,), raise_exception=False) is False
    assert engine.autograd.gradcheck(EngineSinBad.apply, (ex,), raise_exception=False) is False


def test_gradcheck_input_checks_as_torchs():
    expected = message(lambda: torch.autograd.gradcheck(lambda x: x * 2, torch.ones(2, dtype=torch.float64)))
    assert message(lambda: engine.autograd.gradcheck(lambda x: x * 2, engine.ones(2, dtype=engine.float64))) == expected
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert engine.autograd.gradcheck(lambda x: x * 2, engine.ones(2, requires_grad=True), eps=1e-3, atol=1e-2)
    with warnings.catch_warnings(record=True) as t_caught:
        warnings.simplefilter("always")
        torch.autograd.gradcheck(lambda x: x * 2, torch.ones(2, requires_grad=True), eps=1e-3, atol=1e-2)
    assert [str(w.message) for w in caught] == [str(w.message) for w in t_caught]


def test_gradcheck_is_finite_differences():
    """The numerical Jacobian gradcheck reports is the central difference with eps, as torch's."""
    a = np.array([0.3, -1.2])
    e_msg = message(lambda: engine.autograd.gradcheck(lambda x: x.exp(), engine.tensor(a, requires_grad=True),
                                                      eps=0.5, atol=0, rtol=0))
    numeric = (np.exp(a + 0.5) - np.exp(a - 0.5)) / 1.0
    assert e_msg[0] == "GradcheckError"
    assert f"{numeric[0]:.4f}" in e_msg[1]
