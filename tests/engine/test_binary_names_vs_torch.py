"""torch.hypot / xlogy / heaviside (issue 21 §3): values, dtypes, errors and gradients against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

A = [3.0, 0.0, -1.0, 2.5, 0.0]
B = [4.0, 0.0, 2.0, float("nan"), 7.0]


def _both(fn):
    """fn(lib) under the engine and torch: (value or error type and message) for each."""
    out = []
    for lib in (engine, torch):
        try:
            r = fn(lib)
            if r is None:
                out.append(("None", None))
                continue
            out.append((str(r.dtype), np.asarray(r.detach().numpy() if hasattr(r, "detach") else r).tolist()))
        except Exception as e:  # noqa: BLE001 — the error itself is compared
            out.append((type(e).__name__, str(e)))
    return out


CASES = {
    "hypot": lambda t: t.hypot(t.tensor(A), t.tensor(B)),
    "hypot_method": lambda t: t.tensor(A).hypot(t.tensor(B)),
    "hypot_int_float": lambda t: t.hypot(t.tensor([3, 0, 1]), t.tensor(A[:3])),
    "hypot_f64": lambda t: t.hypot(t.tensor(A), t.tensor(B, dtype=t.float64)),
    "hypot_long": lambda t: t.hypot(t.tensor([3, 4]), t.tensor([3, 4])),
    "hypot_number": lambda t: t.hypot(t.tensor(A), 2.0),
    "hypot_shapes": lambda t: t.hypot(t.ones(2, 3), t.ones(4)),
    "xlogy": lambda t: t.xlogy(t.tensor(A), t.tensor(B)),
    "xlogy_method": lambda t: t.tensor(A).xlogy(t.tensor(B)),
    "xlogy_ints": lambda t: t.xlogy(t.tensor([3, 0, 1]), t.tensor([3, 0, 0])),
    "xlogy_number_other": lambda t: t.xlogy(t.tensor(A), 2.0),
    "xlogy_number_self": lambda t: t.xlogy(2.0, t.tensor(A)),
    "xlogy_f64": lambda t: t.xlogy(t.tensor(A, dtype=t.float64), t.tensor(B)),
    "heaviside": lambda t: t.heaviside(t.tensor(A), t.tensor(B)),
    "heaviside_long": lambda t: t.heaviside(t.tensor([3, 0, -1]), t.tensor([7, 7, 7])),
    "heaviside_broadcast": lambda t: t.heaviside(t.tensor(A), t.tensor([0.5])),
    "heaviside_dtypes": lambda t: t.heaviside(t.tensor(A), t.tensor([1, 2, 3, 4, 5])),
    "heaviside_number": lambda t: t.heaviside(t.tensor(A), 1.0),
    "heaviside_grad": lambda t: t.heaviside(t.tensor(A, requires_grad=True), t.tensor(B)).detach(),
    "heaviside_backward": lambda t: t.heaviside(t.tensor(A, requires_grad=True), t.tensor(B)).sum().backward(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_as_torch(case):
    mine, theirs = _both(CASES[case])
    assert mine[0] == theirs[0]
    if mine[0].startswith("torch."):
        np.testing.assert_array_equal(np.array(mine[1]), np.array(theirs[1]))
    else:
        assert mine[1] == theirs[1]


@pytest.mark.parametrize("name", ["hypot", "xlogy"])
def test_gradients_match_torch_and_finite_differences(name):
    x0 = np.array([0.0, 1.0, 2.0, -0.7], dtype=np.float64)
    y0 = np.array([0.0, 0.5, 3.0, 1.3], dtype=np.float64)
    grads = []
    for lib in (engine, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.tensor(y0, requires_grad=True)
        getattr(lib, name)(x, y).sum().backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12, equal_nan=True)
    ok = slice(1, None)  # away from the origin, where both derivatives are defined
    xs, ys = engine.tensor(x0[ok], requires_grad=True), engine.tensor(y0[ok], requires_grad=True)
    assert engine.autograd.gradcheck(getattr(engine, name), (xs, ys))


@pytest.mark.parametrize("name", ["hypot", "xlogy", "heaviside"])
def test_grad_fn_names_are_torchs(name):
    x = [1.0, 2.0]
    names = [type(getattr(lib, name)(lib.tensor(x, requires_grad=True), lib.tensor(x)).grad_fn).__name__
             for lib in (engine, torch)]
    assert names[0] == names[1]


@pytest.mark.parametrize("bad", [None, "abc", [1.0], object()])
def test_hostile_wrong_types_are_refused_in_torchs_words(bad):
    for name in ("hypot", "heaviside"):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument"):
            getattr(engine, name)(engine.ones(2), bad)
    if bad is not None and not isinstance(bad, list):
        with pytest.raises(TypeError, match="xlogy"):
            engine.xlogy(engine.ones(2), bad)
