"""torch.quantile / nanquantile (engine/tensor_quantile.py) against PyTorch 2.13, bit for bit: every interpolation mode,
scalar and 1-D q, dim / keepdim, rows with NaN; the gradient through sort, gather and lerp; PyTorch's errors."""
import numpy as np
import pytest

import engine as E
from engine.gradcheck import gradcheck

torch = pytest.importorskip("torch")

CASES = [(0.3, None, False), (0.5, 0, False), ([0.1, 0.5, 0.9], 1, True), (0.25, -1, False), ([0.0, 1.0], None, True),
         (0.7, 1, True)]


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize(("q", "dim", "keepdim"), CASES)
def test_values_are_pytorchs(fn, interpolation, q, dim, keepdim):
    torch.manual_seed(0)
    x = torch.randn(4, 5)
    x[1, 2] = float("nan")
    q_t = torch.tensor(q) if isinstance(q, list) else q
    q_e = E.tensor(q) if isinstance(q, list) else q
    expected = getattr(torch, fn)(x, q_t, dim=dim, keepdim=keepdim, interpolation=interpolation)
    got = getattr(E.tensor(x.numpy()), fn)(q_e, dim, keepdim, interpolation=interpolation)
    assert tuple(got.shape) == tuple(expected.shape)
    assert np.array_equal(got.numpy(), expected.numpy(), equal_nan=True)


def test_gradients_are_pytorchs_and_finite_differences():
    torch.manual_seed(1)
    x = torch.randn(6, requires_grad=True)
    x_e = E.tensor(x.detach().numpy(), requires_grad=True)
    torch.quantile(x, torch.tensor([0.3, 0.8])).sum().backward()
    E.quantile(x_e, E.tensor([0.3, 0.8])).sum().backward()
    assert np.array_equal(x_e.grad.numpy(), x.grad.numpy())
    y = E.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: E.quantile(t, E.tensor([0.2, 0.7], dtype=E.float64), dim=1), (y,))


@pytest.mark.parametrize("call, words", [
    (lambda T: T.quantile(T.tensor([1, 2]), 0.5), "float or double"),
    (lambda T: T.quantile(T.tensor([1.0]), 1.5), "in the range [0, 1]"),
    (lambda T: T.quantile(T.tensor([1.0]), T.tensor([0.5, 2.0])), "in the range [0, 1]"),
    (lambda T: T.quantile(T.tensor([1.0]), 0.5, interpolation="cubic"), "interpolation must be one of"),
    (lambda T: T.quantile(T.tensor([]), 0.5), "non-empty"),
    (lambda T: T.quantile(T.tensor([1.0]), T.tensor([[0.5]])), "scalar or 1D"),
    (lambda T: T.quantile(T.tensor([1.0]), T.tensor([0.5], dtype=T.float64)), "same dtype"),
])
def test_errors_are_pytorchs(call, words):
    with pytest.raises(RuntimeError, match=words.replace("[", r"\[").replace("]", r"\]")):
        call(torch)
    with pytest.raises(RuntimeError, match=words.replace("[", r"\[").replace("]", r"\]")):
        call(E)
