"""grad_fn names of the transposes as PyTorch 2.13 gives them: t() TBackward0, transpose/mT/swapaxes
TransposeBackward0, .T PermuteBackward0 (also 0-d and 1-d), and the in-place t_() / transpose_() TBackward1 /
TransposeBackward1 (the tensor takes the new shape, its gradient flows back through it)."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

CASES = [
    ("t", (2, 3), lambda x: x.t()),
    ("t_1d", (3,), lambda x: x.t()),
    ("torch_t", (2, 3), None),
    ("transpose", (2, 3, 4), lambda x: x.transpose(0, 2)),
    ("mT", (2, 3, 4), lambda x: x.mT),
    ("swapaxes", (2, 3), lambda x: x.swapaxes(0, 1)),
    ("swapdims", (2, 3), lambda x: x.swapdims(1, 0)),
    ("T", (2, 3), lambda x: x.T),
    ("T_1d", (3,), lambda x: x.T),
    ("T_0d", (), lambda x: x.T),
    ("permute", (2, 3), lambda x: x.permute(1, 0)),
    ("t_", (2, 3), lambda x: (x * 1).t_()),
    ("transpose_", (2, 3, 4), lambda x: (x * 1).transpose_(2, 0)),
]


@pytest.mark.parametrize("name,shape,fn", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_name_shape_and_gradient(name, shape, fn):
    a = np.random.default_rng(0).normal(size=shape)
    results = []
    for lib in (torch, engine):
        x = lib.tensor(a, requires_grad=True)
        y = lib.t(x) if fn is None else fn(x)
        w = lib.tensor(np.arange(y.numel(), dtype=float).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        results.append((type(y.grad_fn).__name__, tuple(y.shape), x.grad.numpy()))
    (tn, ts, tg), (en, es, eg) = results
    assert (en, es) == (tn, ts)
    np.testing.assert_array_equal(eg, tg)


def test_inplace_transposes_without_grad_and_their_errors():
    for lib in (torch, engine):
        b = lib.zeros(2, 3)
        assert b.t_() is b and tuple(b.shape) == (3, 2)
        assert tuple(b.transpose_(0, 1).shape) == (2, 3)
    msgs = []
    for lib in (torch, engine):
        got = []
        for fn in (lambda L=lib: L.ones(2, 3, requires_grad=True).t_(), lambda L=lib: L.ones(2, 3, 4).t_()):
            try:
                fn()
            except RuntimeError as e:
                got.append(str(e))
        msgs.append(got)
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2
