"""Higher-order gradients (create_graph=True) against PyTorch: Hessian-vector products, grad of grad, a WGAN-GP
gradient penalty, second derivatives of the common layers and losses, and the autograd semantics around them
(grad_fn of the produced gradients, `.grad` with a grad_fn, retain_graph defaulting to create_graph, accumulation)."""
import numpy as np
import pytest

import engine
import engine.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(0)


def pair(x, grad=True):
    return torch.tensor(x, requires_grad=grad), engine.tensor(x, requires_grad=grad)


def close(e, t, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(e.detach().numpy()), t.detach().numpy(), rtol=rtol, atol=atol)


def second_order(lib, fn, leaves, w, vs):
    """d/dleaves of sum_i <v_i, d<w, fn(leaves)>/dleaf_i>: the Hessian of <w, fn> times v."""
    out = fn(*leaves)
    grads = lib.autograd.grad((out * lib.tensor(w)).sum(), leaves, create_graph=True)
    s = sum((g * lib.tensor(v)).sum() for g, v in zip(grads, vs))
    return grads, lib.autograd.grad(s, leaves, allow_unused=True)


def compare(efn, tfn, *arrays, rtol=1e-6, atol=1e-8):
    tl, el = zip(*(pair(a) for a in arrays))
    w = rng.normal(size=tuple(tfn(*tl).shape))
    vs = [rng.normal(size=a.shape) for a in arrays]
    tg, th = second_order(torch, tfn, list(tl), w, vs)
    eg, eh = second_order(engine, efn, list(el), w, vs)
    for e, t in zip(eg, tg):
        # torch's fused norm nodes mark a bias gradient (a constant sum of w) as requiring grad; ours is exact
        assert e.requires_grad == t.requires_grad or not e.requires_grad and "Norm" in type(t.grad_fn).__name__
        close(e, t, rtol, atol)
    for e, t in zip(eh, th):
        if t is None:
            assert e is None or not np.any(e.numpy())
        else:
            close(e if e is not None else engine.zeros(*t.shape, dtype=engine.float64), t, rtol, atol)


def f64(*shape):
    return rng.normal(size=shape)


LABELS = np.array([2, 0, 1, 2])
CASES = {
    "tanh": (lambda x: x.tanh(), lambda x: x.tanh(), [f64(3, 4)]),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: x.sigmoid(), [f64(3, 4)]),
    "softmax": (lambda x: EF.softmax(x, dim=1), lambda x: TF.softmax(x, dim=1), [f64(3, 4)]),
    "log_softmax": (lambda x: EF.log_softmax(x, dim=1), lambda x: TF.log_softmax(x, dim=1), [f64(3, 4)]),
    "cross_entropy": (lambda x: EF.cross_entropy(x, engine.tensor(LABELS)),
                      lambda x: TF.cross_entropy(x, torch.tensor(LABELS)), [f64(4, 3)]),
    "mse_loss": (lambda x, y: EF.mse_loss(x, y), lambda x, y: TF.mse_loss(x, y), [f64(3, 4), f64(3, 4)]),
    "linear": (lambda x, w, b: EF.linear(x, w, b), lambda x, w, b: TF.linear(x, w, b), [f64(5, 3), f64(4, 3), f64(4)]),
    "linear_tanh": (lambda x, w, b: EF.linear(x, w, b).tanh(), lambda x, w, b: TF.linear(x, w, b).tanh(),
                    [f64(5, 3), f64(4, 3), f64(4)]),
    "conv2d": (lambda x, w, b: EF.conv2d(x, w, b, padding=1).tanh(), lambda x, w, b: TF.conv2d(x, w, b, padding=1).tanh(),
               [f64(2, 3, 5, 5), f64(4, 3, 3, 3), f64(4)]),
    "conv2d_strided": (lambda x, w: EF.conv2d(x, w, stride=2, dilation=(1, 2)) ** 2,
                       lambda x, w: TF.conv2d(x, w, stride=2, dilation=(1, 2)) ** 2, [f64(1, 2, 6, 7), f64(3, 2, 2, 2)]),
    "layer_norm": (lambda x, w, b: EF.layer_norm(x, (4,), w, b), lambda x, w, b: TF.layer_norm(x, (4,), w, b),
                   [f64(3, 4), f64(4), f64(4)]),
    "batch_norm": (lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True),
                   lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), [f64(5, 3), f64(3), f64(3)]),
    "batch_norm_2d": (lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True),
                      lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True),
                      [f64(4, 2, 3, 3), f64(2), f64(2)]),
}
# The tensor functions (issue 9 section 5): their rules run on tensors through the same numpy protocols.
GATHER = np.array([[0, 2, 1], [3, 3, 0], [1, 0, 2]])
CASES.update({
    "logsumexp": (lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), [f64(3, 4)]),
    "cumprod": (lambda x: x.cumprod(1), lambda x: x.cumprod(1), [np.array([[1.5, 0.0, 2.0, -1.2], [0.3, 0.7, 0.0, 1.3]])]),
    "gather_sort": (lambda x: x.sort(1).values.gather(1, engine.tensor(GATHER)) ** 2,
                    lambda x: x.sort(1).values.gather(1, torch.tensor(GATHER)) ** 2, [f64(3, 4)]),
    "std_norm": (lambda x: x.std(0) * x.norm(dim=1, p=3).sum(), lambda x: x.std(0) * x.norm(dim=1, p=3).sum(), [f64(3, 4)]),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_matches_torch(name):
    efn, tfn, arrays = CASES[name]
    compare(efn, tfn, *arrays, rtol=1e-5, atol=1e-7)


def test_hessian_vector_product():
    x0, v0 = f64(5), f64(5)
    out = []
    for lib in (torch, engine):
        x = lib.tensor(x0, requires_grad=True)
        y = (x.sin() * x ** 3).sum() + (x.exp() * x).sum() / (1 + (x * x).sum())
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (hv,) = lib.autograd.grad(g, x, grad_outputs=lib.tensor(v0))
        out.append(hv)
    close(out[1], out[0])


def test_grad_of_grad_sum():
    x0 = f64(3, 4)
    out = []
    for lib in (torch, engine):
        x = lib.tensor(x0, requires_grad=True)
        y = (x.tanh() ** 2 * x.softmax(1)).sum()
        out.append(lib.autograd.grad(lib.autograd.grad(y, x, create_graph=True)[0].sum(), x)[0])
    close(out[1], out[0])


def test_third_derivative():
    out = []
    for lib in (torch, engine):
        x = lib.tensor(0.7, requires_grad=True, dtype=lib.float64)
        g = x.sin() * x ** 4
        for _ in range(3):
            (g,) = lib.autograd.grad(g, x, create_graph=True)
        out.append(g)
    close(out[1], out[0])


def wgan_gp_step(lib, nn, real, fake, eps, params):
    """One critic step's gradient penalty, as in Gulrajani et al.: ((||dD/dx_hat|| - 1)^2).mean()."""
    w1, b1, w2, b2 = params
    x_hat = (lib.tensor(eps) * lib.tensor(real) + (1 - lib.tensor(eps)) * lib.tensor(fake)).requires_grad_(True)
    critic = nn.linear(nn.leaky_relu(nn.linear(x_hat, w1, b1), 0.2), w2, b2)
    (grads,) = lib.autograd.grad(critic, x_hat, grad_outputs=lib.ones_like(critic), create_graph=True)
    norms = ((grads ** 2).sum(1) + 1e-12).sqrt()
    penalty = ((norms - 1) ** 2).mean() * 10
    loss = critic.mean() + penalty
    loss.backward()
    return penalty, [p.grad for p in params]


def test_wgan_gradient_penalty():
    real, fake, eps = f64(6, 3), f64(6, 3), rng.uniform(size=(6, 1))
    shapes = [(8, 3), (8,), (1, 8), (1,)]
    arrays = [rng.normal(size=s) for s in shapes]
    tp, tg = wgan_gp_step(torch, TF, real, fake, eps, [torch.tensor(a, requires_grad=True) for a in arrays])
    ep, eg = wgan_gp_step(engine, EF, real, fake, eps, [engine.tensor(a, requires_grad=True) for a in arrays])
    close(ep, tp)
    for e, t in zip(eg, tg):
        close(e, t)


def test_grad_fn_of_produced_gradient_and_printout():
    for lib in (torch, engine):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
        assert type(g.grad_fn).__name__ == "MulBackward0"
        assert g.requires_grad and not g.is_leaf
    assert str(g) == "tensor([ 3., 12.], grad_fn=<MulBackward0>)"
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    (g,) = engine.autograd.grad(x.exp().sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "MulBackward0"  # as torch: g * result


def test_backward_create_graph_semantics():
    results = []
    for lib in (torch, engine):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        y.backward(create_graph=True)
        first = x.grad
        assert type(first.grad_fn).__name__ == "CopyBackwards" and first.requires_grad
        y.backward(create_graph=True)  # retain_graph defaulted to create_graph: a second pass is allowed
        assert type(x.grad.grad_fn).__name__ == "AddBackward0"
        second = x.grad.detach().clone()
        x.grad.sum().backward()  # d/dx of the accumulated 2 * 3x^2 is added onto .grad itself
        results.append((first.detach().clone(), second, x.grad.detach().clone()))
    for e, t in zip(*reversed(results)):
        close(e, t)


def test_without_create_graph_gradients_have_no_graph():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    (g,) = engine.autograd.grad((x ** 3).sum(), x)
    assert g.grad_fn is None and not g.requires_grad
    y = (x ** 3).sum()
    engine.autograd.grad(y, x, create_graph=False)
    with pytest.raises(RuntimeError, match="second time"):
        engine.autograd.grad(y, x)


def test_create_graph_under_no_grad_inputs_stays_constant():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    (g,) = engine.autograd.grad((x * 2).sum(), x, create_graph=True)
    assert not g.requires_grad  # d(2x)/dx = 2 depends on nothing that requires grad, as in torch
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    (tg,) = torch.autograd.grad((t * 2).sum(), t, create_graph=True)
    assert tg.requires_grad == g.requires_grad


def test_lstm_second_derivative():
    """The fused LSTM layer differentiates its composition under create_graph: same numbers as torch."""
    torch.manual_seed(0)
    t_lstm = torch.nn.LSTM(3, 4, bidirectional=True).double()
    e_lstm = engine.nn.LSTM(3, 4, bidirectional=True)
    for name, p in t_lstm.named_parameters():
        getattr(e_lstm, name).data = engine.tensor(p.detach().numpy().copy())
    x0, w = f64(5, 2, 3), f64(5, 2, 8)
    out = []
    for lib, lstm in ((torch, t_lstm), (engine, e_lstm)):
        x = lib.tensor(x0, requires_grad=True)
        y, (h, c) = lstm(x)
        (g,) = lib.autograd.grad((y * lib.tensor(w)).sum() + (c ** 2).sum(), x, create_graph=True)
        params = [x] + [p for _, p in lstm.named_parameters()]
        out.append(lib.autograd.grad((g ** 2).sum(), params))
    for e, t in zip(out[1], out[0]):
        close(e, t, rtol=1e-6, atol=1e-9)


def test_tensor_hooks_under_create_graph():
    out = []
    for lib in (torch, engine):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        y.register_hook(lambda g: g * 2)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        out.append((g, lib.autograd.grad(g.sum(), x)[0]))
    for e, t in zip(out[1], out[0]):
        close(e, t)


def test_several_outputs_and_grad_outputs_under_create_graph():
    out = []
    for lib in (torch, engine):
        x = lib.tensor([0.3, -1.2, 2.0], requires_grad=True)
        a, b = x.sin(), (x * x).sum()
        gs = lib.autograd.grad([a, b], x, grad_outputs=[lib.tensor([1.0, 2.0, 3.0]), None], create_graph=True)
        out.append(lib.autograd.grad(gs[0].sum(), x)[0])
    close(out[1], out[0])
