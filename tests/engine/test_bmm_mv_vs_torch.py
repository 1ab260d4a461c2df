"""torch.bmm and torch.mv (functions and methods): values, gradients, grad_fn names and shape errors as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name, shapes", [("bmm", [(2, 3, 4), (2, 4, 5)]), ("mv", [(3, 4), (4,)])])
def test_values_gradients_and_names(name, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = [engine.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = getattr(engine, name)(*ours), getattr(torch, name)(*theirs)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    method = getattr(ours[0], name)(ours[1])  # the Tensor method is the same op
    assert type(method.grad_fn).__name__ == type(ty.grad_fn).__name__


@pytest.mark.parametrize("name, shapes", [
    ("bmm", [(2, 3, 4), (3, 4, 5)]), ("bmm", [(3, 4), (2, 4, 5)]), ("bmm", [(2, 3, 4), (4, 5)]),
    ("mv", [(3, 4), (5,)]), ("mv", [(3, 4), (4, 1)]),
])
def test_shape_errors_read_as_torchs(name, shapes):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(*[torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError) as ours:
        getattr(engine, name)(*[engine.ones(s) for s in shapes])
    assert str(ours.value) == str(theirs.value)
