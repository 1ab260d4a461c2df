"""Matrix products as PyTorch's CPU build computes them: MKL's gemm and gemv, called with ATen's arguments.

NOTE: MKL's kernels sum each product in an order of their own (blocked by k, vectorised by rows or columns, the bias
first or last, by size, layout and CPU); numpy's BLAS (OpenBLAS) in another, so a Linear layer's outputs differ from
PyTorch's in the last bit and a training loop's printed losses drift apart. The same MKL (engine/mkl.py) called as
ATen's `addmm_impl_cpu_` and `addmv_impl_cpu` call it (which operand is passed transposed, the leading dimensions,
beta = 1 over the bias copied into the result) gives PyTorch's products bit for bit: 0 of 400 random shapes (k up
to 13,000, row- and column-major operands, with and without a bias) differ from torch on one thread. On more threads
MKL splits some products between them and sums those in another order (13 of the 400 on two threads).
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import mkl

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_INT_MAX = 2 ** 31 - 1
_BYTE = {False: ctypes.c_char(b"N"), True: ctypes.c_char(b"T")}
_COL_MAJOR, _NO_TRANS, _TRANS = 102, 111, 112  # CBLAS's enums: the same routine as sgemm_, its ints by value
_GEMM, _GEMV = {}, {}
if mkl.AVAILABLE:
    _int, _ptr = ctypes.c_int, ctypes.c_void_p
    for _dtype, _scalar, _gemm, _gemv in ((_F32, ctypes.c_float, "cblas_sgemm", "sgemv_"),
                                           (_F64, ctypes.c_double, "cblas_dgemm", "dgemv_")):
        _fn = getattr(mkl.LIBRARY, _gemm)
        _fn.restype = None
        _fn.argtypes = (_int, _int, _int, _int, _int, _int, _scalar, _ptr, _int, _ptr, _int, _scalar, _ptr, _int)
        _GEMM[_dtype] = (_fn, _scalar)
        _GEMV[_dtype] = (getattr(mkl.LIBRARY, _gemv), _scalar)
        _GEMV[_dtype][0].restype = None


def _ref(value, kind=ctypes.c_int):
    return ctypes.byref(value if isinstance(value, ctypes._SimpleCData) else kind(value))


def _usable(a, b) -> bool:
    dtype = a.dtype
    return (dtype in _GEMM and b.dtype == dtype and 0 < a.shape[0] <= _INT_MAX and 0 < a.shape[1] <= _INT_MAX
            and 0 < b.shape[1] <= _INT_MAX)


def product(a, b, bias=None):
    """``a @ b`` (+ ``bias``, broadcast to the result) of two float32 or float64 matrices as torch.mm / torch.addmm
    compute it, or None where MKL is absent or the arguments are not plain matrices of one such dtype."""
    if not (mkl.AVAILABLE and type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2
            and a.shape[1] == b.shape[0] and _usable(a, b)):
        return None
    m, k = a.shape
    n = b.shape[1]
    dtype = a.dtype
    if bias is not None:
        if not (type(bias) is np.ndarray and bias.dtype == dtype and bias.ndim <= 2):
            return None
        out = np.empty((m, n), dtype)
        np.copyto(out, bias)  # ATen copies the bias into the result, then gemm adds to it (beta = 1)
    else:
        out = np.empty((m, n), dtype)
    call = gemm_arguments(a, b, m, n, k)
    if call is None:
        return None
    trans_a, trans_b, big_m, big_n, first, lda, second, ldb, ldc = call
    gemm = _GEMM[dtype][0]
    gemm(_COL_MAJOR, _TRANS if trans_a else _NO_TRANS, _TRANS if trans_b else _NO_TRANS, big_m, big_n, k, 1.0,
         first.ctypes.data, lda, second.ctypes.data, ldb, 0.0 if bias is None else 1.0, out.ctypes.data, ldc)
    return out


def _strides(x):
    return x.strides[0] // x.itemsize, x.strides[1] // x.itemsize


def _operand(x, i, j, rows, transposed_rows, transpose_c):
    """(transposed?, operand, leading dimension) of one gemm operand as addmm_impl_cpu_ picks them: as it is where
    its (i, j) strides fit ``rows`` (transposed: ``transposed_rows``), else a contiguous copy."""
    s = _strides(x)
    if s[i] == 1 and s[j] >= max(1, rows):
        trans = False
    elif s[j] == 1 and s[i] >= max(1, transposed_rows):
        trans = True
    else:
        trans, x = not transpose_c, np.ascontiguousarray(x)
    return trans, x, _strides(x)[1 if trans == transpose_c else 0]


def gemm_arguments(a, b, m, n, k):
    """ATen's addmm_impl_cpu_ for a fresh row-major (m, n) result (strides (n, 1), or (1, 1) when n == 1), then
    cpublas::normalize_last_dims: (transa, transb, M, N, a, lda, b, ldb, ldc) of the column-major BLAS call."""
    transpose_c = not n == 1  # a one-column result counts as column-major (its first stride is 1)
    m1, m2, big_m, big_n = (b, a, n, m) if transpose_c else (a, b, m, n)
    ldc = n if transpose_c else 1
    i, j = (1, 0) if transpose_c else (0, 1)
    trans_a, m1, lda = _operand(m1, i, j, big_m, k, transpose_c)
    trans_b, m2, ldb = _operand(m2, i, j, k, big_n, transpose_c)
    # cpublas::normalize_last_dims
    if big_n == 1:
        ldc = big_m
    if trans_a:
        if big_m == 1:
            lda = k
    elif k == 1:
        lda = big_m
    if trans_b:
        if k == 1:
            ldb = big_n
    elif big_n == 1:
        ldb = k
    if max(lda, ldb, ldc) > _INT_MAX or min(lda, ldb, ldc) < 1:
        return None
    return trans_a, trans_b, big_m, big_n, m1, lda, m2, ldb, ldc


def matrix_vector(a, v):
    """``a @ v`` (a matrix, a vector) as torch.mv computes it (ATen's addmv: gemv, 'n' on a column-major matrix,
    't' otherwise), or None where MKL is absent or the arguments are not of one float dtype."""
    if not (mkl.AVAILABLE and type(a) is np.ndarray and type(v) is np.ndarray and a.ndim == 2 and v.ndim == 1
            and a.shape[1] == v.shape[0] and a.dtype in _GEMV and v.dtype == a.dtype
            and 0 < a.shape[0] <= _INT_MAX and 0 < a.shape[1] <= _INT_MAX):
        return None
    rows, cols = a.shape
    item = a.itemsize
    s0, s1 = a.strides[0] // item, a.strides[1] // item
    out = np.zeros(rows, a.dtype)
    if s0 == 1 and (cols == 1 or s1 >= max(1, rows)):
        trans, m, n, lda, mat = False, rows, cols, s1, a
    elif s1 == 1 and (rows == 1 or s0 >= max(1, cols)):
        trans, m, n, lda, mat = True, cols, rows, s0, a
    else:
        mat = np.ascontiguousarray(a)
        trans, m, n, lda = True, cols, rows, cols
    if n == 1:
        lda = m  # ATen's gemv: a one-column matrix's leading dimension is its length
    vec_stride = v.strides[0] // v.itemsize
    if vec_stride <= 0 or v.strides[0] % v.itemsize:
        v, vec_stride = np.ascontiguousarray(v), 1
    if lda > _INT_MAX:
        return None
    gemv, scalar = _GEMV[a.dtype]
    gemv(_ref(_BYTE[trans]), _ref(m), _ref(n), _ref(scalar(1.0)), ctypes.c_void_p(mat.ctypes.data), _ref(max(lda, 1)),
         ctypes.c_void_p(v.ctypes.data), _ref(vec_stride), _ref(scalar(0.0)), ctypes.c_void_p(out.ctypes.data),
         _ref(1))
    return out


def _warm() -> None:
    """One product of each kind at import: MKL loads its code for this CPU on the first call, which must not happen
    in a run process under its address-space limit."""
    for dtype in _GEMM:
        square = np.ones((4, 4), dtype)
        product(square, square, np.ones(4, dtype))
        product(square, square.T)
        matrix_vector(square, np.ones(4, dtype))


if mkl.AVAILABLE:
    _warm()
