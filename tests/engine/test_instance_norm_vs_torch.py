"""nn.InstanceNorm1d / 2d and F.instance_norm against torch 2.13: reprs, outputs (bit for bit), running statistics,
eval mode, unbatched inputs, the node the graph ends in, gradients, and the errors' words."""
from __future__ import annotations

import numpy as np
import pytest

import engine as E

torch = pytest.importorskip("torch")
rng = np.random.default_rng(11)


@pytest.mark.parametrize("cls, shape, features, kwargs", [
    ("InstanceNorm2d", (2, 3, 4, 5), 3, {}),
    ("InstanceNorm2d", (2, 3, 4, 5), 3, {"affine": True, "track_running_stats": True}),
    ("InstanceNorm1d", (2, 4, 6), 4, {"affine": True, "momentum": None}),
    ("InstanceNorm2d", (3, 4, 5), 3, {}),
    ("InstanceNorm1d", (4, 6), 4, {"track_running_stats": True, "eps": 1e-3}),
])
def test_instance_norm_is_torchs(cls, shape, features, kwargs):
    x = rng.normal(size=shape).astype(np.float32)
    seen = []
    for lib in (torch, E):
        m = getattr(lib.nn, cls)(features, **kwargs)
        if m.weight is not None:
            with lib.no_grad():
                m.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, features, dtype=np.float32)))
                m.bias.copy_(lib.tensor(np.linspace(-1.0, 1.0, features, dtype=np.float32)))
        t = lib.tensor(x, requires_grad=True)
        y = m(t)
        (y * lib.arange(y.numel(), dtype=lib.float32).reshape(y.shape)).sum().backward()
        stats = [b.numpy().copy() for _, b in m.named_buffers()]
        m.eval()
        seen.append((repr(m), type(y.grad_fn).__name__, y.detach().numpy(), t.grad.numpy(), stats,
                     m(t).detach().numpy()))
    (r1, f1, y1, g1, s1, e1), (r2, f2, y2, g2, s2, e2) = seen
    assert r2 == r1 and f2 == f1
    np.testing.assert_array_equal(y2, y1)
    np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=2e-5)
    assert len(s2) == len(s1) and all(np.array_equal(a, b) for a, b in zip(s2, s1))
    np.testing.assert_array_equal(e2, e1)


@pytest.mark.parametrize("call", [
    "L.nn.InstanceNorm2d(3)(L.ones(2, 3, 1, 1))",
    "L.nn.InstanceNorm2d(3)(L.ones(2, 3))",
    "L.nn.InstanceNorm2d(3, affine=True)(L.ones(2, 4, 3, 3))",
    "L.nn.InstanceNorm1d(3)(L.ones(2, 3, 4, 5))",
])
def test_errors_are_torchs(call):
    errors = []
    for lib in (torch, E):
        with pytest.raises(Exception) as caught:  # noqa: PT011 — the error itself is what is compared
            eval(call, {"L": lib})  # noqa: S307 — our own test expressions
        errors.append(caught.value)
    assert type(errors[1]).__name__ == type(errors[0]).__name__ and str(errors[1]) == str(errors[0]), errors
