"""Op table rows: determinants and inverses, cross products, pairwise distances (cdist), cummax / cummin and
fill_diagonal_'s write, each VJP beside its forward (issue 21 §3). The checks and the torch functions that call
them are in engine/linalg_more.py.

The VJPs also run on Graphed values (create_graph): they are written with numpy calls Graphed maps onto ops
(roll, matmul, swapaxes, where), and the inverse a determinant's gradient needs is the `linalg_inv` op then.
"""
from __future__ import annotations

import math

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op
from .graphed import raw as _raw
from .op_table import DIM, Params, defop
from .ops_shape import _along, _scatter


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError, named as PyTorch's class is (torch._C._LinAlgError): a singular matrix for inv."""


_LinAlgError.__module__ = "torch._C"  # `type(e)` prints <class 'torch._C._LinAlgError'> as under torch
LinAlgError = _LinAlgError


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _lu(m):
    """m's LU factorisation with partial pivoting as LAPACK's unblocked getrf runs it: (rows, L, U, k) with k the
    1-based index of the first zero on U's diagonal (getrf's `info`, which PyTorch reports), 0 when there is none."""
    u = np.array(m)
    n = u.shape[0]
    rows, lower = np.arange(n), np.eye(n, dtype=u.dtype)
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return rows, lower, u, k + 1
        u[[k, p]], rows[[k, p]], lower[[k, p], :k] = u[[p, k]], rows[[p, k]], lower[[p, k], :k]
        lower[k + 1:, k] = u[k + 1:, k] * (1 / u[k, k])  # getf2 scales by the reciprocal
        u[k + 1:, k + 1:] -= np.outer(lower[k + 1:, k], u[k, k + 1:])
        u[k + 1:, k] = 0
    return rows, lower, u, 0


def _inv_by_lu(a):
    """Inverses one by one from their LU factors, for a batch numpy's LAPACK calls singular: PyTorch's LAPACK may
    find no zero pivot where numpy's did (rounding); a zero pivot is PyTorch's singular-matrix error."""
    flat = a.reshape(-1, *a.shape[-2:])
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        rows, lower, upper, k = _lu(m)
        if k:
            where = f"(Batch element {i}): " if a.ndim > 2 else ""
            raise _LinAlgError(f"linalg.inv: {where}The diagonal element {k} is zero, the inversion could not be "
                               "completed because the input matrix is singular.")
        # triangular factors: numpy's solve eliminates nothing in them, so no pivot of theirs is zero
        out[i] = np.linalg.solve(upper, np.linalg.solve(lower, np.eye(len(m), dtype=m.dtype)[rows]))
    return out.reshape(a.shape)


def inv(a):
    if a.shape[-1] == 0:
        return np.empty(a.shape, a.dtype)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        return _inv_by_lu(a)


def _inv_vjp(g, ans, a):
    """d(A^-1) = -A^-1 dA A^-1, so the gradient is -A^-T g A^-T (read from the saved result)."""
    return -(_mT(ans) @ g @ _mT(ans))


def det(a):
    if a.shape[-1] == 0:
        return np.ones(a.shape[:-2], a.dtype)
    return np.asarray(np.linalg.det(a), dtype=a.dtype)


def _det_vjp(g, ans, a):
    """Jacobi's formula: g·det(A)·A^-T. NOTE: PyTorch's gradient is zero at a matrix whose determinant is exactly
    zero (its LU solve of a zero right-hand side), not the cofactor matrix; the same here."""
    scale = np.expand_dims(g * ans, (-2, -1))
    if type(a) is Graphed:
        return scale * _mT(_graphed_op("linalg_inv", (a,)))
    singular = ans == 0
    inverse = np.zeros(a.shape, a.dtype)
    if a.shape[-1]:
        inverse[~singular] = inv(a[~singular])
    return scale * _mT(inverse)


def _det_sizes(arrays, params):
    return (np.shape(arrays[0])[:-2],)


def _same_sizes(arrays, params):
    return (np.shape(arrays[0]),)


def _cubic_flops(arrays, params):
    """An LU factorisation: about n³ multiply-adds per matrix."""
    shape = np.shape(arrays[0])
    return math.prod(map(int, shape[:-2])) * int(shape[-1]) ** 3


def cross(a, b, dim):
    """The cross product along `dim` (negative: counted from the broadcast shape's end), as PyTorch computes each
    component: a_{i+1} b_{i+2} - a_{i+2} b_{i+1}."""
    return np.roll(a, -1, dim) * np.roll(b, -2, dim) - np.roll(a, -2, dim) * np.roll(b, -1, dim)


def _cross_grad_a(g, ans, a, b, dim):
    return cross(np.broadcast_to(b, g.shape), g, dim)  # d(a × b)/da: v ↦ b × v


def _cross_grad_b(g, ans, a, b, dim):
    return cross(g, np.broadcast_to(a, g.shape), dim)


# ---------------------------------------------------------------- cdist: ‖x1_i - x2_j‖_p for every pair
def _differences(x1, x2):
    """(..., P, R, M): every row of x1 minus every row of x2."""
    return np.expand_dims(x1, -2) - np.expand_dims(x2, -3)


def cdist(x1, x2, p):
    diff = np.abs(_differences(x1, x2))
    if p == 0:
        return (diff != 0).sum(-1).astype(x1.dtype)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return np.sqrt((diff * diff).sum(-1))
    if p == math.inf:
        return diff.max(-1) if diff.shape[-1] else np.zeros(diff.shape[:-1], x1.dtype)
    return (diff ** p).sum(-1) ** (1.0 / p)


def _cdist_grad_x1(g, ans, x1, x2, p):
    """PyTorch's _cdist_backward: the gradient of each distance by the differences it is made of, summed over the
    rows of x2. NOTE: at a zero distance (and, for p < 1, at a zero difference) the gradient is 0, as PyTorch's."""
    diff = _differences(x1, x2)
    g, dist = np.expand_dims(g, -1), np.expand_dims(ans, -1)
    if p == 0:
        return np.zeros(np.shape(ans)[:-1] + np.shape(x1)[-1:], _raw(x1).dtype)
    if p == 1:
        local = np.sign(diff)
    elif p == math.inf:
        local = np.sign(diff) * (np.abs(diff) == dist)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 2:
                local = diff / dist
            else:
                local = np.sign(diff) * np.abs(diff) ** (p - 1) / dist ** (p - 1)
        zero = (_raw(dist) == 0) | ((_raw(diff) == 0) if p < 1 else False)
        local = np.where(zero, 0, local)
    return (g * local).sum(-2)


def _cdist_grad_x2(g, ans, x1, x2, p):
    return _cdist_grad_x1(_mT(g), _mT(ans), x2, x1, p)


def euclidean_dist(x1, x2):
    """PyTorch's _euclidean_dist (cdist's p = 2 for more than 25 rows): ‖x1‖² - 2 x1·x2 + ‖x2‖² as one matrix
    product of padded rows. NOTE: cancellation makes it less exact than the differences' norm, as in PyTorch."""
    x1_norm = (x1 * x1).sum(-1, keepdims=True)
    x2_norm = (x2 * x2).sum(-1, keepdims=True)
    left = np.concatenate((x1 * -2, x1_norm, np.ones_like(x1_norm)), -1)
    right = np.concatenate((x2, np.ones_like(x2_norm), x2_norm), -1)
    return np.sqrt(np.maximum(left @ _mT(right), 0))


def _euclid_ratio(g, ans):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(_raw(ans) == 0, 0, g / ans)


def _euclid_grad_x1(g, ans, x1, x2):
    ratio = _euclid_ratio(g, ans)
    return x1 * ratio.sum(-1, keepdims=True) - ratio @ x2


def _euclid_grad_x2(g, ans, x1, x2):
    ratio = _euclid_ratio(g, ans)
    return x2 * np.expand_dims(ratio.sum(-2), -1) - _mT(ratio) @ x1


def _pairs_shape(arrays):
    s1, s2 = np.shape(arrays[0]), np.shape(arrays[1])
    return tuple(np.broadcast_shapes(s1[:-2], s2[:-2])) + (s1[-2], s2[-2])


def _cdist_sizes(arrays, params):
    """The distances and the differences they are made of (P·R·M a batch)."""
    pairs = _pairs_shape(arrays)
    return (pairs, pairs + (np.shape(arrays[0])[-1],))


def _cdist_flops(arrays, params):
    return math.prod(map(int, _cdist_sizes(arrays, params)[1]))


def _euclid_sizes(arrays, params):
    return (_pairs_shape(arrays),)


def _euclid_flops(arrays, params):
    return math.prod(map(int, _pairs_shape(arrays))) * (int(np.shape(arrays[0])[-1]) + 2)


# ---------------------------------------------------------------- cummax / cummin: running extremes and where
def cumulative_extreme_indices(a, dim, larger):
    """The index of the running extreme along dim: a later equal value takes over and NaN wins and stays (PyTorch's
    `x >= best || isnan(x)`), so the index is the last position that met the running extreme."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    accumulate = np.maximum.accumulate if larger else np.minimum.accumulate
    running = accumulate(a, axis=dim)  # NOTE: np.maximum / np.minimum propagate NaN, as PyTorch's comparison does
    met = a == running
    if a.dtype.kind == "f":
        met |= np.isnan(a)
    positions = np.arange(a.shape[dim], dtype=np.int64).reshape([-1 if i == dim else 1 for i in range(a.ndim)])
    return np.maximum.accumulate(np.where(met, positions, 0), axis=dim)


def cumulative_extreme(a, dim, larger):
    if a.ndim == 0:
        return a.copy()
    return np.take_along_axis(a, cumulative_extreme_indices(a, dim, larger), axis=dim)


def _cumulative_extreme_vjp(g, ans, a, dim, larger):
    """Each running extreme's gradient goes to the element it was taken from (summed: PyTorch's scatter_add)."""
    a = _raw(a)
    if a.ndim == 0:
        return g
    return _scatter(a.shape, g.dtype, _along(cumulative_extreme_indices(a, dim, larger), dim), g, True, "index")


def fill_positions(shape, wrap):
    """fill_diagonal_'s positions: (i, i, …) for a cube; for a tall matrix with wrap, the diagonal starts again
    every n + 1 rows (numpy's and PyTorch's flat stride n + 1)."""
    if len(shape) > 2 or not wrap or shape[0] <= shape[1]:
        n = min(shape)
        return (np.arange(n),) * len(shape)
    rows, cols = shape
    flat = np.arange(0, rows * cols, cols + 1)
    return (flat // cols, flat % cols)


defop("linalg_det", "LinalgDetBackward0", "det", det, (_det_vjp, r"\det(A)\,A^{-\top}"), needs=("ar",),
      sizes=_det_sizes, flops=_cubic_flops)


defop("linalg_inv", "LinalgInvExBackward0", "inv", inv, (_inv_vjp, r"-A^{-\top}\,\cdot\,A^{-\top}"), needs=("r",),
      sizes=_same_sizes, flops=_cubic_flops)


defop("linalg_cross", "LinalgCrossBackward0", "cross", cross, (_cross_grad_a, r"b\times\cdot"),
      (_cross_grad_b, r"\cdot\times a"), needs=("b", "a"), broadcasts=True, params=DIM)


_CDIST = Params("keywords", ("p",), defaults=(("p", 2.0),))


defop("cdist", "CdistBackward0", "cdist", cdist, (_cdist_grad_x1, r"\frac{\partial\lVert a_i-b_j\rVert_p}{\partial a_i}"),
      (_cdist_grad_x2, r"\frac{\partial\lVert a_i-b_j\rVert_p}{\partial b_j}"), needs=("abr", "abr"), params=_CDIST,
      sizes=_cdist_sizes, flops=_cdist_flops)


defop("euclidean_dist", "EuclideanDistBackward0", "cdist", euclidean_dist,
      (_euclid_grad_x1, r"\frac{a_i-b_j}{\lVert a_i-b_j\rVert}"), (_euclid_grad_x2, r"\frac{b_j-a_i}{\lVert a_i-b_j\rVert}"),
      needs=("abr", "abr"), sizes=_euclid_sizes, flops=_euclid_flops)


_RUNNING = Params("call", ("dim",))
for _name, _grad_fn, _larger in (("cummax", "CummaxBackward0", True), ("cummin", "CumminBackward0", False)):
    defop(_name, _grad_fn, _name, lambda a, dim, larger=_larger: cumulative_extreme(a, dim, larger),
          (lambda g, ans, a, dim, larger=_larger: _cumulative_extreme_vjp(g, ans, a, dim, larger),
           r"\mathbb{1}[i=\arg" + (r"\max" if _larger else r"\min") + r"_{k\le j}a_k]"), needs=("a",), params=_RUNNING)
    defop(_name + "_indices", None, _name, lambda a, dim, larger=_larger: cumulative_extreme_indices(a, dim, larger),
          saves=False, params=_RUNNING)
