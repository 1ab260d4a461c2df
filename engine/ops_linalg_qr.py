"""torch.linalg.qr's rows: A = Q R, two outputs of one LinalgQrBackward0 node (as eigh's two: one row each here,
both with PyTorch's formula, which is linear in (gQ, gR), so the two rows' gradients add up to torch's one)."""
from __future__ import annotations

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op
from .linalg_ops import _mT
from .op_table import Params, defop
from .ops_linalg_more import _cubic_flops
from .ops_linalg_solve import _solve

QR_MODES = ("reduced", "complete", "r")


def _qr(a, mode):
    if type(a) is Graphed:
        return _graphed_op("linalg_qr_q", (a,), (mode,)), _graphed_op("linalg_qr_r", (a,), (mode,))
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r")
    return np.linalg.qr(a, mode=mode)


def _qr_backward(a, mode, g_q=None, g_r=None):
    """PyTorch's linalg_qr_backward: m >= n: [gQ + Q syminv(triu(gR Rᵀ − Qᵀ gQ))] R⁻ᵀ; m < n: the square block's
    skew part, solved, padded, plus Q gR."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = a.shape[-2], a.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    q, r = _qr(a, mode)
    if g_q is None:
        x = g_r @ _mT(r)
    else:
        x = -(_mT(q) @ g_q) if g_r is None else g_r @ _mT(r) - _mT(q) @ g_q
    if m >= n:
        sym = np.triu(x)
        sym = sym + _mT(sym)
        sym = sym - np.eye(n, dtype=a.dtype) * np.expand_dims(np.diagonal(sym, 0, -2, -1), -1) * 0.5
        out = q @ sym
        if g_q is not None:
            out = out + g_q
        return _mT(_solve(r, _mT(out), False))  # out R⁻ᵀ
    skew = np.tril(-x - _mT(-x))
    out = _mT(_solve(r[..., :m], _mT(q @ skew), False))
    out = np.concatenate([out, np.zeros(out.shape[:-1] + (n - m,), a.dtype)], -1)
    if g_r is not None:
        out = out + q @ g_r
    return out


def _factor_sizes(arrays, params):
    """Q's and R's shapes, so a complete Q of a long matrix (m x m) is refused before LAPACK allocates it."""
    shape = np.shape(arrays[0])
    batch, (m, n) = tuple(shape[:-2]), shape[-2:]
    k = m if params[0] == "complete" else min(m, n)
    return ((0,) if params[0] == "r" else batch + (m, k)), batch + (k, n)


_MODE = Params("keywords", ("mode",))
defop("linalg_qr_q", "LinalgQrBackward0", "qr.Q", lambda a, mode: _qr(a, mode)[0],
      (lambda g, ans, a, mode: _qr_backward(a, mode, g_q=g), r"[g_Q + Q\,\mathrm{sym}(\ldots)]R^{-\top}"),
      needs=("a",), params=_MODE, flops=lambda arrays, params: _cubic_flops(arrays, params), sizes=_factor_sizes)
defop("linalg_qr_r", "LinalgQrBackward0", "qr.R", lambda a, mode: _qr(a, mode)[1],
      (lambda g, ans, a, mode: _qr_backward(a, mode, g_r=g), r"Q\,\mathrm{sym}(g_R R^{\top})R^{-\top}"),
      needs=("a",), params=_MODE, flops=lambda arrays, params: _cubic_flops(arrays, params), sizes=_factor_sizes)
