"""nn.ReflectionPad1d/2d, ReplicationPad1d/2d, ZeroPad1d/2d, ConstantPad1d/2d against PyTorch 2.13: values, input
gradients, grad_fn names and printouts."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)

CASES = [
    ("ReflectionPad1d", (2,), (2, 3, 5)),
    ("ReflectionPad1d", ((1, 3),), (3, 6)),
    ("ReflectionPad2d", ((1, 0, 2, 1),), (1, 2, 4, 5)),
    ("ReplicationPad1d", (3,), (2, 3, 4)),
    ("ReplicationPad2d", (1,), (1, 2, 3, 3)),
    ("ZeroPad1d", ((1, 2),), (2, 3, 4)),
    ("ZeroPad2d", (1,), (1, 2, 3, 3)),
    ("ConstantPad1d", (2, 3.5), (2, 3, 4)),
    ("ConstantPad2d", ((1, 0, 0, 2), -1), (2, 3, 3)),
]


@pytest.mark.parametrize("name, args, shape", CASES)
def test_padding_module_matches_torch(name, args, shape):
    x = rng.normal(size=shape).astype(np.float32)
    tm, em = getattr(torch.nn, name)(*args), getattr(engine.nn, name)(*args)
    assert repr(em) == repr(tm)
    tx, ex = torch.tensor(x, requires_grad=True), engine.tensor(x, requires_grad=True)
    ty, ey = tm(tx), em(ex)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    assert ey.grad_fn.name() == ty.grad_fn.name()
    w = rng.normal(size=ty.shape).astype(np.float32)
    (ty * torch.tensor(w)).sum().backward()
    (ey * engine.tensor(w)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
