"""torch.linalg's norms, composed as PyTorch composes them: vector norms are one `vector_norm` node; the nuclear
and matrix 2-norms are the sum / amax / amin of the singular values (`svdvals`, whose VJP is PyTorch's
svd_backward, engine/linalg_ops.py); the 1- and inf-norms are amax / amin of column / row abs-sums.
Also torch.amax / torch.amin (gradient shared evenly among ties)."""
from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .autograd import STATE
from .boundary import expect_tensor
from .dispatch import _dim, _dims, apply
from .limits import LimitExceeded
from .linalg_more import LinAlgError, inv  # noqa: F401 — torch.linalg's (issue 21 §3)
from .linalg_more import linalg_cross as cross  # noqa: F401
from .linalg_more import linalg_det as det  # noqa: F401
from .linalg_solve import cholesky, eigh, eigvalsh, lstsq, matrix_rank, pinv, qr, slogdet, solve, svd  # noqa: F401
from .ops import OPS

_INF = float("inf")
_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, _INF, -_INF)


def _floating(A, fn):
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. Got "
                           + dtypes.scalar_type_name(A._data.dtype))


def _to_dtype(A, dtype, fn):
    """`dtype=`: the input is cast first, never narrowed (PyTorch refuses float64 -> float32)."""
    if dtype is None:
        return A
    target = dtypes.to_numpy_dtype(dtype)
    if target.itemsize < A._data.dtype.itemsize:
        raise RuntimeError(f"linalg.{fn}: the dtype of the input ({dtypes.scalar_type_name(A._data.dtype)}) should be "
                           f"convertible without narrowing to the specified dtype ({dtypes.scalar_type_name(target)})")
    return A.to(dtype)


def _reduce_dims(dim, ndim):
    """amax's dims: () or None is every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return _dims(dim, ndim)


def amax(input, dim=(), keepdim=False):  # noqa: A002 — torch.amax(input, dim, keepdim)
    expect_tensor(input, "amax", "input", 1)
    return _extreme("amax", input, dim, keepdim)


def amin(input, dim=(), keepdim=False):  # noqa: A002
    expect_tensor(input, "amin", "input", 1)
    return _extreme("amin", input, dim, keepdim)


def _extreme(name, x, dim, keepdim):
    dims = _reduce_dims(dim, x.ndim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple times in the list of dims")
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if x._data.size == 0 and not dims:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    return apply(OPS[name], (x,), (dims, bool(keepdim)))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    expect_tensor(x, "linalg_vector_norm", "input", 1)
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    _floating(x, "vector_norm")
    x = _to_dtype(x, dtype, "vector_norm")
    dims = None if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0) else _dims(dim, x.ndim)
    if dims is not None and len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return apply(OPS["vector_norm"], (x,), (float(ord), dims, bool(keepdim)))


def svdvals(A, *, driver=None, out=None):
    expect_tensor(A, "linalg_svdvals", "A", 1)
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _floating(A, "svd")
    _check_svd_cost(A.shape)
    if not np.isfinite(A._data).all():  # LAPACK does not converge (numpy's LinAlgError): PyTorch's words
        raise RuntimeError("linalg.svd: The algorithm failed to converge because the input matrix contained "
                           "non-finite values.")
    return apply(OPS["svdvals"], (A,))


def _check_svd_cost(shape):
    """An SVD's time grows as m·n·min(m, n) per matrix: bounded by max_op_flops as a matrix product is."""
    limits = STATE.limits
    if limits is None or limits.max_op_flops is None:
        return
    m, n = int(shape[-2]), int(shape[-1])
    flops = math.prod(int(s) for s in shape[:-2]) * m * n * min(m, n)
    if flops > limits.max_op_flops:
        raise LimitExceeded(f"this singular value decomposition takes about {flops:,} multiply-adds; the limit is "
                            f"max_op_flops = {limits.max_op_flops:,}")


def _ord_text(ord):  # noqa: A002
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    expect_tensor(A, "linalg_matrix_norm", "input", 1)
    if not isinstance(dim, (tuple, list)):
        raise TypeError(f"linalg_matrix_norm() received an invalid combination of arguments - got (Tensor, dim="
                        f"{type(dim).__name__})")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _floating(A, "matrix_norm")
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(str(d) for d in dim))
    d0, d1 = _dim(dim[0], A.ndim), _dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise RuntimeError(f"linalg.matrix_norm: Order {_ord_text(ord)} not supported.")
    A = _to_dtype(A, dtype, "matrix_norm")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        # the two dims moved last (PyTorch's permute), singular values, then their sum / largest / smallest
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        B = A.permute(*rest, d0, d1) if (d0, d1) != (A.ndim - 2, A.ndim - 1) else A
        S = svdvals(B)
        r = S.sum(-1) if ord == "nuc" else amax(S, -1) if ord == 2 else amin(S, -1)
        if keepdim:
            r = r.unsqueeze(-1).unsqueeze(-1)
            back = np.argsort([*rest, d0, d1]).tolist()
            r = r.permute(*back)
        return r
    if ord in (_INF, -_INF):  # the largest (smallest) row abs-sum: the vector 1-norm over d1, then over d0
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    norms = vector_norm(A, 1.0, d0, keepdim)
    return amax(norms, d1, keepdim) if ord > 0 else amin(norms, d1, keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    expect_tensor(A, "linalg_norm", "input", 1)
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if isinstance(ord, str):
            return matrix_norm(A, ord, tuple(dims), keepdim, dtype=dtype)
        if len(dims) == 2 and ord is None:  # the Frobenius norm is the vector 2-norm over both dims
            return vector_norm(A, 2, tuple(dims), keepdim, dtype=dtype)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims[0], keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, tuple(dims), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    if A.ndim == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, ord, None, keepdim, dtype=dtype)


def cond(A, p=None, *, out=None):
    """The condition number: the largest singular value over the smallest (p None or 2; -2 the inverse), else
    norm(A, p) * norm(inv(A), p) for a square A (inf where A is singular), as ATen's linalg_cond."""
    expect_tensor(A, "linalg_cond", "input", 1)
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or (not isinstance(p, (str, bool)) and isinstance(p, (int, float)) and abs(p) == 2):
        S = svdvals(A)
        k = S.shape[-1]
        s_max, s_min = S.narrow(-1, 0, 1), S.narrow(-1, k - 1, 1)
        return (s_min / s_max if p == -2 else s_max / s_min).squeeze(-1)
    if p not in ("fro", "nuc", 1, -1, _INF, -_INF) or isinstance(p, bool):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_ord_text(p)}")
    if A.shape[-1] != A.shape[-2]:
        shown = f"{p:f}" if isinstance(p, float) else p  # ATen's std::to_string: 1 is "1", 1.0 "1.000000"
        raise RuntimeError(f"linalg.cond(ord={shown}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.numel() == 0:  # NumPy defines no condition number of 0 x 0 matrices: 0, as ATen's
        return A.new_zeros(A.shape[:-2])
    if p == "nuc":  # from the singular values themselves, as ATen's (the nuclear norm of an inverse of inf would fail)
        S = svdvals(A)
        return S.sum(-1) * S.reciprocal().sum(-1)
    try:
        inverse = inv(A)
    except LinAlgError:  # a singular matrix: ATen's inv_ex fills its inverse with inf, so the number is inf
        inverse = A.detach() * 0 + _INF
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num(_INF, _INF, -_INF)


__all__ = ["norm", "vector_norm", "matrix_norm", "svdvals", "det", "inv", "cross", "LinAlgError", "cholesky", "eigh",
           "eigvalsh", "lstsq", "matrix_rank", "pinv", "qr", "slogdet", "solve", "svd", "cond"]
