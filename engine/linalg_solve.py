"""torch.linalg's solvers and factorisations courses use (issue 21, names past §3): solve, lstsq, pinv, eigh /
eigvalsh, cholesky, slogdet, matrix_rank, svd (and the deprecated torch.svd / torch.cholesky / torch.slogdet /
torch.pinverse), plus torch.cov / torch.corrcoef, composed as ATen composes them. Rows: engine/ops_linalg_solve.py.
Below Tensor (torch.linalg is engine/linalg.py, which Tensor's norms import): the Tensor methods are attached in
engine/tensor_stats.py."""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes, registry
from .boundary import expect_tensor
from .dispatch import apply
from .linalg_more import LinAlgError, _check_lu_cost, _lu_dtype, _square_matrices
from .ops import OPS
from .tensor_funcs import return_type

lstsq_result = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
eigh_result = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
qr_result = return_type("linalg_qr", ("Q", "R"))
old_qr_result = return_type("qr", ("Q", "R"))
slogdet_result = return_type("linalg_slogdet", ("sign", "logabsdet"))
svd_result = return_type("linalg_svd", ("U", "S", "Vh"))
old_svd_result = return_type("svd", ("U", "S", "V"))
old_slogdet_result = return_type("slogdet", ("sign", "logabsdet"))


def _matrices(A, fn):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind != "f" or A._data.dtype == np.float16:
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.scalar_type_name(A._data.dtype)}")


def _same_dtype(A, B, fn):
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{dtypes.scalar_type_name(A._data.dtype)} and B of type {dtypes.scalar_type_name(B._data.dtype)} "
                           "instead")


def _is_vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


# ---------------------------------------------------------------- solve
def solve(A, B, *, left=True):
    """X with A X = B (left) or X A = B: one LinalgSolveExBackward0 node."""
    expect_tensor(A, "linalg_solve", "A", 1)
    expect_tensor(B, "linalg_solve", "B", 2)
    _square_matrices(A, "solve")
    _lu_dtype(A, "solve")
    _same_dtype(A, B, "solve")
    vector = bool(left) and _is_vector_rhs(A, B)
    if not left and B.ndim < 2:
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation XA = B")
    rows = B.shape[-1] if vector or not left else B.shape[-2]
    if rows != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {'x'.join(map(str, B.shape[-1 if vector else -2:]))})")
    _check_lu_cost(A, "linear solve")
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1 if vector else -2]))
    A = A if tuple(A.shape[:-2]) == batch else A.expand(*batch, *A.shape[-2:])
    tail = B.shape[-1:] if vector else B.shape[-2:]
    B = B if tuple(B.shape[:-len(tail)]) == batch else B.expand(*batch, *tail)
    try:
        return apply(OPS["linalg_solve"], (A, B), (vector, bool(left)))
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.solve: The solver failed because the input matrix is singular.") from None


# ---------------------------------------------------------------- least squares and the pseudo-inverse
def _rank(A, rtol):
    s = np.linalg.svd(A._data, compute_uv=False) if A.numel() else np.zeros(A.shape[:-2] + (0,), A._data.dtype)
    if not s.shape[-1]:
        return np.zeros(s.shape[:-1], np.int64)
    return (s > rtol * s[..., :1]).sum(-1).astype(np.int64)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution (one LinalgLstsqBackward0 node) with what LAPACK's driver reports besides: for
    CPU's default gelsy the rank, and empty residuals and singular values (gelsd / gelss report them too)."""
    expect_tensor(A, "linalg_lstsq", "A", 1)
    expect_tensor(B, "linalg_lstsq", "B", 2)
    _matrices(A, "lstsq")
    _same_dtype(A, B, "lstsq")
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-{1 if vector else 2})")
    m, n = A.shape[-2], A.shape[-1]
    tol = (np.finfo(A._data.dtype).eps * max(m, n)) if rcond is None else float(rcond)
    solution = apply(OPS["linalg_lstsq"], (A, B), (vector,))
    new = registry.new_tensor
    empty = new(np.zeros(0, A._data.dtype))
    rank = new(_rank(A, tol)) if driver != "gels" else new(np.zeros(0, np.int64))
    if driver in ("gelsd", "gelss"):
        values = new(np.linalg.svd(A._data, compute_uv=False).astype(A._data.dtype))
        residual = B - A @ solution.detach()
        full = bool((rank._data == min(m, n)).all())
        residuals = ((residual * residual).sum(-2 if not vector else -1) if m > n and full else empty).detach()
        return lstsq_result(solution, residuals, rank, values)
    return lstsq_result(solution, empty, rank, empty)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """A⁺ by the SVD, singular values at most max(atol, rtol * σ_max) treated as zero (one LinalgPinvBackward0)."""
    expect_tensor(A, "linalg_pinv", "A", 1)
    _matrices(A, "pinv")
    m, n = A.shape[-2], A.shape[-1]
    if atol is not None and atol != 0:
        raise NotImplementedError("linalg.pinv: atol= is not available in flowgrad yet; give rtol= instead")
    tol = np.finfo(A._data.dtype).eps * max(m, n) if rtol is None else float(rtol)
    return apply(OPS["linalg_pinv"], (A,), (tol,))


def pinverse(input, rcond=1e-15):  # noqa: A002 — torch.pinverse(input, rcond)
    expect_tensor(input, "pinverse", "input", 1)
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    expect_tensor(A, "linalg_matrix_rank", "A", 1)
    _matrices(A, "matrix_rank")
    if atol is not None and atol != 0:
        raise NotImplementedError("linalg.matrix_rank: atol= is not available in flowgrad yet; give rtol= instead")
    tol = np.finfo(A._data.dtype).eps * max(A.shape[-2:]) if rtol is None else float(rtol)
    return registry.new_tensor(_rank(A, tol))


# ---------------------------------------------------------------- symmetric eigenproblem, Cholesky, slogdet
def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError("Expected UPLO argument to be 'L' or 'U', but got " + str(UPLO))
    return UPLO in ("U", "u")


def eigh(A, UPLO="L"):  # noqa: N803 — torch's name
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix: two outputs of LinalgEighBackward0."""
    expect_tensor(A, "linalg_eigh", "A", 1)
    _square_matrices(A, "eigh")
    _matrices(A, "eigh")
    upper = _uplo(UPLO)
    _check_lu_cost(A, "eigendecomposition")
    return eigh_result(apply(OPS["linalg_eigh_values"], (A,), (upper,)),
                       apply(OPS["linalg_eigh_vectors"], (A,), (upper,)))


def qr(A, mode="reduced"):  # noqa: N803
    """Q (orthonormal columns) and R (upper triangular) with A = Q R: two outputs of LinalgQrBackward0 (mode='r':
    Q is an empty tensor)."""
    from .ops_linalg_qr import QR_MODES

    expect_tensor(A, "linalg_qr", "A", 1)
    if mode not in QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _matrices(A, "qr")
    _check_lu_cost(A, "QR factorisation")
    return qr_result(apply(OPS["linalg_qr_q"], (A,), (mode,)), apply(OPS["linalg_qr_r"], (A,), (mode,)))


def old_qr(input, some=True):  # noqa: A002 — torch.qr / Tensor.qr (deprecated): linalg.qr's factors
    q, r = qr(input, "reduced" if some else "complete")
    return old_qr_result(q, r)


def eigvalsh(A, UPLO="L"):  # noqa: N803
    expect_tensor(A, "linalg_eigvalsh", "A", 1)
    _square_matrices(A, "eigvalsh")
    _matrices(A, "eigvalsh")
    _check_lu_cost(A, "eigendecomposition")
    return apply(OPS["linalg_eigh_values"], (A,), (_uplo(UPLO),))


def cholesky(A, *, upper=False):
    """L with A = L Lᵀ (Lᵀ with upper=True): one LinalgCholeskyExBackward0 node."""
    expect_tensor(A, "linalg_cholesky", "A", 1)
    _square_matrices(A, "cholesky")
    _matrices(A, "cholesky")
    _check_lu_cost(A, "Cholesky factorisation")
    try:
        return apply(OPS["linalg_cholesky"], (A,), (bool(upper),))
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                          "positive-definite.") from None


def old_cholesky(input, upper=False):  # noqa: A002 — torch.cholesky (deprecated): the same factor, CholeskyBackward0
    expect_tensor(input, "cholesky", "input", 1)
    _square_matrices(input, "cholesky")
    _matrices(input, "cholesky")
    _check_lu_cost(input, "Cholesky factorisation")
    try:
        return apply(OPS["cholesky"], (input,), (bool(upper),))
    except np.linalg.LinAlgError:
        raise LinAlgError("cholesky: The factorization could not be completed because the input is not "
                          "positive-definite.") from None


def slogdet(A):
    """(sign, log|det A|): the logarithm carries LinalgSlogdetBackward0, the sign no gradient."""
    expect_tensor(A, "linalg_slogdet", "A", 1)
    _square_matrices(A, "slogdet")
    _lu_dtype(A, "slogdet")
    _check_lu_cost(A, "determinant")
    return slogdet_result(apply(OPS["linalg_slogdet_sign"], (A,)), apply(OPS["linalg_slogdet"], (A,)))


def old_slogdet(input):  # noqa: A002 — torch.slogdet
    expect_tensor(input, "slogdet", "input", 1)
    sign, logabsdet = slogdet(input)
    return old_slogdet_result(sign, logabsdet)


# ---------------------------------------------------------------- the SVD
def svd(A, full_matrices=True, *, driver=None):
    """U, S, Vh: outputs of one LinalgSvdBackward0 node (with full_matrices, U's and Vh's columns past min(m, n) get
    no gradient, as in PyTorch)."""
    expect_tensor(A, "linalg_svd", "A", 1)
    _matrices(A, "svd")
    m, n = A.shape[-2], A.shape[-1]
    full = bool(full_matrices) and m != n
    u = apply(OPS["svd_u_full" if full else "svd_u"], (A,))
    s = apply(OPS["svdvals"], (A,))
    vh = apply(OPS["svd_vh_full" if full else "svd_vh"], (A,))
    return svd_result(u, s, vh)


def old_svd(input, some=True, compute_uv=True):  # noqa: A002 — torch.svd: V, not Vh
    expect_tensor(input, "svd", "input", 1)
    u, s, vh = svd(input, full_matrices=not some)
    if not compute_uv:
        return old_svd_result(registry.new_tensor(np.zeros(u.shape, u._data.dtype)), s,
                              registry.new_tensor(np.zeros(vh.mT.shape, vh._data.dtype)))
    return old_svd_result(u, s, vh.mT)


# ---------------------------------------------------------------- covariance and correlation
def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance of the rows (variables) over the columns (observations), composed as ATen composes it."""
    expect_tensor(input, "cov", "input", 1)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights= and aweights= are not available in flowgrad yet")
    if not isinstance(correction, numbers.Integral) or isinstance(correction, bool):
        raise TypeError(f"cov(): argument 'correction' must be int, not {type(correction).__name__}")
    x = input if input.ndim == 2 else input.view(1, -1)
    if x._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    if x._data.dtype.kind != "f":
        x = x.to(dtypes.float32)  # an integer input's covariance is in the default dtype
    n = x.shape[1]
    centred = x - x.mean(1).unsqueeze(1)
    c = centred.mm(centred.t())
    return (c / max(n - correction, 0)).squeeze()


def corrcoef(input):  # noqa: A002
    """cov / the outer product of the standard deviations, clipped to [-1, 1] (ATen's composition)."""
    expect_tensor(input, "corrcoef", "input", 1)
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


__all__ = ["cholesky", "corrcoef", "cov", "eigh", "eigvalsh", "lstsq", "matrix_rank", "pinv", "pinverse", "slogdet",
           "solve", "svd"]
