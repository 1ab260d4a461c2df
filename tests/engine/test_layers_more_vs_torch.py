"""nn.PReLU/F.prelu, nn.GLU/F.glu, nn.CosineSimilarity/F.cosine_similarity, nn.PairwiseDistance/
F.pairwise_distance and nn.GroupNorm/F.group_norm against PyTorch 2.13 (values, input and parameter gradients,
parameters' names/shapes/initial values, printouts, errors) and their gradients against finite differences."""
import numpy as np
import pytest

import engine
import engine.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def _pair(x):
    return torch.tensor(x, requires_grad=True), engine.tensor(x, requires_grad=True)


def check(tfn, efn, *xs, rtol=1e-5, atol=1e-6):
    """Same value and the same input gradients for one weighted-sum backward."""
    pairs = [_pair(x) for x in xs]
    to = tfn(*[p[0] for p in pairs])
    eo = efn(*[p[1] for p in pairs])
    assert tuple(eo.shape) == tuple(to.shape) and eo.dtype == engine.float32
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    w = f32(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * engine.tensor(w)).sum().backward()
    for t, e in pairs:
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol * 10, atol=atol * 10)


FUNCTIONAL = {
    "prelu-channels": (lambda F: lambda x, w: F.prelu(x, w), ((2, 4, 3), (4,))),
    "prelu-one": (lambda F: lambda x, w: F.prelu(x, w), ((2, 5), (1,))),
    "prelu-4d": (lambda F: lambda x, w: F.prelu(x, w), ((2, 3, 2, 2), (3,))),
    "prelu-1d": (lambda F: lambda x, w: F.prelu(x, w), ((5,), (1,))),
    "glu-last": (lambda F: lambda x: F.glu(x), ((3, 6),)),
    "glu-dim1": (lambda F: lambda x: F.glu(x, 1), ((2, 4, 3),)),
    "glu-neg": (lambda F: lambda x: F.glu(x, -3), ((4, 2, 3),)),
    "cosine": (lambda F: lambda a, b: F.cosine_similarity(a, b), ((4, 5), (4, 5))),
    "cosine-dim": (lambda F: lambda a, b: F.cosine_similarity(a, b, dim=-1, eps=1e-6), ((2, 3, 4), (2, 3, 4))),
    "cosine-broadcast": (lambda F: lambda a, b: F.cosine_similarity(a, b, dim=1), ((3, 4), (1, 4))),
    "cosine-0": (lambda F: lambda a, b: F.cosine_similarity(a, b, 0), ((6,), (6,))),
    "pairwise": (lambda F: lambda a, b: F.pairwise_distance(a, b), ((4, 5), (4, 5))),
    "pairwise-p1-keep": (lambda F: lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True), ((3, 4), (3, 4))),
    "pairwise-p3-bcast": (lambda F: lambda a, b: F.pairwise_distance(a, b, 3.0, 1e-3), ((2, 3, 4), (4,))),
    "pairwise-1d": (lambda F: lambda a, b: F.pairwise_distance(a, b), ((5,), (5,))),
    "group_norm": (lambda F: lambda x: F.group_norm(x, 2), ((3, 4, 5),)),
    "group_norm-affine": (lambda F: lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-3), ((2, 6, 2, 3), (6,), (6,))),
    "group_norm-2d": (lambda F: lambda x, w: F.group_norm(x, 1, w), ((4, 3), (3,))),
    "group_norm-instance": (lambda F: lambda x: F.group_norm(x, 4), ((2, 4, 7),)),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional_values_and_gradients_match_torch(name):
    make, shapes = FUNCTIONAL[name]
    check(make(TF), make(EF), *[f32(*s) for s in shapes])


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional_gradients_match_finite_differences(name):
    make, shapes = FUNCTIONAL[name]
    xs = [engine.tensor(rng.normal(size=s), dtype=engine.float64, requires_grad=True) for s in shapes]
    assert engine.autograd.gradcheck(make(EF), tuple(xs), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_cosine_similarity_near_zero_vectors_clamps_like_torch():
    a = np.zeros((2, 3), np.float32)
    a[1] = 1e-10
    b = f32(2, 3)
    check(lambda x, y: TF.cosine_similarity(x, y), lambda x, y: EF.cosine_similarity(x, y), a, b, atol=1e-5)


def test_prelu_at_zero_and_negative_slopes_match_torch():
    x = np.array([[-2.0, 0.0, 3.0], [0.0, -0.5, 1.0]], np.float32)
    check(lambda a, w: TF.prelu(a, w), lambda a, w: EF.prelu(a, w), x, np.array([-0.3], np.float32))


MODULES = [
    ("PReLU", (), {}),
    ("PReLU", (3,), {"init": 0.1}),
    ("GLU", (), {}),
    ("GLU", (1,), {}),
    ("CosineSimilarity", (), {}),
    ("CosineSimilarity", (), {"dim": 0, "eps": 1e-6}),
    ("PairwiseDistance", (), {}),
    ("PairwiseDistance", (1.0,), {"keepdim": True}),
    ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (1, 4), {"eps": 1e-3, "affine": False}),
    ("GroupNorm", (4, 4), {"bias": False}),
]
INPUTS = {"PReLU": [(2, 3, 4)], "GLU": [(2, 4, 6)], "CosineSimilarity": [(3, 5), (3, 5)],
          "PairwiseDistance": [(3, 5), (3, 5)], "GroupNorm": [(3, 4, 5)]}


@pytest.mark.parametrize("cls,args,kw", MODULES)
def test_modules_match_torch(cls, args, kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kw)
    engine.manual_seed(0)
    em = getattr(engine.nn, cls)(*args, **kw)
    assert repr(em) == repr(tm)
    tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
    assert list(tp) == list(ep)
    for k in tp:
        np.testing.assert_array_equal(ep[k].detach().numpy(), tp[k].detach().numpy(), err_msg=k)
    assert list(tm.state_dict()) == list(em.state_dict())
    xs = [f32(*s) for s in INPUTS[cls]]
    tx = [torch.tensor(x, requires_grad=True) for x in xs]
    ex = [engine.tensor(x, requires_grad=True) for x in xs]
    to, eo = tm(*tx), em(*ex)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = f32(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * engine.tensor(w)).sum().backward()
    for k in tp:
        np.testing.assert_allclose(ep[k].grad.numpy(), tp[k].grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    for e, t in zip(ex, tx):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


ERRORS = [
    lambda F, lib: F.glu(lib.ones(2, 3)),
    lambda F, lib: F.glu(lib.ones(2, 4), 2),
    lambda F, lib: F.glu(lib.tensor(1.0)),
    lambda F, lib: F.prelu(lib.ones(2, 3), lib.ones(2)),
    lambda F, lib: F.prelu("x", lib.ones(1)),
    lambda F, lib: F.group_norm(lib.ones(2, 3, 4), 2),
    lambda F, lib: F.group_norm(lib.ones(2, 4, 4), 2, lib.ones(3)),
    lambda F, lib: lib.nn.GroupNorm(3, 4),
    lambda F, lib: F.cosine_similarity(lib.ones(2, 4, 3), lib.ones(5)),
    lambda F, lib: F.cosine_similarity(lib.ones(2, 4, 3), lib.ones(3, 1, 3)),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    got = []
    for F, lib in ((TF, torch), (EF, engine)):
        with pytest.raises(Exception) as e:
            make(F, lib)
        got.append((type(e.value).__name__, str(e.value)))
    assert got[1] == got[0]
