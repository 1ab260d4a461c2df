"""Forwards and VJPs of the linear-algebra ops for the op table (the `defop` lines stay in engine/ops.py).

A matrix's singular values (`svdvals`) and, for higher-order gradients only, its singular vectors (`svd_u`,
`svd_vh`) are three ops on one reduced SVD. Their VJPs are PyTorch's svd_backward; run on Graphed values
(create_graph) they read U, S and Vh through the same three ops, so every derivative of them is recorded again.
`amax` / `amin` (the matrix 2-norm is the largest singular value) share the gradient evenly among ties.
"""
from __future__ import annotations

import math

import numpy as np

from . import mkl_gemm
from .gemm_order import ordered_product
from .graphed import Graphed
from .graphed import op as _graphed_op
from .graphed import raw as _graphed_raw
from .op_table import defop


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


# ---------------------------------------------------------------- the rows: products and singular values
def _product_sizes(arrays, params):
    """mm, bmm, addmm: the product's shape (addmm's bias broadcasts into it)."""
    a, b = np.shape(arrays[-2]), np.shape(arrays[-1])
    lead = np.broadcast_shapes(a[:-2], b[:-2]) if len(a) > 2 or len(b) > 2 else ()
    return (tuple(lead) + (a[-2], b[-1]),)


def _product_flops(arrays, params):
    """Multiply-adds of a matrix product: memory is bounded by its size, time is not."""
    return math.prod(map(int, _product_sizes(arrays, params)[0])) * int(np.shape(arrays[-2])[-1])


def _mv_sizes(arrays, params):
    return (np.shape(arrays[0])[:1],)  # (n, 0) @ (0,) has n elements from two empty inputs


def _mm(a, b):
    out = mkl_gemm.product(a, b)  # MKL as ATen calls it; else MKL's summation order where it is known, else numpy's
    if out is None:
        out = ordered_product(a, b)
    return a @ b if out is None else out


def _addmm(c, a, b):
    out = mkl_gemm.product(a, b, c)
    if out is None:
        out = ordered_product(a, b, c)
    if out is not None:
        return out
    out = a @ b
    if getattr(c, "dtype", None) != out.dtype:
        return out + c
    out += c  # in place: one allocation fewer than c + a @ b
    return out


def _mv(a, v):
    out = mkl_gemm.matrix_vector(a, v)
    if out is not None:
        return out
    out = ordered_product(a, v[:, None]) if type(v) is np.ndarray and v.ndim == 1 else None
    return np.matmul(a, v) if out is None else out[:, 0]


def _mm_grad_b(g, a, b):
    """d(a @ b)/db in b's own memory layout: for b = W.t() (an F-ordered view) the gradient is built
    transposed, so after TBackward0 the weight's gradient is C-ordered like the weight itself.
    NOTE: a layout mismatch makes every later elementwise update of the weight ~10x slower."""
    m = _graphed_raw(b)
    column_major = m.ndim == 2 and m.strides == (m.itemsize, m.shape[0] * m.itemsize)  # torch's test, as strides
    if column_major or (b.flags.f_contiguous and not b.flags.c_contiguous):
        return _mm(g.T, a).T
    return _mm(a.T, g)


def _swap(m):
    return np.swapaxes(m, -1, -2)


# Linear algebra
defop("mm", "MmBackward0", "matmul", _mm, (lambda g, ans, a, b: _mm(g, b.T), r"\,\cdot B^{\top}"),
      (lambda g, ans, a, b: _mm_grad_b(g, a, b), r"A^{\top}\cdot"), needs=("b", "a"), sizes=_product_sizes, flops=_product_flops)


defop("mv", "MvBackward0", "matmul", _mv, (lambda g, ans, a, b: np.outer(g, b), r"\,\cdot v^{\top}"),
      (lambda g, ans, a, b: _mv(a.T, g), r"A^{\top}\cdot"), needs=("b", "a"), sizes=_mv_sizes)


defop("dot", "DotBackward0", "dot", np.dot, (lambda g, ans, a, b: g * b, "b"), (lambda g, ans, a, b: g * a, "a"),
      needs=("b", "a"))


defop("bmm", "BmmBackward0", "matmul", np.matmul, (lambda g, ans, a, b: g @ _swap(b), r"\,\cdot B^{\top}"),
      (lambda g, ans, a, b: _swap(a) @ g, r"A^{\top}\cdot"), needs=("b", "a"), sizes=_product_sizes, flops=_product_flops)


# c (the bias) broadcasts against a @ b
defop("addmm", "AddmmBackward0", "addmm", _addmm, (lambda g, ans, c, a, b: g, "1"),
      (lambda g, ans, c, a, b: _mm(g, b.T), r"\,\cdot B^{\top}"), (lambda g, ans, c, a, b: _mm_grad_b(g, a, b), r"A^{\top}\cdot"),
      needs=("", "c", "b"), broadcasts=True, sizes=_product_sizes, flops=_product_flops)


# Linear algebra (numpy in engine/linalg_ops.py): singular values for the nuclear and 2-norms (torch.linalg), their
# singular vectors only for higher-order gradients; amax/amin share a gradient evenly among ties
defop("svdvals", "LinalgSvdBackward0", "svdvals", svdvals, (svdvals_vjp, r"u_i v_i^{\top}"), needs=("a",))


defop("svd_u", "LinalgSvdBackward0", "svd.U", svd_u, (svd_u_vjp, r"\frac{\partial U}{\partial A}"), needs=("a",))


defop("svd_vh", "LinalgSvdBackward0", "svd.Vh", svd_vh, (svd_vh_vjp, r"\frac{\partial V^{\top}}{\partial A}"),
      needs=("a",))
