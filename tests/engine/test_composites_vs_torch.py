"""engine/tensor_composites.py against torch 2.13: tensordot, inner, matrix_power, trapezoid, cartesian_prod,
combinations — values, dtypes, the node the graph ends in, gradients, and the errors' words."""
from __future__ import annotations

import numpy as np
import pytest

import engine as fg

torch = pytest.importorskip("torch")
rng = np.random.default_rng(5)


def R(*shape):  # noqa: N802
    return rng.normal(size=shape).astype(np.float32)


_SQUARE = (R(2, 3, 3) + 3 * np.eye(3)).astype(np.float32)
# (name, fn(lib, *tensors), arrays, exact: bit for bit, else to a few ulps)
CASES = [
    ("tensordot_dims", lambda L, a, b: L.tensordot(a, b, dims=([1, 2], [1, 0])), [R(2, 3, 4), R(4, 3, 5)], True),
    ("tensordot_int", lambda L, a, b: L.tensordot(a, b, dims=1), [R(3, 4), R(4, 2)], True),
    ("tensordot_zero", lambda L, a, b: L.tensordot(a, b, dims=0), [R(2), R(3)], True),
    ("inner_matrix", lambda L, a, b: L.inner(a, b), [R(2, 5), R(3, 5)], True),
    # (a 1 x n by n x 1 product: MKL takes another order than the engine's, a last bit can differ)
    ("inner_vector", lambda L, a, b: L.inner(a, b), [R(5), R(5)], False),
    ("inner_scalar", lambda L, a, b: L.inner(a, b), [np.float32(2.5), R(3)], True),
    ("matrix_power", lambda L, a: L.matrix_power(a, 5), [R(3, 3)], True),
    ("matrix_power_1", lambda L, a: L.matrix_power(a, 1), [R(3, 3)], True),
    ("matrix_power_negative", lambda L, a: L.matrix_power(a, -2), [_SQUARE], False),
    ("trapezoid", lambda L, y: L.trapezoid(y), [R(3, 4)], True),
    ("trapezoid_dx", lambda L, y: L.trapezoid(y, dx=0.5, dim=0), [R(3, 4)], True),
    ("trapezoid_x", lambda L, y, x: L.trapezoid(y, x), [R(3, 4), np.array([0.0, 1.0, 3.0, 4.5], np.float32)], True),
    ("trapezoid_x_nd", lambda L, y, x: L.trapezoid(y, x, dim=0), [R(3, 4), R(3, 4)], True),
    ("cartesian_prod", lambda L, a, b: L.cartesian_prod(a, b), [R(3), R(2)], True),
    ("cartesian_prod_3", lambda L, a, b, c: L.cartesian_prod(a, b, c), [R(2), R(2), R(3)], True),
    ("combinations", lambda L, a: L.combinations(a, 3), [R(5)], True),
    ("combinations_replacement", lambda L, a: L.combinations(a, with_replacement=True), [R(4)], True),
]


def _run(lib, fn, arrays):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return out, [t.grad for t in ts]


@pytest.mark.parametrize("name, fn, arrays, exact", CASES, ids=[c[0] for c in CASES])
def test_values_nodes_and_gradients_are_torchs(name, fn, arrays, exact):
    (ot, gt), (of, gf) = _run(torch, fn, arrays), _run(fg, fn, arrays)
    assert tuple(of.shape) == tuple(ot.shape) and str(of.dtype) == str(ot.dtype)
    assert type(of.grad_fn).__name__ == type(ot.grad_fn).__name__
    check = np.testing.assert_array_equal if exact else (
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6))
    check(of.detach().numpy(), ot.detach().numpy())
    for a, b in zip(gf, gt):
        check(a.numpy(), b.numpy())


def test_integer_and_edge_cases_are_torchs():
    for call in ("L.trapezoid(L.arange(5))", "L.combinations(L.arange(3), r=0)", "L.combinations(L.arange(2), r=3)",
                 "L.cartesian_prod(L.arange(3))", "L.combinations(L.arange(4), r=2)", "L.trapezoid(L.ones(0, 3), dim=0)",
                 "L.tensordot(L.arange(6).reshape(2, 3), L.arange(6).reshape(3, 2), dims=1)",
                 "L.matrix_power(L.ones(2, 3, 3, requires_grad=True), 0)"):
        theirs, ours = (eval(call, {"L": lib}) for lib in (torch, fg))  # noqa: S307 — our own test expressions
        assert str(ours) == str(theirs), call


@pytest.mark.parametrize("call", [
    "L.tensordot(L.ones(2, 3), L.ones(4, 2), dims=([1], [0]))",
    "L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=-1)",
    "L.inner(L.ones(2, 3), L.ones(4, 2))",
    "L.matrix_power(L.ones(2, 3), 2)",
    "L.combinations(L.ones(2, 2))",
    "L.cartesian_prod(L.ones(2, 2))",
])
def test_errors_are_torchs(call):
    errors = []
    for lib in (torch, fg):
        with pytest.raises(Exception) as caught:  # noqa: PT011 — the error itself is what is compared
            eval(call, {"L": lib})  # noqa: S307
        errors.append(caught.value)
    assert type(errors[1]).__name__ == type(errors[0]).__name__ and str(errors[1]) == str(errors[0]), errors
