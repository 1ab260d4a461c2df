"""engine/tensor_more_names.py against torch 2.13: fmax, fmin, copysign, signbit, sinc, logaddexp, take, float_power,
baddbmm, searchsorted, bucketize, rot90, tensor_split, ravel, column_stack — values, dtypes, grad_fn names, gradients
(and finite differences), and the errors' words."""
from __future__ import annotations

import numpy as np
import pytest

import engine as fg
from engine.gradcheck import gradcheck

torch = pytest.importorskip("torch")
rng = np.random.default_rng(21)


def R(*shape, dtype=np.float32):  # noqa: N802
    return rng.normal(size=shape).astype(dtype)


X, Y = R(3, 4), R(3, 4)
Y[0, 0], X[1, 1], Y[1, 1], X[2, 0] = np.nan, np.nan, 0.5, 0.0  # nan on one side, a zero for copysign
B1, B2, C = R(2, 3, 4), R(2, 4, 5), R(3, 5)

# (name, fn(lib, tensors) -> tensor(s), arrays, exact: bit for bit, else to a few ulps)
CASES = [
    ("fmax", lambda L, t: L.fmax(*t), [X, Y], True),
    ("fmin", lambda L, t: t[0].fmin(t[1]), [X, Y], True),
    ("fmax_broadcast", lambda L, t: L.fmax(t[0], t[1]), [R(3, 1), R(1, 4)], True),
    ("copysign", lambda L, t: L.copysign(t[0], t[1]), [X, R(3, 4)], True),
    ("copysign_number", lambda L, t: t[0].copysign(-1.0), [X], True),
    ("sinc", lambda L, t: L.sinc(t[0]), [np.array([0.0, 0.5, -1.25, 3.0, 1e-3], np.float32)], False),
    ("logaddexp", lambda L, t: L.logaddexp(*t), [R(3, 4), R(3, 4)], False),
    ("take", lambda L, t: L.take(t[0], L.tensor([[0, 5], [-1, 5]])), [X], True),
    ("float_power", lambda L, t: L.float_power(t[0], 3), [R(5)], True),
    # (the exponent's gradient, PowBackward1's existing rule, can differ in the last bit of float64)
    ("float_power_tensor", lambda L, t: t[0].abs().float_power(t[1]), [R(5), R(5)], False),
    ("baddbmm", lambda L, t: L.baddbmm(t[2], t[0], t[1], beta=0.5, alpha=2.0), [B1, B2, C], False),
    ("baddbmm_beta0", lambda L, t: t[2].expand(2, 3, 5).baddbmm(t[0], t[1], beta=0), [B1, B2, C], False),
    ("rot90", lambda L, t: L.rot90(t[0]), [R(2, 3, 4)], True),
    ("rot90_k", lambda L, t: t[0].rot90(-3, [2, 0]), [R(2, 3, 4)], True),
    ("rot90_2", lambda L, t: L.rot90(t[0], 2, (1, 2)), [R(2, 3, 4)], True),
    ("tensor_split", lambda L, t: L.tensor_split(t[0], 3, dim=1), [R(2, 7)], True),
    ("tensor_split_indices", lambda L, t: t[0].tensor_split([1, 5, 9]), [R(7, 2)], True),
    ("ravel", lambda L, t: L.ravel(t[0].t()), [R(3, 4)], True),
    ("column_stack", lambda L, t: L.column_stack([t[0], t[1], t[2]]), [R(3), R(3, 2), R(3)], True),
    # SLEEF's log on whole blocks of 8, glibc's logf on the rest: bit for bit
    ("logit", lambda L, t: L.logit(t[0]), [rng.uniform(0.001, 0.999, (5, 13)).astype(np.float32)], True),
    ("logit_eps", lambda L, t: t[0].logit(eps=0.1), [rng.uniform(0.0, 1.0, (37,)).astype(np.float32)], True),
    ("special_logit", lambda L, t: L.special.logit(t[0], 0.05), [rng.uniform(0.0, 1.0, (4, 8)).astype(np.float32)],
     True),
    ("special_expit", lambda L, t: L.special.expit(t[0]), [R(3, 5)], True),
    # (xlogy's log is numpy's: its last bit can differ)
    ("special_xlogy", lambda L, t: L.special.xlogy(t[0], t[0].abs()), [R(3, 5)], False),
]


def _run(lib, fn, arrays):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, ts)
    outs = out if isinstance(out, tuple) else (out,)
    total = sum(o.double().sum() if o.dtype != lib.float64 else o.sum() for o in outs)
    total.backward()
    return outs, [t.grad for t in ts]


def _same(ours, theirs, exact):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype, ours.shape)
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("name, fn, arrays, exact", CASES, ids=[c[0] for c in CASES])
def test_values_nodes_and_gradients_are_torchs(name, fn, arrays, exact):
    theirs, their_grads = _run(torch, fn, arrays)
    ours, our_grads = _run(fg, fn, arrays)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        _same(o.detach().numpy(), t.detach().numpy(), exact)
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__, (o.grad_fn, t.grad_fn)
    for o, t in zip(our_grads, their_grads):
        assert (o is None) == (t is None)
        if o is not None:
            _same(o.numpy(), t.numpy(), exact)


@pytest.mark.parametrize("name, fn", [
    ("fmax", lambda a, b: fg.fmax(a, b)), ("fmin", lambda a, b: fg.fmin(a, b)),
    ("copysign", lambda a, b: fg.copysign(a, b)), ("sinc", lambda a, b: fg.sinc(a) * b),
    ("logaddexp", lambda a, b: fg.logaddexp(a, b)), ("take", lambda a, b: fg.take(a * b, fg.tensor([3, 0, 3]))),
    ("rot90", lambda a, b: fg.rot90(a, 1) * fg.rot90(b, 1)),
    ("baddbmm", lambda a, b: fg.baddbmm(a[:, :3], a.reshape(1, 3, 4), b.reshape(1, 4, 3), beta=0.5, alpha=1.5)),
])
def test_gradients_match_finite_differences(name, fn):
    a = fg.tensor(R(3, 4, dtype=np.float64) + 2.0, requires_grad=True)  # away from the kinks at 0 and a == b
    b = fg.tensor(R(3, 4, dtype=np.float64), requires_grad=True)
    assert gradcheck(fn, (a, b))


def test_searchsorted_and_bucketize_are_torchs():
    seq, rows = np.array([1, 3, 3, 5, 9]), np.array([[1, 3, 5], [2, 4, 6]])
    values = np.array([0, 3, 4, 9, 10])
    for kw in ({}, {"right": True}, {"side": "right"}, {"side": "left", "out_int32": True}):
        ours = fg.searchsorted(fg.tensor(seq), fg.tensor(values), **kw)
        theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(values), **kw)
        assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype)
    ours = fg.searchsorted(fg.tensor(rows), fg.tensor([[3, 0], [7, 4]]), right=True)
    assert ours.tolist() == torch.searchsorted(torch.tensor(rows), torch.tensor([[3, 0], [7, 4]]), right=True).tolist()
    assert fg.searchsorted(fg.tensor([1.0, 2.0]), 1.5).tolist() == 1 and fg.searchsorted(fg.tensor(seq), 3).ndim == 0
    sorter = np.array([4, 0, 3, 1, 2])
    assert (fg.searchsorted(fg.tensor([9, 1, 3, 5, 3]), fg.tensor(values), sorter=fg.tensor(sorter)).tolist()
            == torch.searchsorted(torch.tensor([9, 1, 3, 5, 3]), torch.tensor(values), sorter=torch.tensor(sorter)).tolist())
    for right in (False, True):
        assert (fg.bucketize(fg.tensor([1, 5, 9]), fg.tensor([2, 4, 6, 8]), right=right).tolist()
                == torch.bucketize(torch.tensor([1, 5, 9]), torch.tensor([2, 4, 6, 8]), right=right).tolist())
    assert str(fg.signbit(fg.tensor([-0.0, 1.0, -2.0]))) == str(torch.signbit(torch.tensor([-0.0, 1.0, -2.0])))
    assert str(fg.signbit(fg.tensor([-1, 0]))) == str(torch.signbit(torch.tensor([-1, 0])))


@pytest.mark.parametrize("call", [
    "L.fmax(L.ones(2), 2.0)",
    "L.take(L.ones(2, 3), L.tensor([0, 1], dtype=L.int32))",
    "L.take(L.ones(2, 3), L.tensor([6]))",
    "L.logaddexp(L.tensor([1]), L.tensor([2]))",
    "L.rot90(L.ones(2, 2), 1, [0])",
    "L.rot90(L.ones(3), 1)",
    "L.rot90(L.ones(2, 2), 1, [1, 1])",
    "L.baddbmm(L.ones(2, 2), L.ones(1, 2, 3), L.ones(1, 4, 2))",
    "L.baddbmm(L.ones(2, 2), L.ones(1, 2, 3), L.ones(1, 3, 3))",
    "L.searchsorted(L.tensor([1, 2]), L.tensor([1]), side='middle')",
    "L.searchsorted(L.tensor([1, 2]), L.tensor([1]), right=True, side='left')",
    "L.searchsorted(L.tensor([[1, 2]]), L.tensor([[1], [2]]))",
    "L.bucketize(L.tensor([1]), L.tensor([[1, 2]]))",
    "L.tensor_split(L.ones(3), 0)",
])
def test_errors_are_torchs(call):
    errors = []
    for lib in (torch, fg):
        with pytest.raises(Exception) as caught:  # noqa: PT011 — the error itself is what is compared
            eval(call, {"L": lib})  # noqa: S307 — our own test expressions
        errors.append(caught.value)
    theirs, ours = errors
    assert type(ours).__name__ == type(theirs).__name__, (theirs, ours)
    assert str(ours).split("\n")[0] == str(theirs).split("\n")[0], (theirs, ours)
