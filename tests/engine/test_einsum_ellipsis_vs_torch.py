"""torch.einsum with '...' (ellipsis) and the implicit output: values, gradients, grad_fn names and error messages
against PyTorch, and finite differences for the gradients."""
import numpy as np
import pytest

import engine

rng = np.random.default_rng(7)

VALID = [
    ("...ij,jk->...ik", [(2, 3, 4), (4, 5)]), ("...ij,jk", [(2, 3, 4), (4, 5)]), ("bij,...j->...bi", [(2, 3, 4), (4,)]),
    ("...i,...i->...", [(2, 3, 4), (3, 4)]), ("...ii->...i", [(2, 3, 3)]), ("i...->i", [(2,)]),
    ("i...j->ij", [(2, 3, 4)]), ("...", [(2, 3)]), ("ba", [(2, 3)]), ("...i,...i", [(2, 3), (3,)]),
    ("...ij,...jk", [(5, 2, 3), (1, 3, 4)]), ("...,...", [(2, 1), (3,)]), ("i...->...", [(2, 1)]),
    ("b...,b...->...", [(2, 3, 4), (2, 1, 4)]), ("Ab,bA", [(2, 3), (3, 2)]), ("i->...", [(2,)]),
    ("... i j , ... j k -> ... i k", [(2, 2, 3), (2, 3, 2)]), ("ij...->", [(3, 4)]),
]
INVALID = [
    ("..i->i", [(3, 4)]), ("...i...->i", [(3, 4)]), ("i.->i", [(3, 4)]), ("...ij,...ij", [(2, 3, 4), (5, 3, 4)]),
    ("ij->...i..", [(3, 4)]), ("...i->...i...", [(3, 4)]), ("i", [(3, 4)]), ("i->.i", [(2,)]), ("i...j", [(2,)]),
    ("i-j", [(2, 2)]), ("i,j", [(2,)]), ("i", [(2,), (2,)]), ("...i->ii", [(2,)]), ("i->j", [(2,)]),
]


def _run(lib, eq, arrays):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    try:
        y = lib.einsum(eq, *ts)
    except RuntimeError as e:
        return str(e)
    y.backward(lib.ones_like(y) * 1.5)
    return y.detach().numpy(), [t.grad.numpy() for t in ts], type(y.grad_fn).__name__


@pytest.mark.parametrize("eq, shapes", VALID + INVALID)
def test_einsum_matches_torch(eq, shapes):
    torch = pytest.importorskip("torch")
    arrays = [rng.standard_normal(s) for s in shapes]
    got, want = _run(engine, eq, arrays), _run(torch, eq, arrays)
    if isinstance(want, str):
        assert got == want
        return
    assert got[0].shape == want[0].shape and got[2] == want[2]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eq, shapes", [("...ij,jk->...ik", [(2, 3, 4), (4, 5)]), ("...ii->...i", [(2, 3, 3)]),
                                        ("...ij,...jk", [(3, 2, 3), (1, 3, 2)]), ("i...j->ij", [(2, 3, 4)])])
def test_einsum_ellipsis_gradients_match_finite_differences(eq, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    weights = rng.standard_normal(engine.einsum(eq, *[engine.tensor(a) for a in arrays]).shape)

    def f(*xs):
        return float((engine.einsum(eq, *[engine.tensor(x) for x in xs]).numpy() * weights).sum())

    ts = [engine.tensor(a, requires_grad=True) for a in arrays]
    (engine.einsum(eq, *ts) * engine.tensor(weights)).sum().backward()
    eps = 1e-6
    for i, t in enumerate(ts):
        num = np.zeros_like(arrays[i])
        for idx in np.ndindex(arrays[i].shape):
            hi, lo = [a.copy() for a in arrays], [a.copy() for a in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            num[idx] = (f(*hi) - f(*lo)) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-6, atol=1e-8)
