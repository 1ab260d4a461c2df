"""F.cosine_similarity / F.pairwise_distance, torch.* and nn.CosineSimilarity / nn.PairwiseDistance (engine/nn/
functional.py, engine/nn/distance.py) against torch 2.13: values, dtypes, grad_fn names, gradients and the errors'
words (the word-embeddings tutorial's nearest words).
NOTE: values are compared to a few ulps: a norm along another dim than the last sums its squares in numpy's order,
not ATen's (along the last dim, cosine_similarity's, they are ATen's: test_mkl_vs_torch.py). The finite-difference check of
the norm_dim row (NormBackward1) is in test_gradcheck.py; the composed gradient is checked here too."""
import numpy as np
import pytest

import engine as fg
import engine.nn.functional as FF
from engine.gradcheck import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional
rng = np.random.default_rng(33)


def R(*shape, dtype=np.float32):  # noqa: N802
    return rng.normal(size=shape).astype(dtype)


def _run(lib, fn, arrays, grad):
    ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    try:
        out = fn(lib, ts)
    except Exception as e:  # noqa: BLE001 — the error is what is compared
        return ts, None, e
    return ts, out, None


def compare(fn, arrays, grad=True):
    """fn(lib, tensors) under torch and the engine: the same error, or equal values, dtype, grad_fn and gradients."""
    tt, rt, et = _run(torch, fn, arrays, grad)
    ft, rf, ef = _run(fg, fn, arrays, grad)
    if et is not None or ef is not None:
        assert type(ef) is type(et) and str(ef) == str(et), (et, ef)
        return
    assert tuple(rf.shape) == tuple(rt.shape) and str(rf.dtype) == str(rt.dtype)
    np.testing.assert_allclose(rf.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert (rf.grad_fn and rf.grad_fn.name()) == (rt.grad_fn and rt.grad_fn.name())
    if rt.requires_grad:
        w = R(*rt.shape).astype(rt.detach().numpy().dtype)
        (rt * torch.tensor(w)).sum().backward()
        (rf * fg.tensor(w)).sum().backward()
        for a, b in zip(tt, ft):
            if a.grad is not None:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6)


def _lib_f(lib):
    return TF if lib is torch else FF


@pytest.mark.parametrize("shapes, kwargs", [
    (((5, 7), (5, 7)), {}), (((5, 7), (5, 7)), {"dim": 0}), (((5, 7), (7,)), {"dim": -1}),
    (((4, 1, 6), (1, 3, 6)), {"dim": 2}), (((3, 4), (3, 4)), {"eps": 1e-3}), (((2, 3, 4), (2, 3, 4)), {}),
    (((0, 3), (0, 3)), {}), (((3, 0), (3, 0)), {}), (((3,), (3,)), {"dim": 0}), (((), ()), {"dim": 0}),
    (((3,), (3,)), {}), (((2, 3), (2, 4)), {}), (((2, 3), (2, 3)), {"dim": 2}),
])
def test_cosine_similarity(shapes, kwargs):
    compare(lambda lib, ts: _lib_f(lib).cosine_similarity(*ts, **kwargs), [R(*s) for s in shapes])
    compare(lambda lib, ts: lib.cosine_similarity(*ts, **kwargs), [R(*s) for s in shapes])


@pytest.mark.parametrize("dtypes", [(np.int64, np.int64), (np.bool_, np.uint8), (np.int32, np.float32),
                                    (np.float32, np.int64), (np.float64, np.float32), (np.float64, np.float64)])
def test_cosine_similarity_dtypes(dtypes):
    arrays = [(rng.integers(-3, 4, size=(3, 4)) if d != np.bool_ else rng.integers(0, 2, size=(3, 4))).astype(d)
              for d in dtypes]
    compare(lambda lib, ts: _lib_f(lib).cosine_similarity(*ts), arrays)


def test_cosine_similarity_of_a_zero_vector_has_pytorchs_gradient():
    # the clamped norm passes its gradient on as if unclamped: 1/eps remains, as in PyTorch (57735028 here)
    compare(lambda lib, ts: _lib_f(lib).cosine_similarity(*ts), [np.zeros((2, 3), np.float32), R(2, 3)])


@pytest.mark.parametrize("args, kwargs", [
    ((), {"p": 1.0}), ((3,), {}), ((), {"keepdim": True}), ((0.5,), {}), ((float("inf"),), {}), ((0.0,), {}),
    ((2.0, 1e-2), {}),
])
@pytest.mark.parametrize("shapes", [((5, 7), (5, 7)), ((5, 7), (7,)), ((7,), (5, 7)), ((7,), (7,)), ((), ()),
                                    ((2, 3), (2, 4))])
def test_pairwise_distance(shapes, args, kwargs):
    compare(lambda lib, ts: _lib_f(lib).pairwise_distance(*ts, *args, **kwargs), [R(*s) for s in shapes])
    compare(lambda lib, ts: lib.pairwise_distance(*ts, *args, **kwargs), [R(*s) for s in shapes])


@pytest.mark.parametrize("call", [
    "F.cosine_similarity(a, [1.0, 2.0])", "F.cosine_similarity([1.0], a)", "F.cosine_similarity(a, a, 0, 'x')",
    "F.cosine_similarity(a, a, dim=1.0)", "F.cosine_similarity(a, a, 1, True)", "F.pairwise_distance(a, 'b')",
    "F.pairwise_distance(a, a, '2')", "F.pairwise_distance(a, a, 2, 1e-6, 1)", "F.pairwise_distance(a.long(), a.long())",
    "F.pairwise_distance(a > 0, a > 0)",
])
def test_wrong_arguments_raise_pytorchs_errors(call):
    def fn(lib, ts):
        return eval(call, {"F": _lib_f(lib), "a": ts[0]})  # noqa: S307 — the test's own expressions
    compare(fn, [R(2, 3)], grad=False)


def test_the_modules_print_and_compute_as_pytorchs():
    for cls, kwargs in (("CosineSimilarity", {}), ("CosineSimilarity", {"dim": 0, "eps": 1e-3}),
                        ("PairwiseDistance", {}), ("PairwiseDistance", {"p": 1.0, "keepdim": True})):
        assert repr(getattr(fg.nn, cls)(**kwargs)) == repr(getattr(torch.nn, cls)(**kwargs))
        compare(lambda lib, ts, cls=cls, kwargs=kwargs: getattr(lib.nn, cls)(**kwargs)(*ts), [R(4, 5), R(4, 5)])


def test_gradients_match_finite_differences():
    a, b = fg.tensor(R(4, 5, dtype=np.float64), requires_grad=True), fg.tensor(R(4, 5, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda x, y: FF.cosine_similarity(x, y), (a, b))
    assert gradcheck(lambda x, y: FF.cosine_similarity(x, y, dim=0), (a, b))
    assert gradcheck(lambda x, y: FF.pairwise_distance(x, y), (a, b))
    assert gradcheck(lambda x, y: FF.pairwise_distance(x, y, 1.5, keepdim=True), (a, b))


def test_the_word_embeddings_nearest_words_print_as_pytorchs():
    emb = R(12, 10)
    out = []
    for lib, F in ((torch, TF), (fg, FF)):
        w = lib.tensor(emb)
        sims = F.cosine_similarity(w[3].unsqueeze(0), w)
        best = lib.topk(sims, 4)
        out.append((repr(sims), best.indices.tolist(), best.values.tolist()))
    assert out[0] == out[1]
