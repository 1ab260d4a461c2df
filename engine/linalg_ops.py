"""Forwards and VJPs of the linear-algebra ops for the op table (the `defop` lines stay in engine/ops.py).

A matrix's singular values (`svdvals`) and, for higher-order gradients only, its singular vectors (`svd_u`,
`svd_vh`) are three ops on one reduced SVD. Their VJPs are PyTorch's svd_backward; run on Graphed values
(create_graph) they read U, S and Vh through the same three ops, so every derivative of them is recorded again.
`amax` / `amin` (the matrix 2-norm is the largest singular value) share the gradient evenly among ties.
"""
from __future__ import annotations

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op


def svdvals(a):
    return np.linalg.svd(a, compute_uv=False)


def svd_u(a):
    return np.linalg.svd(a, full_matrices=False)[0]


def svd_vh(a):
    return np.linalg.svd(a, full_matrices=False)[2]


def _factors(a):
    """U, S, Vh of a's reduced SVD: recorded ops when a is Graphed (so they are differentiated too), else arrays."""
    if type(a) is Graphed:
        return _graphed_op("svd_u", (a,)), _graphed_op("svdvals", (a,)), _graphed_op("svd_vh", (a,))
    return np.linalg.svd(a, full_matrices=False)


def _mT(x):
    return np.swapaxes(x, -1, -2)


def svd_backward(a, gS=None, gU=None, gVh=None):
    """PyTorch's svd_backward (real, reduced SVD) for the one output whose gradient is given.

    NOTE: with repeated singular values the singular vectors are not unique and E below has zeros off its diagonal:
    the gradients of U and Vh are then inf/nan, as in PyTorch. The singular values' own gradient U diag(gS) Vh stays
    finite and is unique when gS is equal across a repeated block (the nuclear norm's ones, amax's even split);
    at a zero singular value (a rank-deficient matrix) it is one subgradient among many, as PyTorch's."""
    U, S, Vh = _factors(a)
    m, n = a.shape[-2], a.shape[-1]
    if gU is None and gVh is None:
        return (U * np.expand_dims(gS, -2)) @ Vh
    k = min(m, n)
    eye = np.eye(k, dtype=a.dtype)
    S2 = S * S
    E = np.expand_dims(S2, -2) - np.expand_dims(S2, -1) + eye  # S_j^2 - S_i^2, ones on the diagonal
    if gU is not None:
        UhgU = _mT(U) @ gU
        gA = (UhgU - _mT(UhgU)) * np.expand_dims(S, -2) / E
    else:
        gV = _mT(gVh)
        VhgV = Vh @ gV
        gA = np.expand_dims(S, -1) * (VhgV - _mT(VhgV)) / E
    if m > n and gU is not None:  # U's columns span only part of R^m: the rest of gU reaches A through S^-1
        gUSinv = gU / np.expand_dims(S, -2)
        return (U @ gA + gUSinv - U @ (_mT(U) @ gUSinv)) @ Vh
    if m < n and gVh is not None:
        SinvgVh = gVh / np.expand_dims(S, -1)
        return U @ (gA @ Vh + SinvgVh - (SinvgVh @ _mT(Vh)) @ Vh)
    return U @ (gA @ Vh)


def svdvals_vjp(g, ans, a):
    return svd_backward(a, gS=g)


def svd_u_vjp(g, ans, a):
    return svd_backward(a, gU=g)


def svd_vh_vjp(g, ans, a):
    return svd_backward(a, gVh=g)


def amax(a, dims, keep):
    return np.amax(a, axis=dims, keepdims=keep)


def amin(a, dims, keep):
    return np.amin(a, axis=dims, keepdims=keep)


def extreme_vjp(g, ans, a, dims, keep):
    """amax/amin: the gradient split evenly among the elements equal to the extreme (PyTorch's, not max's one)."""
    if not keep:
        axes = tuple(d % a.ndim for d in dims)
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    tied = (a == ans)  # a mask: a constant of the backward graph
    share = np.asarray(tied / tied.sum(axis=dims, keepdims=True), dtype=a.dtype)
    return np.broadcast_to(g, a.shape) * share
