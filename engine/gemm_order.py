"""float32 matrix products (mm, addmm) summed in the order PyTorch's BLAS (MKL's sgemm) sums them on an AVX-512 host.

MKL runs products with at most 9 output columns through a small kernel that adds each product, rounded to float32,
in k order: from the bias first (`BIAS_FIRST`) when B is row-major, from zero with the bias added last (`BIAS_LAST`)
when B is column-major (a Linear layer's `W.t()`) or the single column of a column-major A. numpy's BLAS (OpenBLAS)
fuses the multiply-adds and blocks k otherwise, so a Linear(3, 1) layer's output differed from torch's in the last bit
at a row in five, and a regression's printed losses drifted from PyTorch's. Products with 12 columns or more go
through an FMA kernel that numpy's matches up to k = 24 (further out both block k, each its own way: left alone).

The layouts and sizes where each order holds were measured against torch 2.13's addmm and mm over random shapes
(tests/engine/test_gemm_order_vs_torch.py); elsewhere (None) the caller keeps numpy's product. On a host without
AVX-512 MKL picks other kernels, which numpy's matched before this module: the orders here apply on AVX-512 only.
"""
from __future__ import annotations

import numpy as np

try:
    from numpy._core._multiarray_umath import __cpu_features__ as _CPU_FEATURES  # numpy >= 2
except ImportError:  # pragma: no cover - older numpy: no orders, numpy's products
    _CPU_FEATURES = {}

_F32 = np.dtype(np.float32)
_ZERO = np.float32(0)
BIAS_FIRST, BIAS_LAST = "bias first", "bias last"
PAIRED_TAIL = "paired tail"  # one column, 5 <= k <= 8: products K-3 and K-1 summed apart, then added (blocks of 4 rows)
SMALL_KERNEL_COLUMNS = 9  # MKL's small kernel: products with at most this many columns
MAX_TERMS = 1 << 20  # products summed here at most (k x m x n) for one row: past it numpy's product, whatever its order
# ... and for more rows past LOOPED_DEPTH: accumulated, a k-ordered sum costs ~9 ns a product, 100x numpy's product.
# NOTE: past this bound (a Linear(2, 32)'s weight gradient over 256 rows: 16,384) the last bits are numpy's again
MAX_BLOCK_TERMS = 8192
LOOPED_DEPTH = 16  # up to this k the products are added one k at a time; past it by one accumulate
MAX_DEPTH = 256  # ... and k at most past one row (measured up to k = 784; the cost grows with k)


ACTIVE = bool(_CPU_FEATURES.get("AVX512F"))


def product_order(a: np.ndarray, b: np.ndarray) -> str | None:
    """The order MKL's kernel sums `a @ b` in (two float32 matrices), or None where it is none of those here."""
    m, k = a.shape
    n = b.shape[1]
    if k == 0 or m == 0 or k * m * n > MAX_TERMS:
        return None
    if m == 1:  # one row, any number of columns: the k-ordered sum from the bias, for a row-major B
        return BIAS_FIRST if b.flags.c_contiguous else None
    if n > SMALL_KERNEL_COLUMNS or k > MAX_DEPTH or (k > LOOPED_DEPTH and k * m * n > MAX_BLOCK_TERMS):
        return None
    a_columns = a.flags.f_contiguous and not a.flags.c_contiguous  # A column-major (a transposed view: g.t())
    b_rows = b.flags.c_contiguous and not b.flags.f_contiguous
    b_columns = b.flags.f_contiguous and not b.flags.c_contiguous
    if m < 4:  # two or three rows: kernels of their own, not measured enough to follow
        return None
    if n == 1:  # a matrix-vector product: k-ordered for a column-major A, or k <= 4; blocked dot products past that
        return BIAS_FIRST if a_columns else BIAS_LAST if k <= 4 else PAIRED_TAIL if k <= 8 else None
    if b_rows or k == 1:
        return BIAS_FIRST if n in (2, 3, 4, 8) or k <= 7 else None
    if b_columns:
        if a_columns:
            return BIAS_LAST
        return BIAS_LAST if k <= (7 if n <= 3 else 3) else None
    return None


def ordered_product(a, b, bias=None):
    """`a @ b` (+ bias) as torch's addmm / mm computes it on this host, or None where numpy's product is the one to
    use (another dtype, another kernel, or too large to sum one k at a time)."""
    if not (ACTIVE and type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2
            and a.dtype == _F32 and b.dtype == _F32 and a.shape[1] == b.shape[0]):
        return None
    if bias is not None and not (getattr(bias, "dtype", None) == _F32 and np.ndim(bias) <= 2):
        return None
    order = product_order(a, b)
    if order is None:
        return None
    m, n = a.shape[0], b.shape[1]
    if order == PAIRED_TAIL:
        return _paired_tail(a, b[:, 0], bias)
    with np.errstate(invalid="ignore", over="ignore"):  # inf and nan go through as in BLAS, unannounced
        if bias is not None and order == BIAS_FIRST:
            total = np.add(np.broadcast_to(bias, (m, n)), np.multiply(a[:, 0:1], b[0:1, :]), dtype=_F32)
        else:
            total = np.multiply(a[:, 0:1], b[0:1, :]) + _ZERO  # from zero: a sum of -0 products is +0, as the kernel's
        k = a.shape[1]
        if k <= LOOPED_DEPTH:  # a few products: added one k at a time
            for j in range(1, k):
                total += a[:, j:j + 1] * b[j:j + 1, :]
        else:  # many: one sequential accumulate along k, the last axis (np.add.reduce would pair them up)
            terms = np.multiply(a[:, None, 1:], b.T[None, :, 1:])  # (m, n, k - 1)
            terms[:, :, 0] += total
            total = np.add.accumulate(terms, axis=-1)[:, :, -1]
        if bias is not None and order == BIAS_LAST:
            total = total + bias
    return np.ascontiguousarray(total)


def _paired_tail(a, w, bias):
    """A row-major (m, k) A times one column, 5 <= k <= 8: MKL's kernel takes rows four at a time, summing products 0
    .. k-4 and k-2 in order, k-3 and k-1 apart, then the two; the last m % 4 rows are summed in plain k order."""
    m, k = a.shape
    with np.errstate(invalid="ignore", over="ignore"):
        terms = a * w  # (m, k): each product rounded to float32
        blocked = (m // 4) * 4
        out = np.empty((m, 1), _F32)
        if blocked:
            t = terms[:blocked]
            total = t[:, 0] + np.float32(0)
            for j in (*range(1, k - 3), k - 2):
                total = total + t[:, j]
            out[:blocked, 0] = total + (t[:, k - 3] + t[:, k - 1])
        if blocked < m:
            total = terms[blocked:, 0] + np.float32(0)
            for j in range(1, k):
                total = total + terms[blocked:, j]
            out[blocked:, 0] = total
        if bias is not None:
            out = out + bias
    return out
