"""torch.func (grad, grad_and_value, vjp, jacrev, jacfwd, hessian, vmap, functional_call) against PyTorch: the
same programs written once against either library, on several functions and shapes; results, the structure of
what is returned (tuples, dicts, aux), nesting (grad of grad, per-sample gradients) and PyTorch's messages."""
import numpy as np
import pytest

import engine
import engine.func as EFN

torch = pytest.importorskip("torch")
import torch.func as TFN  # noqa: E402

rng = np.random.default_rng(5)


def same(e, t, rtol=1e-10, atol=1e-12, zero_sign=True):
    """Equal structure (tuples, lists, dicts), shapes, requires_grad and values."""
    if isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t), (type(e), e)
        for a, b in zip(e, t):
            same(a, b, rtol, atol)
        return
    if isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t)
        for k in t:
            same(e[k], t[k], rtol, atol)
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def inputs(*shapes):
    arrs = [rng.normal(size=s) for s in shapes]
    return [torch.tensor(a) for a in arrs], [engine.tensor(a) for a in arrs]


SCALAR = [
    ("sin_x", lambda x: (x.sin() * x).sum(), [(3,)]),
    ("matrix", lambda x: (x @ x.T).tanh().sum(), [(2, 3)]),
    ("cube_0d", lambda x: x ** 3, [()]),
    ("two_args", lambda x, y: (x * y.exp()).sum() + (x ** 2).mean(), [(4,), (4,)]),
]


@pytest.mark.parametrize("name,fn,shapes", SCALAR, ids=[s[0] for s in SCALAR])
def test_grad_and_grad_and_value(name, fn, shapes):
    t, e = inputs(*shapes)
    same(EFN.grad(fn)(*e), TFN.grad(fn)(*t))
    same(EFN.grad_and_value(fn)(*e), TFN.grad_and_value(fn)(*t))
    argnums = tuple(range(len(shapes)))
    same(EFN.grad(fn, argnums=argnums)(*e), TFN.grad(fn, argnums=argnums)(*t))
    same(EFN.grad(fn, argnums=-1)(*e), TFN.grad(fn, argnums=-1)(*t))
    aux = lambda *a: (fn(*a), a[0] * 2)  # noqa: E731
    same(EFN.grad(aux, has_aux=True)(*e), TFN.grad(aux, has_aux=True)(*t))
    same(EFN.grad_and_value(aux, has_aux=True)(*e), TFN.grad_and_value(aux, has_aux=True)(*t))


def test_nested_grads():
    for fn in (lambda x: x ** 3, lambda x: x.exp() * x.sin(), lambda x: (x * x).tanh()):
        t, e = torch.tensor(0.7, dtype=torch.float64), engine.tensor(0.7, dtype=engine.float64)
        same(EFN.grad(EFN.grad(fn))(e), TFN.grad(TFN.grad(fn))(t))
        same(EFN.grad(EFN.grad(EFN.grad(fn)))(e), TFN.grad(TFN.grad(TFN.grad(fn)))(t))
    # a closure over the outer variable: the inner gradient must stay a function of it
    outer = lambda L, G: G.grad(lambda x: G.grad(lambda y: (x * y).sin())(L.tensor(0.3, dtype=L.float64)))  # noqa: E731
    same(outer(engine, EFN)(engine.tensor(1.1, dtype=engine.float64)),
         outer(torch, TFN)(torch.tensor(1.1, dtype=torch.float64)))


def test_grad_of_tensors_the_program_tracks():
    """Transforms compose with ordinary autograd: grad's result keeps the graph of an input that requires grad."""
    a = rng.normal(size=3)
    tx, ex = torch.tensor(a, requires_grad=True), engine.tensor(a, requires_grad=True)
    tg, eg = TFN.grad(lambda x: (x ** 3).sum())(tx), EFN.grad(lambda x: (x ** 3).sum())(ex)
    same(eg, tg)
    tg.sum().backward()
    eg.sum().backward()
    same(ex.grad, tx.grad)


def test_pytree_arguments():
    t, e = inputs((3,), (3,))
    fn = lambda d: (d["a"] * d["b"].sin()).sum() + d["c"][0].sum()  # noqa: E731
    same(EFN.grad(fn)({"a": e[0], "b": e[1], "c": [e[0]]}), TFN.grad(fn)({"a": t[0], "b": t[1], "c": [t[0]]}))


VECTOR = [
    ("sin_sum", lambda x: x.sin() * x.sum(), [(3,)]),
    ("outer", lambda x: x.reshape(3, 1) * x, [(3,)]),
    ("matmul", lambda x, y: x @ y, [(2, 3), (3, 2)]),
    ("tuple_out", lambda x, y: (x * y, (x + y).sum()), [(3,), (3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", VECTOR, ids=[s[0] for s in VECTOR])
def test_vjp_jacrev_jacfwd(name, fn, shapes):
    t, e = inputs(*shapes)
    t_out, t_vjp = TFN.vjp(fn, *t)
    e_out, e_vjp = EFN.vjp(fn, *e)
    same(e_out, t_out)
    cot = [rng.normal(size=tuple(o.shape)) for o in (t_out if isinstance(t_out, tuple) else (t_out,))]
    if isinstance(t_out, tuple):
        same(e_vjp(tuple(engine.tensor(c) for c in cot)), t_vjp(tuple(torch.tensor(c) for c in cot)))
    else:
        same(e_vjp(engine.tensor(cot[0])), t_vjp(torch.tensor(cot[0])))
    argnums = tuple(range(len(shapes)))
    for E, T in ((EFN.jacrev, TFN.jacrev), (EFN.jacfwd, TFN.jacfwd)):
        same(E(fn)(*e), T(fn)(*t))
        same(E(fn, argnums=argnums)(*e), T(fn, argnums=argnums)(*t))


@pytest.mark.parametrize("name,fn,shapes", SCALAR, ids=[s[0] for s in SCALAR])
def test_hessian(name, fn, shapes):
    """The values of torch.func.hessian (the sign of a zero entry can differ: PyTorch's is forward mode)."""
    t, e = inputs(*shapes)
    same(EFN.hessian(fn)(*e), TFN.hessian(fn)(*t))
    same(EFN.hessian(fn, argnums=tuple(range(len(shapes))))(*e), TFN.hessian(fn, argnums=tuple(range(len(shapes))))(*t))


VMAP = [
    ("double", lambda x: x * 2, [(4, 3)], 0, 0),
    ("sum", lambda x: x.sum(), [(4, 3)], 1, 0),
    ("matvec", lambda W, v: W @ v, [(2, 3), (5, 3)], (None, 0), 0),
    ("two_mapped", lambda a, b: a * b + a, [(3, 2), (2, 3)], (1, 0), -1),
    ("tuple_out", lambda x: (x, x.sum()), [(2, 3)], 0, (1, 0)),
    ("negative_dim", lambda x: x.softmax(0), [(3, 4)], -1, 1),
]


@pytest.mark.parametrize("name,fn,shapes,in_dims,out_dims", VMAP, ids=[s[0] for s in VMAP])
def test_vmap(name, fn, shapes, in_dims, out_dims):
    t, e = inputs(*shapes)
    same(EFN.vmap(fn, in_dims=in_dims, out_dims=out_dims)(*e), TFN.vmap(fn, in_dims=in_dims, out_dims=out_dims)(*t))


def test_nested_vmap_and_per_sample_gradients():
    t, e = inputs((2, 3, 4))
    same(EFN.vmap(EFN.vmap(lambda a: a.sum()))(*e), TFN.vmap(TFN.vmap(lambda a: a.sum()))(*t))
    torch.manual_seed(0)
    t_model = torch.nn.Linear(3, 2).double()
    e_model = engine.nn.Linear(3, 2).double()
    with torch.no_grad(), engine.no_grad():
        for (_, tp), (_, ep) in zip(t_model.named_parameters(), e_model.named_parameters()):
            ep.copy_(engine.tensor(tp.numpy()))
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

    def per_sample(lib, F, model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xb, yb):
            return ((F.functional_call(model, p, (xb.unsqueeze(0),)) - yb) ** 2).mean()
        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(xs), lib.tensor(ys))
    same(per_sample(engine, EFN, e_model), per_sample(torch, TFN, t_model))


def test_functional_call():
    torch.manual_seed(0)
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    e_model = engine.nn.Sequential(engine.nn.Linear(3, 4), engine.nn.Tanh(), engine.nn.Linear(4, 1)).double()
    e_model.load_state_dict({k: engine.tensor(v.numpy()) for k, v in t_model.state_dict().items()})
    new = {k: rng.normal(size=tuple(v.shape)) for k, v in t_model.named_parameters()}
    x = rng.normal(size=(2, 3))
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in new.items()}
    ep = {k: engine.tensor(v, requires_grad=True) for k, v in new.items()}
    t_out = TFN.functional_call(t_model, tp, (torch.tensor(x),))
    e_out = EFN.functional_call(e_model, ep, (engine.tensor(x),))
    same(e_out, t_out)
    t_out.sum().backward()
    e_out.sum().backward()
    for k in new:
        same(ep[k].grad, tp[k].grad)
    assert type(e_model[0].weight).__name__ == "Parameter"  # restored after the call
    assert e_model[0].weight.grad is None
    half = ({"0.weight": torch.tensor(new["0.weight"])}, {"2.bias": torch.tensor(new["2.bias"])})
    e_half = ({"0.weight": engine.tensor(new["0.weight"])}, {"2.bias": engine.tensor(new["2.bias"])})
    same(EFN.functional_call(e_model, e_half, engine.tensor(x)), TFN.functional_call(t_model, half, torch.tensor(x)))
    same(EFN.jacrev(lambda p: EFN.functional_call(e_model, p, (engine.tensor(x),)))(
        {k: v.detach() for k, v in ep.items()}),
        TFN.jacrev(lambda p: TFN.functional_call(t_model, p, (torch.tensor(x),)))({k: v.detach() for k, v in tp.items()}))


def message(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 — the message and type are what is compared
        return type(e).__name__, str(e)
    return None


ERRORS = [
    lambda L, F: F.grad(lambda x: x * 2)(L.ones(3)),
    lambda L, F: F.grad(lambda x: 3.0)(L.ones(3)),
    lambda L, F: F.grad(lambda x: x.sum(), has_aux=True)(L.ones(3)),
    lambda L, F: F.grad(lambda x: x.sum(), argnums=2)(L.ones(3)),
    lambda L, F: F.grad(lambda x: x.sum(), argnums=1.5)(L.ones(3)),
    lambda L, F: F.grad(lambda x: x.sum(), argnums=())(L.ones(3)),
    lambda L, F: F.grad(lambda x: x.sum())(3.0),
    lambda L, F: F.grad(lambda x: x.sum())(),
    lambda L, F: F.grad_and_value(lambda x: (x.sum(), 5), has_aux=True)(L.ones(3)),
    lambda L, F: F.vjp(lambda x: 3, L.ones(2)),
    lambda L, F: F.vjp(lambda x: x * 2, L.ones(2))[1](L.ones(3)),
    lambda L, F: F.vjp(lambda x: x * 2, L.ones(2))[1]((L.ones(2), L.ones(2))),
    lambda L, F: F.vmap(lambda a, b: a + b)(L.ones(2, 3), L.ones(3, 3)),
    lambda L, F: F.vmap(lambda a: a, in_dims=None)(L.ones(2, 3)),
    lambda L, F: F.vmap(lambda a: 3.0)(L.ones(2, 3)),
    lambda L, F: F.vmap(lambda a: a.sum(), in_dims=2)(L.ones(2, 3)),
    lambda L, F: F.vmap(lambda a: a * 2, in_dims=(0, 0))(L.ones(2, 3)),
    lambda L, F: F.vmap(lambda a: a)(3.0),
    lambda L, F: F.vmap(lambda a: a, in_dims=(None,))(L.ones(2)),
    lambda L, F: F.vmap(lambda a: a)(),
    lambda L, F: F.functional_call(L.nn.Linear(3, 2), {"weight": L.zeros(2, 3)}, (L.ones(3),), strict=True),
    lambda L, F: F.functional_call(L.nn.Linear(3, 2), [1], (L.ones(3),)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_in_torchs_words(case):
    expected = message(lambda: ERRORS[case](torch, TFN))
    got = message(lambda: ERRORS[case](engine, EFN))
    assert expected is not None and got == expected


def test_vmap_of_an_empty_batch_and_names():
    same(EFN.vmap(lambda a: a * 2)(engine.ones(0, 3)), TFN.vmap(lambda a: a * 2)(torch.ones(0, 3)))

    def f(x):
        return x
    for name in ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "vmap"):
        assert getattr(EFN, name)(f).__name__ == getattr(TFN, name)(f).__name__ == "f"


def test_closures_over_tensors_that_require_grad_stay_differentiable():
    """grad / jacrev / vjp of a function closing over a parameter: the result keeps the graph to it, as functorch's."""
    def run(lib, F):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        g = F.grad(lambda t: (t * w).sum())(lib.ones(2))
        j = F.jacrev(lambda t: t * w * w)(lib.ones(2))
        o, pull = F.vjp(lambda t: t * w, lib.ones(2))
        v = F.vmap(lambda r: r * w)(lib.ones(3, 2))
        loss = (g * w).sum() + j.sum() + pull(lib.ones(2))[0].sum() + o.sum() + v.sum()
        loss.backward()
        return g, j, w.grad
    same(run(engine, EFN), run(torch, TFN))
