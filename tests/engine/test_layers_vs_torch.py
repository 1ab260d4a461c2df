"""nn layers against PyTorch: default initialisation under a seed, values, gradients, grad_fn names,
printouts and error messages (issue 10 §1)."""
import numpy as np
import pytest

import engine
import engine.nn as enn

torch = pytest.importorskip("torch")
tnn = torch.nn

rng = np.random.default_rng(0)


def f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def _pair(x):
    grad = x.dtype.kind == "f"
    return torch.tensor(x, requires_grad=grad), engine.tensor(x, requires_grad=grad)


def check(tfn, efn, *xs, rtol=1e-4, atol=1e-5, node=True):
    """Same value, same grad_fn name and same input gradients for one weighted-sum backward."""
    pairs = [_pair(x) for x in xs]
    to = tfn(*[p[0] for p in pairs])
    eo = efn(*[p[1] for p in pairs])
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    if node:
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    w = f32(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * engine.tensor(w)).sum().backward()
    for t, e in pairs:
        if t.requires_grad:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    return to, eo


def same_params(tm, em):
    tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
    assert list(tp) == list(ep)
    for k in tp:
        np.testing.assert_array_equal(ep[k].detach().numpy(), tp[k].detach().numpy(), err_msg=k)


def copy_params(tm, em):
    for (_, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        ep.data = engine.tensor(tp.detach().numpy().copy())


def raises_same(tfn, efn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(Exception) as ee:
        efn()
    assert type(ee.value).__name__ == type(te.value).__name__
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------- convolution
CONV = [
    ("Conv2d", (1, 6, 5), {}),
    ("Conv2d", (4, 6, 3), dict(stride=2, padding=1, dilation=2, groups=2, bias=False)),
    ("Conv2d", (3, 4, (3, 2)), dict(padding="same")),
    ("Conv2d", (3, 4, 4), dict(padding="same")),
    ("Conv2d", (3, 4, 3), dict(padding="valid", stride=(2, 1))),
    ("Conv1d", (3, 5, 4), dict(padding=2, stride=2)),
    ("Conv1d", (4, 4, 3), dict(padding="same", groups=4)),
]


@pytest.mark.parametrize("cls,args,kw", CONV)
def test_conv_module_init_values_grads_printout(cls, args, kw):
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(*args, **kw)
    engine.manual_seed(0)
    em = getattr(enn, cls)(*args, **kw)
    same_params(tm, em)
    assert repr(em) == repr(tm)
    shape = (2, args[0], 9, 8) if cls == "Conv2d" else (2, args[0], 11)
    x = f32(*shape)
    check(tm, em, x)
    # unbatched input: unsqueeze -> conv -> squeeze, as in torch
    check(tm, em, x[0])
    tm.zero_grad()
    em.zero_grad()
    xt, xe = _pair(x)
    tm(xt).sum().backward()
    em(xe).sum().backward()
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=n)


@pytest.mark.parametrize("x,w,kw", [
    ((2, 4, 8, 8), (4, 3, 3, 3), {}),
    ((4, 8, 8), (4, 3, 3, 3), {}),
    ((8, 8), (4, 3, 3, 3), {}),
    ((1, 3, 2, 2), (4, 3, 3, 3), {}),
    ((1, 4, 4, 4), (4, 4, 3, 3), dict(dilation=2)),
    ((1, 4, 8, 8), (3, 2, 3, 3), dict(groups=2)),
    ((1, 4, 8, 8), (4, 4, 3, 3), dict(stride=2, padding="same")),
    ((1, 4, 8, 8), (4, 4, 3, 3), dict(padding="foo")),
    ((1, 4, 4, 4), (4, 4, 3, 3), dict(stride=(1, 1, 1))),
])
def test_conv2d_errors(x, w, kw):
    xs, ws = f32(*x), f32(*w)
    raises_same(lambda: torch.nn.functional.conv2d(torch.tensor(xs), torch.tensor(ws), **kw),
                lambda: enn.functional.conv2d(engine.tensor(xs), engine.tensor(ws), **kw))


def test_conv_bias_and_module_errors():
    raises_same(lambda: torch.nn.functional.conv2d(torch.zeros(1, 4, 8, 8), torch.zeros(4, 4, 3, 3), torch.zeros(5)),
                lambda: enn.functional.conv2d(engine.zeros(1, 4, 8, 8), engine.zeros(4, 4, 3, 3), engine.zeros(5)))
    raises_same(lambda: tnn.Conv2d(4, 4, 3)(torch.zeros(2, 3, 8, 8)), lambda: enn.Conv2d(4, 4, 3)(engine.zeros(2, 3, 8, 8)))
    raises_same(lambda: torch.nn.functional.conv1d(torch.zeros(1, 4, 4, 4), torch.zeros(4, 4, 3)),
                lambda: enn.functional.conv1d(engine.zeros(1, 4, 4, 4), engine.zeros(4, 4, 3)))
    for kw in (dict(groups=3), dict(stride=2, padding="same")):
        raises_same(lambda kw=kw: tnn.Conv2d(4, 4, 3, **kw), lambda kw=kw: enn.Conv2d(4, 4, 3, **kw))
    raises_same(lambda: tnn.Conv2d(4, 6, 3, groups=4), lambda: enn.Conv2d(4, 6, 3, groups=4))


# ---------------------------------------------------------------- pooling
POOLS = [
    ("MaxPool2d", (2,), {}, (2, 3, 8, 8)),
    ("MaxPool2d", (3, 2, 1), dict(ceil_mode=True), (2, 3, 7, 8)),
    ("MaxPool2d", ((2, 3),), dict(dilation=2), (3, 9, 9)),
    ("MaxPool1d", (3, 2), {}, (2, 3, 9)),
    ("MaxPool1d", (2,), dict(padding=1), (3, 8)),
    ("AvgPool2d", (2,), {}, (2, 3, 8, 8)),
    ("AvgPool2d", (3, 2, 1), dict(ceil_mode=True, count_include_pad=False), (2, 3, 7, 8)),
    ("AvgPool2d", (2,), dict(divisor_override=3), (3, 6, 6)),
    ("AvgPool1d", (3, 2, 1), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, 5),), {}, (2, 3, 7, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 8)),
    ("AdaptiveAvgPool2d", ((None, 2),), {}, (3, 7, 8)),
]


@pytest.mark.parametrize("cls,args,kw,shape", POOLS)
def test_pool_modules(cls, args, kw, shape):
    tm, em = getattr(tnn, cls)(*args, **kw), getattr(enn, cls)(*args, **kw)
    assert repr(em) == repr(tm)
    check(tm, em, f32(*shape))


def test_max_pool_return_indices():
    x = f32(2, 2, 7, 7)
    to, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    eo, ei = enn.functional.max_pool2d(engine.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    assert ei.dtype == engine.int64
    x1 = f32(2, 2, 9)
    np.testing.assert_array_equal(enn.functional.max_pool1d(engine.tensor(x1), 3, 2, return_indices=True)[1].numpy(),
                                  torch.nn.functional.max_pool1d(torch.tensor(x1), 3, 2, return_indices=True)[1].numpy())


@pytest.mark.parametrize("fn,shape,args", [
    ("max_pool2d", (1, 3, 4, 4), (2, 2, 2)),
    ("max_pool2d", (3, 4), (2,)),
    ("max_pool2d", (1, 3, 1, 1), (2,)),
    ("avg_pool2d", (1, 3, 1, 1), (2,)),
    ("avg_pool2d", (1, 3, 4, 4), (2, 2, 2)),
    ("adaptive_avg_pool2d", (4, 4), (2,)),
    ("max_pool1d", (4,), (2,)),
])
def test_pool_errors(fn, shape, args):
    x = f32(*shape)
    raises_same(lambda: getattr(torch.nn.functional, fn)(torch.tensor(x), *args),
                lambda: getattr(enn.functional, fn)(engine.tensor(x), *args))


def test_pad_and_unflatten():
    check(lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1), value=0.5),
          lambda a: enn.functional.pad(a, (1, 2, 0, 1), value=0.5), f32(2, 3, 4))
    tm, em = tnn.Unflatten(1, (2, 3)), enn.Unflatten(1, (2, 3))
    assert repr(em) == repr(tm)
    check(tm, em, f32(4, 6, 2))


# ---------------------------------------------------------------- LeNet-5
def lenet(nn):
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 4 * 4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def test_lenet_matches_torch_for_two_sgd_steps():
    torch.manual_seed(0)
    tm = lenet(tnn)
    engine.manual_seed(0)
    em = lenet(enn)
    same_params(tm, em)
    assert repr(em) == repr(tm)
    x, y = f32(8, 1, 28, 28), rng.integers(0, 10, 8)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    eopt = engine.optim.SGD(em.parameters(), lr=0.1)
    for _ in range(2):
        topt.zero_grad()
        eopt.zero_grad()
        tl = tnn.CrossEntropyLoss()(tm(torch.tensor(x)), torch.tensor(y))
        el = enn.CrossEntropyLoss()(em(engine.tensor(x)), engine.tensor(y))
        np.testing.assert_allclose(el.item(), tl.item(), rtol=1e-5)
        tl.backward()
        el.backward()
        topt.step()
        eopt.step()
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n)


# ---------------------------------------------------------------- normalisation
BATCHNORM = [
    ("BatchNorm1d", (3,), {}, (6, 3)),
    ("BatchNorm1d", (3,), dict(momentum=None), (4, 3, 5)),
    ("BatchNorm1d", (3,), dict(affine=False), (4, 3)),
    ("BatchNorm2d", (4,), {}, (3, 4, 5, 5)),
    ("BatchNorm2d", (4,), dict(track_running_stats=False, eps=1e-3), (3, 4, 2, 3)),
]


@pytest.mark.parametrize("cls,args,kw,shape", BATCHNORM)
def test_batchnorm_train_eval_running_stats(cls, args, kw, shape):
    tm, em = getattr(tnn, cls)(*args, **kw), getattr(enn, cls)(*args, **kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for _ in range(3):
        check(tm, em, f32(*shape) * 2 + 1)
    for (n, tb), (_, eb) in zip(tm.named_buffers(), em.named_buffers()):
        np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
    tm.eval()
    em.eval()
    check(tm, em, f32(*shape))
    assert not em.training and all(not m.training for m in em.modules())


def test_batchnorm_errors():
    raises_same(lambda: tnn.BatchNorm2d(3)(torch.zeros(3, 4, 4)), lambda: enn.BatchNorm2d(3)(engine.zeros(3, 4, 4)))
    raises_same(lambda: tnn.BatchNorm1d(3)(torch.zeros(3, 4, 4, 3)), lambda: enn.BatchNorm1d(3)(engine.zeros(3, 4, 4, 3)))
    raises_same(lambda: tnn.BatchNorm1d(3)(torch.zeros(1, 3)), lambda: enn.BatchNorm1d(3)(engine.zeros(1, 3)))
    raises_same(lambda: tnn.BatchNorm1d(3)(torch.zeros(2, 4)), lambda: enn.BatchNorm1d(3)(engine.zeros(2, 4)))


@pytest.mark.parametrize("args,kw,shape", [((4,), {}, (3, 4)), (((3, 4),), dict(eps=1e-3), (2, 3, 4)),
                                           ((4,), dict(elementwise_affine=False), (2, 5, 4)),
                                           ((4,), dict(bias=False), (3, 4))])
def test_layernorm(args, kw, shape):
    tm, em = tnn.LayerNorm(*args, **kw), enn.LayerNorm(*args, **kw)
    assert repr(em) == repr(tm)
    with torch.no_grad():
        for p in tm.parameters():
            p.uniform_(0.5, 1.5)
    copy_params(tm, em)
    check(tm, em, f32(*shape) * 3)


def test_layernorm_errors():
    raises_same(lambda: tnn.LayerNorm(4)(torch.zeros(2, 5)), lambda: enn.LayerNorm(4)(engine.zeros(2, 5)))
    raises_same(lambda: tnn.LayerNorm((3, 4))(torch.zeros(2, 5, 4)), lambda: enn.LayerNorm((3, 4))(engine.zeros(2, 5, 4)))


# ---------------------------------------------------------------- dropout
@pytest.mark.parametrize("cls,p,shape", [("Dropout", 0.5, (4, 6)), ("Dropout", 0.2, (3, 5, 7)), ("Dropout", 0.0, (3,)),
                                         ("Dropout", 1.0, (2, 3)), ("Dropout1d", 0.5, (4, 3, 5)),
                                         ("Dropout2d", 0.3, (4, 3, 2, 2)), ("Dropout2d", 0.5, (4, 3, 5))])
def test_seeded_dropout_equals_torch(cls, p, shape):
    tm, em = getattr(tnn, cls)(p), getattr(enn, cls)(p)
    assert repr(em) == repr(tm)
    x = f32(*shape)
    torch.manual_seed(3)
    engine.manual_seed(3)
    with pytest.warns(UserWarning) if cls == "Dropout2d" and len(shape) == 3 else _nullcontext():
        to, eo = check(tm, em, x, node=p > 0)
    assert (eo.grad_fn is None) == (to.grad_fn is None)
    # the generator is left in the same state: the next draw matches too
    np.testing.assert_array_equal(engine.rand(3).numpy(), torch.rand(3).numpy())
    tm.eval()
    em.eval()
    xe = engine.tensor(x)
    assert em(xe) is xe


def _nullcontext():
    import contextlib

    return contextlib.nullcontext()


def test_dropout_errors():
    raises_same(lambda: tnn.Dropout(1.5), lambda: enn.Dropout(1.5))
    raises_same(lambda: torch.nn.functional.dropout(torch.ones(3), -0.1),
                lambda: enn.functional.dropout(engine.ones(3), -0.1))


# ---------------------------------------------------------------- embedding
@pytest.mark.parametrize("kw", [{}, dict(padding_idx=0), dict(padding_idx=-1)])
def test_embedding(kw):
    torch.manual_seed(0)
    tm = tnn.Embedding(6, 3, **kw)
    engine.manual_seed(0)
    em = enn.Embedding(6, 3, **kw)
    same_params(tm, em)
    assert repr(em) == repr(tm)
    idx = np.array([[0, 5, 2, 0], [1, 5, 5, 3]])
    check(tm, em, idx)
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy())


def test_embedding_errors():
    raises_same(lambda: tnn.Embedding(5, 3)(torch.tensor([5])), lambda: enn.Embedding(5, 3)(engine.tensor([5])))
    raises_same(lambda: tnn.Embedding(5, 3)(torch.tensor([1.0])), lambda: enn.Embedding(5, 3)(engine.tensor([1.0])))
    raises_same(lambda: tnn.Embedding(5, 3, padding_idx=5), lambda: enn.Embedding(5, 3, padding_idx=5))
    w = f32(4, 2)
    te = tnn.Embedding.from_pretrained(torch.tensor(w))
    ee = enn.Embedding.from_pretrained(engine.tensor(w))
    assert repr(ee) == repr(te) and ee.weight.requires_grad is te.weight.requires_grad is False


# ---------------------------------------------------------------- activations
ACTIVATIONS = [("GELU", ()), ("GELU", ("tanh",)), ("LeakyReLU", ()), ("LeakyReLU", (0.2, True)), ("ELU", (0.5,)),
               ("CELU", (0.7,)), ("SELU", ()), ("SiLU", ()), ("Mish", ()), ("Hardtanh", (-2, 2)), ("ReLU6", ()),
               ("Hardswish", ()), ("Hardsigmoid", ()), ("LogSigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()),
               ("Softplus", ()), ("Softplus", (2.0, 1.0)), ("Threshold", (0.1, 20.0)), ("Softmin", (1,))]


@pytest.mark.parametrize("cls,args", ACTIVATIONS)
def test_activation_modules(cls, args):
    tm, em = getattr(tnn, cls)(*args), getattr(enn, cls)(*args)
    assert repr(em) == repr(tm)
    x = f32(4, 5) * 3
    if len(args) > 1 and args[1] is True:  # inplace=True: flowgrad computes out of place (torch: ...Backward1)
        check(lambda t: tm(t * 1), lambda e: em(e * 1), x, rtol=1e-5, atol=1e-6, node=False)
    else:
        check(tm, em, x, rtol=1e-5, atol=1e-6)


def test_relu_in_place_overwrites_its_input_as_torchs():
    for inplace in (False, True):
        tm, em = tnn.ReLU(inplace), enn.ReLU(inplace=inplace)
        assert repr(em) == repr(tm)
        x = f32(4, 5) * 3
        xt, xe = torch.tensor(x, requires_grad=True), engine.tensor(x, requires_grad=True)
        yt, ye = xt * 1, xe * 1
        zt, ze = tm(yt), em(ye)
        assert (zt is yt) is (ze is ye) is inplace
        assert type(ze.grad_fn).__name__ == type(zt.grad_fn).__name__ == "ReluBackward0"
        assert np.array_equal(ye.detach().numpy(), yt.detach().numpy())
        ze.sum().backward()
        zt.sum().backward()
        assert np.array_equal(xe.grad.numpy(), xt.grad.numpy())


# ---------------------------------------------------------------- losses
W3 = np.array([0.2, 1.0, 2.5], dtype=np.float32)


def _t(kind, x):
    if x is None:
        return None
    return torch.tensor(x) if kind == "t" else engine.tensor(x)


LOSSES = [
    ("L1Loss", {}, "reg"), ("L1Loss", dict(reduction="sum"), "reg"), ("SmoothL1Loss", {}, "reg"),
    ("SmoothL1Loss", dict(beta=0.5, reduction="none"), "reg"), ("SmoothL1Loss", dict(beta=0.0), "reg"),
    ("HuberLoss", dict(delta=0.7), "reg"), ("MSELoss", dict(reduction="sum"), "reg"),
    ("NLLLoss", dict(weight=W3), "cls"), ("NLLLoss", dict(ignore_index=1, reduction="sum"), "cls"),
    ("CrossEntropyLoss", {}, "cls"), ("CrossEntropyLoss", dict(weight=W3, ignore_index=2), "cls"),
    ("CrossEntropyLoss", dict(label_smoothing=0.1), "cls"),
    ("CrossEntropyLoss", dict(label_smoothing=0.2, weight=W3, ignore_index=1), "cls"),
    ("CrossEntropyLoss", dict(label_smoothing=0.2, reduction="sum"), "cls"),
    ("CrossEntropyLoss", dict(label_smoothing=0.2, reduction="none"), "cls"),
    ("CrossEntropyLoss", {}, "prob"), ("CrossEntropyLoss", dict(weight=W3, label_smoothing=0.1), "prob"),
    ("CrossEntropyLoss", dict(reduction="none"), "prob"),
    ("BCELoss", dict(weight=W3), "bce"), ("BCEWithLogitsLoss", dict(pos_weight=W3), "bcel"),
    ("BCEWithLogitsLoss", dict(weight=W3, pos_weight=W3, reduction="sum"), "bcel"),
    ("KLDivLoss", dict(reduction="batchmean"), "kl"), ("KLDivLoss", dict(reduction="sum", log_target=True), "kl"),
]


@pytest.mark.parametrize("cls,kw,kind", LOSSES)
def test_loss_modules(cls, kw, kind):
    tm = getattr(tnn, cls)(**{k: _t("t", v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
    em = getattr(enn, cls)(**{k: _t("e", v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    x = f32(5, 3)
    if kind == "reg":
        y = f32(5, 3)
    elif kind == "cls":
        y = np.array([0, 2, 1, 2, 1])
    elif kind == "prob":
        y = rng.dirichlet(np.ones(3), 5).astype(np.float32)
    elif kind == "bce":
        x, y = rng.uniform(0.05, 0.95, (5, 3)).astype(np.float32), rng.uniform(0, 1, (5, 3)).astype(np.float32)
    elif kind == "bcel":
        y = rng.uniform(0, 1, (5, 3)).astype(np.float32)
    else:
        x = np.log(rng.dirichlet(np.ones(3), 5)).astype(np.float32)
        y = rng.dirichlet(np.ones(3), 5).astype(np.float32)
        if kw.get("log_target"):
            y = np.log(y)
    tt, et = torch.tensor(y), engine.tensor(y)
    check(lambda a: tm(a, tt), lambda a: em(a, et), x, rtol=1e-5, atol=1e-6)


def _graph(fn):
    names = []

    def walk(node):
        if node is None:
            return
        names.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            walk(nxt)

    walk(fn)
    return names


def test_label_smoothing_graph_matches_torch():
    x = f32(4, 3)
    y = np.array([0, 2, 1, 2])
    tl = tnn.CrossEntropyLoss(label_smoothing=0.1)(torch.tensor(x, requires_grad=True), torch.tensor(y))
    el = enn.CrossEntropyLoss(label_smoothing=0.1)(engine.tensor(x, requires_grad=True), engine.tensor(y))
    assert _graph(el.grad_fn) == _graph(tl.grad_fn)


@pytest.mark.parametrize("fn,args,kw", [
    ("cross_entropy", ("x", "t"), dict(weight="w4")),
    ("cross_entropy", ("x", "t"), dict(label_smoothing=1.5)),
    ("cross_entropy", ("x", "t3"), {}),
    ("cross_entropy", ("x", "tbad"), {}),
    ("nll_loss", ("x", "tf"), {}),
    ("smooth_l1_loss", ("x", "x"), dict(beta=-1)),
    ("kl_div", ("x", "x"), dict(reduction="foo")),
    ("binary_cross_entropy", ("p", "p"), dict(weight="w4")),
])
def test_loss_errors(fn, args, kw):
    vals = {"x": f32(4, 3), "t": np.array([0, 2, 1, 2]), "t3": np.array([0, 2, 1]), "tbad": np.array([0, 2, 1, 3]),
            "tf": np.array([0.0, 2, 1, 2], dtype=np.float32), "w4": np.ones(4, np.float32),
            "p": rng.uniform(0.1, 0.9, (4, 3)).astype(np.float32)}

    def call(lib, mod):
        a = [_t(lib, vals[n]) for n in args]
        k = {n: _t(lib, vals[v]) if isinstance(v, str) else v for n, v in kw.items()}
        return getattr(mod, fn)(*a, **k)

    raises_same(lambda: call("t", torch.nn.functional), lambda: call("e", enn.functional))


# ---------------------------------------------------------------- recurrent layers
RNNS = [("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)), ("LSTM", dict(bias=False)),
        ("GRU", {}), ("GRU", dict(num_layers=2, bidirectional=True)), ("GRU", dict(batch_first=True)),
        ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2, bias=False)), ("RNN", dict(bidirectional=True))]


def _first(h):
    return h if not isinstance(h, tuple) else h[0] + 2 * h[1]


@pytest.mark.parametrize("cls,kw", RNNS)
def test_recurrent_layers(cls, kw):
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(4, 5, **kw)
    engine.manual_seed(0)
    em = getattr(enn, cls)(4, 5, **kw)
    same_params(tm, em)
    assert repr(em) == repr(tm)
    x = f32(3, 2, 4)
    # grad_fn: LSTM's fused layer, GRU/RNN's stack (torch ends GRU/RNN batch_first with an in-place transpose_)
    check(lambda a: tm(a)[0], lambda a: em(a)[0], x, node=cls == "LSTM" or not kw.get("batch_first"))
    check(lambda a: _first(tm(a)[1]), lambda a: _first(em(a)[1]), x, node=False)
    # unbatched input and a given initial state
    n = em.num_layers * (2 if em.bidirectional else 1)
    h0 = f32(n, 5)
    if cls == "LSTM":
        check(lambda a, h: tm(a, (h, h * 2))[0], lambda a, h: em(a, (h, h * 2))[0], x[:, 0], h0, node=False)
    else:
        check(lambda a, h: tm(a, h)[0], lambda a, h: em(a, h)[0], x[:, 0], h0, node=False)
    tm.zero_grad()
    em.zero_grad()
    xt, xe = _pair(x)
    tm(xt)[0].sum().backward()
    em(xe)[0].sum().backward()
    for (name, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch_graph_and_values(cls):
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(4, 5)
    engine.manual_seed(0)
    em = getattr(enn, cls)(4, 5)
    same_params(tm, em)
    assert repr(em) == repr(tm)
    x = f32(3, 4)
    if cls == "LSTMCell":
        to, eo = check(lambda a: tm(a)[0], lambda a: em(a)[0], x)
    else:
        to, eo = check(tm, em, x)
    names_t, names_e = set(_graph(to.grad_fn)), set(_graph(eo.grad_fn))
    assert names_e == names_t
    h = f32(5)
    if cls == "LSTMCell":
        check(lambda a, b: tm(a, (b, b))[1], lambda a, b: em(a, (b, b))[1], x[0], h, node=False)
    else:
        check(tm, em, x[0], h)


def test_rnn_errors():
    raises_same(lambda: tnn.LSTM(4, 5)(torch.zeros(3, 2, 3)), lambda: enn.LSTM(4, 5)(engine.zeros(3, 2, 3)))
    raises_same(lambda: tnn.GRU(4, 5)(torch.zeros(3)), lambda: enn.GRU(4, 5)(engine.zeros(3)))


# ---------------------------------------------------------------- module API
def _convnet(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.1), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 3))


def test_state_dict_roundtrip_and_errors():
    torch.manual_seed(0)
    tm = _convnet(tnn)
    engine.manual_seed(0)
    em = _convnet(enn)
    assert list(em.state_dict()) == list(tm.state_dict())
    em.train()
    em(engine.tensor(f32(2, 1, 6, 6)))  # moves the running statistics
    other = _convnet(enn)
    res = other.load_state_dict(em.state_dict())
    assert repr(res) == repr(tm.load_state_dict(tm.state_dict())) == "<All keys matched successfully>"
    for k, v in em.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[k].numpy(), v.numpy(), err_msg=k)
    bad_t = dict(tm.state_dict())
    bad_e = dict(em.state_dict())
    for d in (bad_t, bad_e):
        d.pop("1.running_var")
        d["extra"] = d["5.bias"]
    raises_same(lambda: tm.load_state_dict(bad_t), lambda: em.load_state_dict(bad_e))
    res_t, res_e = tm.load_state_dict(bad_t, strict=False), em.load_state_dict(bad_e, strict=False)
    assert (res_e.missing_keys, res_e.unexpected_keys) == (res_t.missing_keys, res_t.unexpected_keys)
    wrong_t, wrong_e = dict(tm.state_dict()), dict(em.state_dict())
    wrong_t["5.bias"], wrong_e["5.bias"] = torch.zeros(4), engine.zeros(4)
    raises_same(lambda: tm.load_state_dict(wrong_t), lambda: em.load_state_dict(wrong_e))


def test_module_traversal_train_eval_apply_requires_grad():
    tm, em = _convnet(tnn), _convnet(enn)
    assert [n for n, _ in em.named_modules()] == [n for n, _ in tm.named_modules()]
    assert [type(m).__name__ for m in em.children()] == [type(m).__name__ for m in tm.children()]
    assert [n for n, _ in em.named_buffers()] == [n for n, _ in tm.named_buffers()]
    em.eval()
    assert not any(m.training for m in em.modules())
    em.train()
    assert all(m.training for m in em.modules())
    seen = []
    em.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Sequential" and seen[0] == "Conv2d"
    em.requires_grad_(False)
    assert not any(p.requires_grad for p in em.parameters())


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_and_value(norm_type):
    torch.manual_seed(0)
    tm = _convnet(tnn)
    engine.manual_seed(0)
    em = _convnet(enn)
    tm.eval()
    em.eval()
    x = f32(2, 1, 6, 6)
    (tm(torch.tensor(x)) ** 2).sum().backward()
    (em(engine.tensor(x)) ** 2).sum().backward()
    tn = tnn.utils.clip_grad_norm_(tm.parameters(), 0.5, norm_type)
    en = enn.utils.clip_grad_norm_(em.parameters(), 0.5, norm_type)
    np.testing.assert_allclose(en.item(), tn.item(), rtol=1e-5)
    for tp, ep in zip(tm.parameters(), em.parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)
    tnn.utils.clip_grad_value_(tm.parameters(), 0.01)
    enn.utils.clip_grad_value_(em.parameters(), 0.01)
    for tp, ep in zip(tm.parameters(), em.parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)
    v = enn.utils.parameters_to_vector(em.parameters())
    assert v.shape == tnn.utils.parameters_to_vector(tm.parameters()).shape


def test_limits_stop_a_convolution_before_numpy_allocates():
    from engine.limits import LimitExceeded, limited

    conv = enn.Conv2d(3, 8, 5)
    with limited(max_tensor_elements=200_000, max_live_elements=10_000_000, max_graph_nodes=1000):
        x = engine.zeros(8, 3, 64, 64)  # 98k elements: allowed; its im2col buffer would hold 8*75*60*60 = 2.16M
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):
            conv(x)
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):  # a padded copy past the limit
            enn.functional.pad(engine.zeros(2, 3, 100, 100), (200, 200))
        enn.functional.max_pool2d(engine.zeros(2, 3, 100, 100), 9, 1)  # windows are never materialised: fine
        with pytest.raises(LimitExceeded):
            enn.Embedding(10, 1000)(engine.zeros(500, dtype=engine.int64))


# ---------------------------------------------------------------- issue 10: padding modes
PAD_CASES = [((2, 4, 5), (2, 1)), ((2, 4, 5), (-1, 2)), ((2, 4, 5), (2, -1)), ((1, 2, 4, 5), (1, 2, 2, 1)),
             ((1, 2, 4, 5), (0, 3, 1, 0)), ((2, 4, 5), (1, 1, 2, 1)), ((3, 6), (4, 0)), ((2, 4, 5), (3, 3))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", PAD_CASES)
def test_pad_modes_match(mode, shape, pad):
    check(lambda x: tnn.functional.pad(x, pad, mode=mode), lambda x: enn.functional.pad(x, pad, mode=mode), f32(*shape))


@pytest.mark.parametrize("mode, shape, pad", [
    ("reflect", (2, 4, 5), (5, 0)), ("reflect", (1, 2, 4, 5), (0, 0, 4, 0)), ("circular", (2, 4, 5), (6, 0)),
    ("reflect", (1, 2, 4, 5), (1, 1)), ("replicate", (5,), (1, 1)), ("foo", (2, 3), (1, 1)),
])
def test_pad_mode_errors_match(mode, shape, pad):
    x = f32(*shape)
    raises_same(lambda: tnn.functional.pad(torch.tensor(x), pad, mode=mode),
                lambda: enn.functional.pad(engine.tensor(x), pad, mode=mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd, kwargs", [(2, {"padding": (1, 2)}), (2, {"padding": 1, "stride": 2}), (1, {"padding": 2}),
                                        (2, {"padding": "same", "kernel_size": 4}), (1, {"padding": "valid"})])
def test_conv_padding_mode_matches(mode, nd, kwargs):
    kwargs = {"kernel_size": 3, **kwargs}
    torch.manual_seed(0)
    tm = (tnn.Conv2d if nd == 2 else tnn.Conv1d)(2, 3, padding_mode=mode, **kwargs)
    engine.manual_seed(0)
    em = (enn.Conv2d if nd == 2 else enn.Conv1d)(2, 3, padding_mode=mode, **kwargs)
    same_params(tm, em)
    assert repr(em) == repr(tm)
    to, eo = check(tm, em, f32(2, 2, 6, 7) if nd == 2 else f32(2, 2, 9))
    for (name, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    assert type(eo.grad_fn.next_functions[0][0]).__name__ == type(to.grad_fn.next_functions[0][0]).__name__


# ---------------------------------------------------------------- issue 10: NLL / cross-entropy over (N, C, d1, ...)
def _graph(fn):
    """grad_fn names of a loss's graph, nested, without the leaves."""
    if fn is None:
        return ""
    kids = [f for f, _ in fn.next_functions if f is not None and type(f).__name__ != "AccumulateGrad"]
    return type(fn).__name__ + "(" + ",".join(_graph(k) for k in kids) + ")"


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("fn, kwargs", [
    ("nll_loss", {}), ("nll_loss", {"reduction": "none"}), ("nll_loss", {"reduction": "sum"}),
    ("nll_loss", {"weight": [0.2, 1.0, 3.0]}), ("nll_loss", {"ignore_index": 1, "reduction": "none"}),
    ("cross_entropy", {}), ("cross_entropy", {"weight": [0.2, 1.0, 3.0], "reduction": "none"}),
    ("cross_entropy", {"label_smoothing": 0.2}), ("cross_entropy", {"label_smoothing": 0.1, "weight": [0.2, 1.0, 3.0]}),
    ("cross_entropy", {"label_smoothing": 0.3, "reduction": "sum", "ignore_index": 2}),
])
def test_spatial_nll_and_cross_entropy_match(shape, fn, kwargs):
    x = f32(*shape)
    t = np.random.default_rng(1).integers(0, 3, (shape[0],) + shape[2:])
    if "ignore_index" not in kwargs:
        t.flat[0] = -100
    out = []
    for lib in (torch, engine):
        kw = {k: lib.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
        xi = lib.tensor(x, requires_grad=True)
        loss = getattr(lib.nn.functional, fn)(xi, lib.tensor(t), **kw)
        (loss * lib.tensor(np.arange(1, loss.numel() + 1, dtype=np.float32).reshape(tuple(loss.shape)))).sum().backward()
        out.append((loss.detach().numpy(), xi.grad.numpy(), _graph(loss.grad_fn)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)
    assert out[1][2] == out[0][2]


def test_spatial_losses_as_modules_match():
    x, t = f32(2, 4, 3, 3), np.random.default_rng(2).integers(0, 4, (2, 3, 3))
    for make in (lambda lib: lib.nn.CrossEntropyLoss(weight=lib.tensor([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.1),
                 lambda lib: lib.nn.NLLLoss(ignore_index=3)):
        check(lambda a, make=make: make(torch)(a, torch.tensor(t)), lambda a, make=make: make(engine)(a, engine.tensor(t)),
              x)


@pytest.mark.parametrize("xshape, tshape, value", [((2, 3, 4), (2, 5), 0), ((2, 3, 4, 5), (2, 4), 0),
                                                   ((2, 3, 4, 5), (2, 4, 5), 7), ((2, 3, 4), (3, 4), 1),
                                                   ((2, 3, 4, 5), (2, 4, 6), 0), ((2, 3, 4), (2, 4), -1)])
def test_spatial_nll_errors_match(xshape, tshape, value):
    x, t = f32(*xshape), np.full(tshape, value)
    raises_same(lambda: tnn.functional.nll_loss(torch.tensor(x), torch.tensor(t)),
                lambda: enn.functional.nll_loss(engine.tensor(x), engine.tensor(t)))


# ---------------------------------------------------------------- issue 10: GRU / RNN graphs as PyTorch builds them
def _edges(out):
    """(node name, input node name) pairs of a graph: PyTorch draws one UnsafeSplit / Unbind node with several
    outputs where the engine has one node per output, so the pairs are compared, not the node counts."""
    edges, stack, seen = set(), [out.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        for child, _ in fn.next_functions:
            if child is not None:
                edges.add((type(fn).__name__, type(child).__name__))
                stack.append(child)
    return edges


@pytest.mark.parametrize("cls, kw", [("GRU", {}), ("RNN", {}), ("RNN", dict(nonlinearity="relu")),
                                     ("GRU", dict(num_layers=2, bidirectional=True)), ("RNN", dict(bias=False)),
                                     ("GRU", dict(bias=False))])
def test_gru_and_rnn_graphs_have_pytorchs_nodes(cls, kw):
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(3, 4, **kw)
    em = getattr(enn, cls)(3, 4, **kw)
    copy_params(tm, em)
    x = f32(5, 2, 3)
    to, th = tm(torch.tensor(x))
    eo, eh = em(engine.tensor(x))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert _edges(eo) == _edges(to)
    assert _edges(eh) == _edges(th)
