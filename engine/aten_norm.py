"""The float32 2-norm of a whole tensor, or of each row along the last dim, as ATen's CPU kernel sums it
(ReduceOpsKernel.cpp `norm_kernel_tensor_iterator_impl`, its last-dim path): squares added into 8 vector lanes (the
kernel is built for AVX2 only, also on AVX-512 hosts), the lanes added left to right, then the elements past the last
whole vector one by one (the compiler unrolls that loop by 4: whole fours are squared then added, the last 1-3 fused
multiply-adds), then a correctly rounded square root.

NOTE: numpy's pairwise sum of squares differs from it in the last bit on ~1 norm in 4 (d2l's "L2 norm of w"); this
order matches every one of 3,000 random vectors of 1 to 100,000 elements, and of 720 random (rows, size) along the
last dim.
"""
from __future__ import annotations

import numpy as np

_F32 = np.dtype(np.float32)
LANES = 8


def sum_of_squares32(a: np.ndarray) -> np.float32:
    from .optim.fma import fma32  # here: engine.optim imports the op table, which imports this module

    flat = np.ascontiguousarray(a).reshape(-1)
    full = flat.size - flat.size % LANES
    lanes = np.zeros(LANES, _F32)
    if full:
        blocks = flat[:full].reshape(-1, LANES)
        squares = blocks * blocks
        lanes = np.add.accumulate(np.vstack([lanes, squares]), axis=0)[-1]  # each lane summed in order
    total = np.float32(0)
    for lane in lanes:
        total = np.float32(total + lane)
    tail = flat[full:]
    unrolled = tail.size - tail.size % 4  # NOTE: the compiler unrolls the tail by 4: those are not fused
    for x in tail[:unrolled]:
        total = np.float32(total + x * x)
    if unrolled < tail.size:
        acc = np.array([total], _F32)
        for x in tail[unrolled:]:
            v = np.array([x], _F32)
            acc = fma32(v, v, acc)
        total = acc[0]
    return total


def norm2_32(a: np.ndarray):
    """sqrt of ``sum_of_squares32`` for a float32 array (a numpy float32), else None."""
    if type(a) is not np.ndarray or a.dtype != _F32 or a.size == 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        return np.float32(np.sqrt(sum_of_squares32(a)))


def rows_sum_of_squares32(x: np.ndarray) -> np.ndarray:
    """``sum_of_squares32`` of each row of a 2-d float32 array (ATen's last-dim path reduces each row with the same
    loop), computed for all rows at once."""
    from .optim.fma import fma32  # (as above)

    rows, size = x.shape
    full = size - size % LANES
    total = np.zeros(rows, _F32)
    if full:
        blocks = x[:, :full].reshape(rows, -1, LANES)
        lanes = np.add.accumulate(blocks * blocks, axis=1)[:, -1]  # each lane summed in order, from +0 (squares)
        for j in range(LANES):
            total = total + lanes[:, j]
    unrolled = full + (size - full) // 4 * 4
    for k in range(full, unrolled):
        total = total + x[:, k] * x[:, k]
    for k in range(unrolled, size):
        column = np.ascontiguousarray(x[:, k])
        total = fma32(column, column, total)
    return total


def last_dim_norm2_32(a: np.ndarray, keep: bool):
    """The 2-norm along the last dim of a float32 array of dim >= 2 (and no empty dim), as ATen's last-dim path
    computes it; None for anything else."""
    if type(a) is not np.ndarray or a.dtype != _F32 or a.ndim < 2 or a.size == 0:
        return None
    rows = np.ascontiguousarray(a).reshape(-1, a.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(rows_sum_of_squares32(rows))
    return norms.reshape(a.shape[:-1] + ((1,) if keep else ()))
