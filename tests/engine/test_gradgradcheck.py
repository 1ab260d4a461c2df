"""gradgradcheck (float64) over every entry of the op table: the first-derivative VJPs run as recorded ops under
create_graph=True, and their derivatives must match finite differences of the plain (numpy) first derivative.

As torch.autograd.gradgradcheck: the checked function is s(x, w) = sum_i <v_i, d<w, op(x)>/dx_i> with random
weights w (the incoming gradient, itself a leaf, so the VJPs' dependence on it is checked too) and random v_i;
ds/dx and ds/dw from the backward graph are compared with central differences of s, where s is computed by the
ordinary backward pass (numpy rules, no graph). Same cases as tests/engine/test_gradcheck.py, so an op added
there is checked here with no extra line; ops whose derivative is piecewise constant must give zeros.
"""
import numpy as np
import pytest
from test_gradcheck import CASES, NO_DERIVATIVE, SYMMETRIC_INPUT, _flat_inputs, _run, _tensors

from engine import autograd
from engine.ops import OPS
from engine.tensor_core import Tensor

DIFFERENTIABLE = sorted(n for n, op in OPS.items() if op.grad_fn is not None and n not in NO_DERIVATIVE)
CASE_IDS = [(name, i) for name in DIFFERENTIABLE for i in range(len(CASES.get(name, [])))]


def test_every_differentiable_op_has_cases():
    missing = [n for n in DIFFERENTIABLE if n not in CASES]
    assert not missing, f"add gradcheck cases for: {missing}"


def _first_grads(op, tensors, params, weights, create_graph):
    out = _run(op, tensors, params)
    xs = _flat_inputs(tensors)
    return xs, autograd.grad((out * weights).sum(), xs, create_graph=create_graph, allow_unused=True)


def _s_plain(op, tensors, params, weights, vs):
    """s computed by the ordinary backward (numpy rules): the reference the graph's derivative must match."""
    _, grads = _first_grads(op, tensors, params, Tensor._wrap(weights._data), create_graph=False)
    return sum(float((g._data * v).sum()) for g, v in zip(grads, vs) if g is not None)


def _check_symmetric_directions(t, analytic, s_plain, eps, what):
    """Along E_ij + E_ji the derivative of s is a_ij + a_ji (a_ii on the diagonal)."""
    x = t._data
    n = x.shape[-1]
    expected = analytic._data + np.swapaxes(analytic._data, -1, -2) - analytic._data * np.eye(n)
    numeric = np.zeros(x.shape)
    for index in np.ndindex(*x.shape[:-2], n, n):
        *batch, i, j = index
        if j < i:
            continue
        orig = x.copy()
        values = []
        for sign in (1, -1):
            x[index] += sign * eps
            if i != j:
                x[(*batch, j, i)] += sign * eps
            values.append(s_plain())
            x[...] = orig
        numeric[index] = numeric[(*batch, j, i)] = (values[0] - values[1]) / (2 * eps)
    np.testing.assert_allclose(expected, numeric, rtol=1e-4, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("name,case", CASE_IDS, ids=[f"{n}-{i}" for n, i in CASE_IDS])
def test_gradgradcheck(name, case):
    op = OPS[name]
    inputs, params = CASES[name][case]
    tensors = _tensors(inputs)
    rng = np.random.default_rng(7)
    out_shape = np.shape(_run(op, tensors, params)._data)
    weights = Tensor._wrap(rng.normal(size=out_shape), requires_grad=True)
    xs, grads = _first_grads(op, tensors, params, weights, create_graph=True)
    _, plain = _first_grads(op, tensors, params, Tensor._wrap(weights._data), create_graph=False)
    for g, p in zip(grads, plain):  # the graphed rules compute the same first derivative as the numpy ones
        np.testing.assert_allclose(g._data, p._data, rtol=1e-10, atol=1e-12, err_msg=f"{name} first derivative")
    vs = [rng.normal(size=g.shape) for g in grads]
    s = sum((g * Tensor._wrap(v)).sum() for g, v in zip(grads, vs) if g.requires_grad)
    leaves = xs + [weights]
    if isinstance(s, Tensor):
        analytic = autograd.grad(s, leaves, allow_unused=True)
    else:  # no first derivative depends on x or w (never for a differentiable op: it is linear in w)
        analytic = [None] * len(leaves)
    eps = 1e-6
    for t, a in zip(leaves, analytic):
        if name in SYMMETRIC_INPUT and t is xs[0]:  # (a symmetric matrix's op reads one triangle: test_gradcheck)
            _check_symmetric_directions(t, a, lambda: _s_plain(op, tensors, params, weights, vs), eps,
                                        f"{name} case {case}")
            continue
        numeric = np.zeros(t._data.shape)
        flat = t._data.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + eps
            plus = _s_plain(op, tensors, params, weights, vs)
            flat[i] = orig - eps
            minus = _s_plain(op, tensors, params, weights, vs)
            flat[i] = orig
            numeric.reshape(-1)[i] = (plus - minus) / (2 * eps)
        got = np.zeros(t._data.shape) if a is None else a._data
        assert np.shape(got) == t._data.shape, f"{name} case {case}"
        np.testing.assert_allclose(got, numeric, rtol=1e-4, atol=1e-5, err_msg=f"{name} case {case}")
