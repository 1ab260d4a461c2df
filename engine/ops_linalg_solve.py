"""Op-table rows for the torch.linalg functions courses use for least squares, PCA and Gaussian processes (issue 21,
names past §3): solve, lstsq, pinv, eigh, cholesky, slogdet and the full SVD's U. Each VJP is PyTorch's
(torch/csrc/autograd/FunctionsManual.cpp: linalg_solve_backward, linalg_lstsq_backward, pinv_backward,
linalg_eig_backward for Hermitian input, cholesky_backward, slogdet_backward, svd_backward)."""
from __future__ import annotations

import math

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op
from .linalg_ops import _mT, svd_backward
from .op_table import Params, defop
from .ops_linalg_more import _cubic_flops


def _svd_flops(arrays, params):
    """An SVD or least-squares solve of an m x n matrix: about max(m, n) * min(m, n)² multiply-adds per matrix."""
    shape = np.shape(arrays[0])
    m, n = int(shape[-2]), int(shape[-1])
    return math.prod(map(int, shape[:-2])) * max(m, n) * min(m, n) ** 2


def _as_matrix(b, vector):
    return np.expand_dims(b, -1) if vector else b


def _graphed(*xs):
    """Under create_graph the VJPs below run on Graphed values: each factorisation is then its recorded op."""
    return any(type(x) is Graphed for x in xs)


# ---------------------------------------------------------------- solve: A X = B (left), X A = B (right)
def _solve(a, b, vector, left=True):
    if _graphed(a, b):
        return _graphed_op("linalg_solve", (a, b), (vector, left))
    if not left:
        return _mT(np.linalg.solve(_mT(a), _mT(b)))
    return np.linalg.solve(a, _as_matrix(b, vector))[..., 0] if vector else np.linalg.solve(a, b)


def _solve_grad_b(g, ans, a, b, vector, left):
    return _solve(_mT(a), g, vector, left)  # left: A^-T g; right: g A^-T


def _solve_grad_a(g, ans, a, b, vector, left):
    gb = _as_matrix(_solve_grad_b(g, ans, a, b, vector, left), vector)
    x = _as_matrix(ans, vector)
    return -(gb @ _mT(x)) if left else -(_mT(x) @ gb)


_SOLVE = Params("keywords", ("vector", "left"))

defop("linalg_solve", "LinalgSolveExBackward0", "solve", _solve, (_solve_grad_a, r"-A^{-\top} g\,X^{\top}"),
      (_solve_grad_b, r"A^{-\top} g"), needs=("abr", "a"), params=_SOLVE,
      flops=lambda arrays, params: _cubic_flops(arrays[:1], params))


# ---------------------------------------------------------------- pinv and lstsq
def _pinv(a, rtol):
    """The pseudo-inverse by the SVD, singular values at most rtol * the largest treated as zero (PyTorch's)."""
    if _graphed(a):
        return _graphed_op("linalg_pinv", (a,), (rtol,))
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cutoff = rtol * s[..., :1]
    inv_s = np.where(s > cutoff, 1 / np.where(s > cutoff, s, 1), 0).astype(a.dtype)
    return (_mT(vh) * inv_s[..., None, :]) @ _mT(u)


def pinv_backward(g, pinv_a, a):
    """PyTorch's pinv_backward (real): the gradient through A⁺, in the smaller of its two forms."""
    m, n = a.shape[-2], a.shape[-1]
    pinv_h, g_h = _mT(pinv_a), _mT(g)
    if m <= n:
        k = g_h @ pinv_a
        k_pinv_h = k @ pinv_h
        return -_mT(pinv_a @ k) + k_pinv_h - (a @ pinv_a) @ k_pinv_h + (pinv_h @ pinv_a) @ (g_h - k @ a)
    k = pinv_a @ g_h
    pinv_h_k = pinv_h @ k
    return -_mT(k @ pinv_a) + (g_h - a @ k) @ pinv_a @ pinv_h + pinv_h_k - pinv_h_k @ pinv_a @ a


defop("linalg_pinv", "LinalgPinvBackward0", "pinv", _pinv, (lambda g, ans, a, rtol: pinv_backward(g, ans, a), r"\partial A^{+}"),
      needs=("ar",), params=Params("keywords", ("rtol",)), flops=_svd_flops)


def _lstsq(a, b, vector):
    """The least-squares solution X of A X ≈ B (minimum norm when A is rank-deficient), as LAPACK's gelsy finds it."""
    if _graphed(a, b):
        return _graphed_op("linalg_lstsq", (a, b), (vector,))
    x = np.linalg.lstsq(a, _as_matrix(b, vector), rcond=None)[0] if a.ndim == 2 else \
        _pinv(a, np.finfo(a.dtype).eps * max(a.shape[-2:])) @ _as_matrix(b, vector)
    return (x[..., 0] if vector else x).astype(a.dtype, copy=False)


def _lstsq_grad_a(g, ans, a, b, vector):
    pinv_a = _pinv(a, np.finfo(a.dtype).eps * max(a.shape[-2:]))
    return pinv_backward(_as_matrix(g, vector) @ _mT(_as_matrix(b, vector)), pinv_a, a)


def _lstsq_grad_b(g, ans, a, b, vector):
    pinv_a = _pinv(a, np.finfo(a.dtype).eps * max(a.shape[-2:]))
    out = _mT(pinv_a) @ _as_matrix(g, vector)
    return out[..., 0] if vector else out


defop("linalg_lstsq", "LinalgLstsqBackward0", "lstsq", _lstsq, (_lstsq_grad_a, r"\partial A^{+} B"),
      (_lstsq_grad_b, r"A^{+\top} g"), needs=("ab", "a"), params=Params("keywords", ("vector",)), flops=_svd_flops)


# ---------------------------------------------------------------- eigh: A = V diag(L) Vᵀ (symmetric A)
def _eigh(a, upper):
    if _graphed(a):
        return _graphed_op("linalg_eigh_values", (a,), (upper,)), _graphed_op("linalg_eigh_vectors", (a,), (upper,))
    return np.linalg.eigh(a, UPLO="U" if upper else "L")


def _eigh_backward(a, upper, g_l=None, g_v=None):
    """PyTorch's linalg_eig_backward for Hermitian input: V (skew(Vᵀ gV) / (L_j - L_i) + diag(gL)) Vᵀ."""
    lam, v = _eigh(a, upper)
    if g_v is None:
        return (v * np.expand_dims(g_l, -2)) @ _mT(v)
    n = a.shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    vhgv = _mT(v) @ g_v
    vhgv = 0.5 * (vhgv - _mT(vhgv))  # skew: a zero diagonal
    ret = vhgv / (np.expand_dims(lam, -2) - np.expand_dims(lam, -1) + eye)  # L_j - L_i, ones on the diagonal
    if g_l is not None:
        ret = ret + np.expand_dims(g_l, -2) * eye
    return v @ ret @ _mT(v)


_UPLO = Params("keywords", ("upper",))

defop("linalg_eigh_values", "LinalgEighBackward0", "eigh.L", lambda a, upper: _eigh(a, upper)[0],
      (lambda g, ans, a, upper: _eigh_backward(a, upper, g_l=g), r"V\,\mathrm{diag}(g)\,V^{\top}"), needs=("a",),
      params=_UPLO, flops=lambda arrays, params: _cubic_flops(arrays, params))


defop("linalg_eigh_vectors", "LinalgEighBackward0", "eigh.V", lambda a, upper: _eigh(a, upper)[1],
      (lambda g, ans, a, upper: _eigh_backward(a, upper, g_v=g), r"V\,\frac{\mathrm{skew}(V^{\top} g)}{L_j-L_i}V^{\top}"),
      needs=("a",), params=_UPLO, flops=lambda arrays, params: _cubic_flops(arrays, params))


# ---------------------------------------------------------------- cholesky: A = L Lᵀ
def _cholesky(a, upper):
    low = np.linalg.cholesky(a)
    return _mT(low) if upper else low


def _solve_triangular(t, b, lower, left=True):
    """t⁻¹ b (left) or b t⁻¹ by the generic solver: the results of the triangular one, to rounding."""
    return _solve(t, b, False, left)


def _cholesky_vjp(g, ans, a, upper):
    """PyTorch's cholesky_backward (Iain Murray, arXiv 1602.07527)."""
    low, gl = (_mT(ans), _mT(g)) if upper else (ans, g)
    ga = np.tril(_mT(low) @ gl)
    ga = 0.5 * (ga + _mT(np.tril(ga, -1)))
    ga = _solve_triangular(_mT(low), ga, lower=False)
    return _solve_triangular(low, ga, lower=True, left=False)


defop("linalg_cholesky", "LinalgCholeskyExBackward0", "cholesky", _cholesky, (_cholesky_vjp, r"\Phi(L^{\top}g)"),
      needs=("r",), params=_UPLO, flops=lambda arrays, params: _cubic_flops(arrays, params))


# torch.cholesky (deprecated): the same factor, its own node name
defop("cholesky", "CholeskyBackward0", "cholesky", _cholesky, (_cholesky_vjp, r"\Phi(L^{\top}g)"), needs=("r",),
      params=_UPLO, flops=lambda arrays, params: _cubic_flops(arrays, params))


# ---------------------------------------------------------------- slogdet: log|det A|
def _logabsdet(a):
    return np.asarray(np.linalg.slogdet(a)[1], dtype=a.dtype)


def _slogdet_vjp(g, ans, a):
    inverse = _graphed_op("linalg_inv", (a,)) if _graphed(a) else np.linalg.inv(a)
    return np.expand_dims(g, (-2, -1)) * _mT(inverse)


defop("linalg_slogdet", "LinalgSlogdetBackward0", "slogdet", _logabsdet, (_slogdet_vjp, r"A^{-\top}"), needs=("a",),
      flops=lambda arrays, params: _cubic_flops(arrays, params))


defop("linalg_slogdet_sign", None, "slogdet", lambda a: np.asarray(np.linalg.slogdet(a)[0], dtype=a.dtype), saves=False)


# ---------------------------------------------------------------- the full SVD's U (m x m; only its first min(m, n)
# columns have a gradient, as in PyTorch)
def _svd_u_full(a):
    return np.linalg.svd(a, full_matrices=True)[0]


def _svd_vh_full(a):
    return np.linalg.svd(a, full_matrices=True)[2]


def _full_sizes(which):
    """The full U (m x m) and Vh (n x n), both made by either op: bigger than A when it is far from square."""
    def sizes(arrays, params):
        shape = np.shape(arrays[0])
        return tuple(tuple(shape[:-2]) + (side, side) for side in (shape[-2], shape[-1]))
    return sizes


defop("svd_u_full", "LinalgSvdBackward0", "svd.U", _svd_u_full,
      (lambda g, ans, a: svd_backward(a, gU=g[..., :min(a.shape[-2:])]), r"\frac{\partial U}{\partial A}"), needs=("a",),
      flops=_svd_flops, sizes=_full_sizes("U"))


defop("svd_vh_full", "LinalgSvdBackward0", "svd.Vh", _svd_vh_full,
      (lambda g, ans, a: svd_backward(a, gVh=g[..., :min(a.shape[-2:]), :]), r"\frac{\partial V^{\top}}{\partial A}"),
      needs=("a",), flops=_svd_flops, sizes=_full_sizes("Vh"))
