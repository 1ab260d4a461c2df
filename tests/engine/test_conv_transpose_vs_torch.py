"""nn.ConvTranspose1d / 2d and F.conv_transpose1d / 2d (engine/nn/conv.py) against PyTorch 2.13: parameters shaped,
initialised and printed as torch's; outputs and gradients to float32 rounding (the composition sums in another order
than torch's kernel) over stride, padding, output_padding, dilation, groups and no bias; finite differences."""
import numpy as np
import pytest

import engine as E
from engine.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

CASES = [dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1), dict(stride=(2, 1), padding=(1, 0), dilation=2),
         dict(groups=2, stride=3, output_padding=2), dict(bias=False, kernel_size=4, stride=2, padding=1)]


@pytest.mark.parametrize("options", CASES)
def test_a_2d_layer_is_torchs(options):
    kw = dict(options)
    kernel, bias = kw.pop("kernel_size", 3), kw.pop("bias", True)
    E.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = E.nn.ConvTranspose2d(4, 6, kernel, bias=bias, **kw), torch.nn.ConvTranspose2d(4, 6, kernel, bias=bias, **kw)
    assert repr(ours) == repr(theirs)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    x = torch.randn(2, 4, 5, 6, requires_grad=True)
    x_e = E.tensor(x.detach().numpy(), requires_grad=True)
    out_t, out_e = theirs(x), ours(x_e)
    assert tuple(out_e.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = torch.randn(*out_t.shape)
    (out_t * g).sum().backward()
    (out_e * E.tensor(g.numpy())).sum().backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-4)


def test_1d_and_unbatched_inputs_are_torchs():
    E.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = E.nn.ConvTranspose1d(3, 2, 3, stride=2), torch.nn.ConvTranspose1d(3, 2, 3, stride=2)
    assert repr(ours) == repr(theirs)
    for x in (torch.randn(4, 3, 7), torch.randn(3, 7)):
        np.testing.assert_allclose(ours(E.tensor(x.numpy())).detach().numpy(), theirs(x).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    w, x = torch.randn(4, 2, 3, 3), torch.randn(1, 4, 3, 3)
    np.testing.assert_allclose(E.nn.functional.conv_transpose2d(E.tensor(x.numpy()), E.tensor(w.numpy()), stride=2).numpy(),
                               torch.nn.functional.conv_transpose2d(x, w, stride=2).numpy(), rtol=1e-5, atol=1e-6)


def test_gradients_match_finite_differences_twice():
    rng = np.random.default_rng(0)
    x = E.tensor(rng.standard_normal((1, 2, 3, 3)), requires_grad=True)
    w = E.tensor(rng.standard_normal((2, 2, 2, 2)), requires_grad=True)
    b = E.tensor(rng.standard_normal(4), requires_grad=True)

    def f(xx, ww, bb):
        return E.nn.functional.conv_transpose2d(xx, ww, bb, stride=2, padding=1, output_padding=1, groups=2)
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))


def test_errors():
    w = E.ones(4, 2, 3, 3)
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        E.nn.functional.conv_transpose2d(E.ones(1, 4, 3, 3), w, stride=1, output_padding=1)
    with pytest.raises(RuntimeError, match="channels"):
        E.nn.functional.conv_transpose2d(E.ones(1, 3, 3, 3), w)
    with pytest.raises(NotImplementedError):
        E.nn.ConvTranspose2d(4, 2, 3)(E.ones(1, 4, 3, 3), output_size=(7, 7))
