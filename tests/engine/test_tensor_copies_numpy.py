"""torch.tensor(ndarray) copies, torch.as_tensor(ndarray) and torch.from_numpy share the memory when the dtype is kept,
as in PyTorch: a program that builds a tensor from its numpy data and then edits either side sees what PyTorch shows
(the engine used to share on torch.tensor, so `t += 1` changed the program's array)."""
import numpy as np
import pytest

import engine


def _story(mod):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(3, dtype=np.float32)
    c = np.arange(3)
    t, u, v, w, x = (mod.tensor(a), mod.as_tensor(a), mod.as_tensor(b, dtype=mod.float32),
                     mod.as_tensor(c, dtype=mod.float32), mod.from_numpy(b))
    a[0, 0], b[0], c[0] = 100, 7, 9  # the program edits its arrays ...
    t2 = mod.tensor(a)
    t2 += 1  # ... and a copy of one
    return [t[0, 0].item(), u[0, 0].item(), v[0].item(), w[0].item(), x[0].item(), float(a[0, 0]), str(t.dtype),
            str(u.dtype), str(w.dtype), mod.tensor(b, requires_grad=True).is_leaf]


def test_copies_and_shares_as_pytorch_does():
    torch = pytest.importorskip("torch")
    assert _story(engine) == _story(torch)


def test_a_tensor_made_from_an_array_is_its_own():
    a = np.ones(3, np.float32)
    t = engine.tensor(a)
    t += 1
    assert a.tolist() == [1.0, 1.0, 1.0] and t.tolist() == [2.0, 2.0, 2.0]
    s = engine.as_tensor(a)
    s += 1
    assert a.tolist() == [2.0, 2.0, 2.0]  # shared, as from_numpy's
