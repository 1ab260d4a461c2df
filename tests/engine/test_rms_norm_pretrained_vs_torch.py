"""nn.RMSNorm / F.rms_norm and nn.Embedding.from_pretrained against torch 2.13: values (bit for bit), the nodes,
gradients, reprs, and a pretrained table shared with the tensor it came from."""
from __future__ import annotations

import numpy as np
import pytest

import engine as fg
from engine.gradcheck import gradcheck

torch = pytest.importorskip("torch")
rng = np.random.default_rng(7)


def _chain(t):
    """grad_fn names from the output back through first inputs."""
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


@pytest.mark.parametrize("shape, normalized, kwargs", [((4, 8), 8, {}), ((2, 3, 5), (3, 5), {"eps": 1e-5}),
                                                       ((6, 16), [16], {"elementwise_affine": False})])
def test_rms_norm_is_torchs(shape, normalized, kwargs):
    x = rng.normal(size=shape).astype(np.float32)
    outs = []
    for lib in (torch, fg):
        m = lib.nn.RMSNorm(normalized, **kwargs)
        if m.weight is not None:
            with lib.no_grad():
                m.weight.copy_(lib.tensor(np.linspace(-1.5, 2.0, m.weight.numel(), dtype=np.float32).reshape(
                    tuple(m.weight.shape))))
        t = lib.tensor(x, requires_grad=True)
        y = m(t)
        (y * lib.arange(y.numel(), dtype=lib.float32).reshape(y.shape)).sum().backward()
        outs.append((repr(m), y.detach().numpy(), t.grad.numpy(), None if m.weight is None else m.weight.grad.numpy(),
                     _chain(y)))
    (rt, yt, gt, wt, ct), (rf, yf, gf, wf, cf) = outs
    assert rf == rt and cf == ct
    np.testing.assert_array_equal(yf, yt)
    np.testing.assert_allclose(gf, gt, rtol=1e-5, atol=1e-6)
    if wt is not None:
        np.testing.assert_allclose(wf, wt, rtol=1e-5, atol=1e-6)


def test_rms_norm_gradient_matches_finite_differences():
    x = fg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    w = fg.tensor(rng.normal(size=4), requires_grad=True)
    assert gradcheck(lambda a, b: fg.nn.functional.rms_norm(a, [4], b, eps=1e-6), (x, w))


def test_rms_norm_refuses_a_shape_as_torch_does():
    errors = []
    for lib in (torch, fg):
        with pytest.raises(RuntimeError) as caught:
            lib.nn.functional.rms_norm(lib.ones(2, 3), [4])
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_from_pretrained_shares_the_table_and_freezes_it():
    for lib in (torch, fg):
        table = lib.eye(3)
        emb = lib.nn.Embedding.from_pretrained(table, padding_idx=1)
        emb.weight.data[0, 0] = 5.0
        assert table[0, 0].item() == 5.0 and not emb.weight.requires_grad
        assert repr(emb) == "Embedding(3, 3, padding_idx=1)"
        loose = lib.nn.Embedding.from_pretrained(lib.eye(2), freeze=False)
        loose(lib.tensor([1, 1])).sum().backward()
        assert loose.weight.grad.tolist() == [[0.0, 0.0], [2.0, 2.0]]
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.eye(3), mode="sum")
        assert bag(lib.tensor([[0, 2]])).tolist() == [[1.0, 0.0, 1.0]]
