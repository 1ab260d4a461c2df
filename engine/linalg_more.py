"""torch.det / inverse / cross / kron / cdist / cummax / cummin and Tensor.fill_diagonal_ (issue 21 §3): PyTorch's
argument checks and messages, then the op-table rows of engine/ops_linalg_more.py. torch.linalg's det, inv and
cross are these functions too (engine/linalg.py)."""
from __future__ import annotations

import builtins
import math
import numbers
import warnings

import numpy as np

from . import dtypes
from .autograd import STATE
from .boundary import expect_tensor, type_name
from .dispatch import _broadcast_message, _dim, apply
from .limits import LimitExceeded
from .ops import OPS
from .ops_linalg_more import LinAlgError  # noqa: F401 — torch.linalg.LinAlgError
from .tensor_funcs import return_type

cummax_result = return_type("cummax")
cummin_result = return_type("cummin")


def _type_name(t):
    return dtypes.scalar_type_name(t._data.dtype)


def _check_lu_cost(A, what):
    """An LU factorisation's n³ multiply-adds per matrix, bounded by max_op_flops as a matrix product's are."""
    limits = STATE.limits
    if limits is None or limits.max_op_flops is None:
        return
    flops = math.prod(int(s) for s in A.shape[:-2]) * int(A.shape[-1]) ** 3
    if flops > limits.max_op_flops:
        raise LimitExceeded(f"this {what} takes about {flops:,} multiply-adds; the limit is "
                            f"max_op_flops = {limits.max_op_flops:,}")


def _square_matrices(A, fn):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{fn}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _lu_dtype(A, fn):
    kind = A._data.dtype
    if kind == np.float16:  # NOTE: PyTorch's LU has no half kernel; inv says so in its own words
        if fn == "inv":
            raise RuntimeError("linalg.inv: Low precision dtypes not supported. Got Half")
        raise NotImplementedError("\"lu_cpu\" not implemented for 'Half'")
    if kind.kind != "f":
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. Got {_type_name(A)}")


def linalg_det(A):
    expect_tensor(A, "linalg_det", "A", 1)
    return _det(A)


def det(input):  # noqa: A002 — torch.det(input)
    expect_tensor(input, "det", "input", 1)
    return _det(input)


def _det(A):
    _square_matrices(A, "det")
    _lu_dtype(A, "det")
    _check_lu_cost(A, "determinant")
    return apply(OPS["linalg_det"], (A,))


def inv(A):
    expect_tensor(A, "linalg_inv", "A", 1)
    return _inv(A)


def inverse(input):  # noqa: A002 — out= is engine/outparam.py's (surface.py)
    expect_tensor(input, "inverse", "input", 1)
    return _inv(input)


def _inv(A):
    _square_matrices(A, "inv")
    _lu_dtype(A, "inv")
    _check_lu_cost(A, "matrix inverse")
    return apply(OPS["linalg_inv"], (A,))


# ---------------------------------------------------------------- cross products
_CROSS_DEPRECATED = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                     "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                     "that of linalg.cross in a future release.")


def linalg_cross(input, other, *, dim=-1):  # noqa: A002
    expect_tensor(input, "linalg_cross", "input", 1)
    expect_tensor(other, "linalg_cross", "other", 2)
    return _cross(input, other, dim)


def cross(input, other, dim=None):  # noqa: A002
    """torch.cross: without dim, the first dimension of size 3 of the broadcast shape (deprecated, with a warning)."""
    expect_tensor(input, "cross", "input", 1)
    expect_tensor(other, "cross", "other", 2)
    if dim is None:
        warnings.warn(_CROSS_DEPRECATED, UserWarning, stacklevel=2)
        shape = _broadcast_shape(input, other)
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(input, other, dim)


def _broadcast_shape(a, b):
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(_broadcast_message((a._data, b._data))) from None


def _cross(a, b, dim):
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"linalg_cross(): argument 'dim' must be int, not {type_name(dim)}")
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")
    d = _dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    _broadcast_shape(a, b)
    return apply(OPS["linalg_cross"], (a, b), (d - a.ndim,))


# ---------------------------------------------------------------- kron: PyTorch's interleaved product
def kron(input, other):  # noqa: A002
    """PyTorch's composite: each input viewed with its dims interleaved by size-1 dims, one broadcast product,
    viewed back (UnsafeViewBackward0 → MulBackward0 → UnsafeViewBackward0, as torch records it)."""
    expect_tensor(input, "kron", "input", 1)
    expect_tensor(other, "kron", "other", 2)
    n = builtins.max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + input.shape
    b_shape = (1,) * (n - other.ndim) + other.shape
    a_view = tuple(x for s in a_shape for x in (s, 1))
    b_view = tuple(x for s in b_shape for x in (1, s))
    product = apply(OPS["unsafe_view"], (input,), (a_view,)) * apply(OPS["unsafe_view"], (other,), (b_view,))
    return apply(OPS["unsafe_view"], (product,), (tuple(x * y for x, y in zip(a_shape, b_shape)),))


# ---------------------------------------------------------------- cdist: distances between the rows of two sets
_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    expect_tensor(x1, "cdist", "x1", 1)
    expect_tensor(x2, "cdist", "x2", 2)
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"cdist(): argument 'p' (position 3) must be float, not {type_name(p)}")
    if not isinstance(compute_mode, str) or compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_type_name(x)}")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x1)} but found {_type_name(x2)}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    try:
        batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise RuntimeError(_broadcast_message((np.empty(x1.shape[:-2]), np.empty(x2.shape[:-2])))) from None
    mode, rows1, rows2 = _COMPUTE_MODES[compute_mode], x1.shape[-2], x2.shape[-2]
    if p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25))):
        # PyTorch's matrix-product form, then a view of it (ViewBackward0 over EuclideanDistBackward0)
        dist = apply(OPS["euclidean_dist"], (x1, x2))
        return apply(OPS["view"], (dist,), (tuple(batch) + (rows1, rows2),))
    return apply(OPS["cdist"], (x1, x2), (float(p),))


# ---------------------------------------------------------------- cummax / cummin
def cummax(input, dim):  # noqa: A002
    expect_tensor(input, "cummax", "input", 1)
    return _running(input, dim, "cummax", cummax_result)


def cummin(input, dim):  # noqa: A002
    expect_tensor(input, "cummin", "input", 1)
    return _running(input, dim, "cummin", cummin_result)


def _running(x, dim, name, result):
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not {type_name(dim)}")
    d = _dim(int(dim), x.ndim)
    return result(apply(OPS[name], (x,), (d,)), apply(OPS[name + "_indices"], (x,), (d,)))


__all__ = ["LinAlgError", "cdist", "cross", "cummax", "cummin", "det", "inv", "inverse", "kron", "linalg_cross",
           "linalg_det"]
