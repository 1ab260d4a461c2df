"""The reference for engine/cascade_sum.py: its first, slow implementation of ATen's float32 cascade_sum, kept unchanged
as the order the fast paths must reproduce bit for bit (tests/engine/test_cascade_sum_fast_paths.py). Every step is a
whole-array np.add.accumulate in ATen's order; it is too slow for the engine (about 40 us a call) but easy to check.
"""
from __future__ import annotations

import numpy as np

VEC_LANES = 8  # Vectorized<float> under AVX2 (torch.backends.cpu.get_cpu_capability() == "AVX2"): 256 bits
ILP = 4  # row_sum's ilp_factor and the outer kernels' nrows
LEVELS = 4  # multi_row_sum's num_levels
# NOTE: a full reduction of more elements than this is split between threads by ATen (at::internal::GRAIN_SIZE),
# whose partial sums depend on the thread count: those sums keep numpy's order.
SERIAL_LIMIT = 32768
SMALL = 1 << 16  # arrays up to this size are summed along any axis by one np.add.accumulate


def _ceil_log2(n: int) -> int:
    return max(int(n) - 1, 0).bit_length()


def _sequential(x, axis: int):
    """The sum along axis added one slice at a time (never paired, unlike numpy's sum). It starts from the first
    slice, not from ATen's zero: that changes only the sign of an all-zero sum, which torch_sum makes +0."""
    n = x.shape[axis]
    if n <= 1:
        return np.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype) if n == 0 else np.take(x, 0, axis=axis)
    if x.size <= SMALL or axis == x.ndim - 1:  # one C call
        return np.add.accumulate(x, axis=axis)[(slice(None),) * axis + (-1,)]
    x = np.moveaxis(x, axis, 0)
    if n <= 64:  # a few whole-slice adds beat accumulate's strided walk over a big array
        out = x[0] + x[1]
        for i in range(2, n):
            np.add(out, x[i], out=out)
        return out
    return np.add.accumulate(np.ascontiguousarray(x), axis=0)[-1]


def _multi_row_sum(x):
    """multi_row_sum: x of shape (size, *cols) summed along axis 0 in ATen's four-level cascade."""
    size = x.shape[0]
    power = max(4, _ceil_log2(size) // LEVELS)
    step = 1 << power
    chunks = size // step
    cols = x.shape[1:]
    if chunks == 0:  # fewer rows than one level: plain sequential adds
        return _sequential(x, 0)
    # level 0: each full chunk of `step` rows summed one by one; the tail rows stay in level 0's accumulator
    level = _sequential(x[:chunks * step].reshape((chunks, step) + cols), 1)
    accs = []  # the accumulators of levels 1..3 when the loop ends (an empty level's is +0: left out)
    for depth in range(1, LEVELS):
        if depth == LEVELS - 1 or level.shape[0] < step:  # the last level keeps everything it is given
            accs.append(_sequential(level, 0))
            break
        full = level.shape[0] // step
        accs.append(_sequential(level[full * step:], 0))  # not yet flushed to the next level
        level = _sequential(level[:full * step].reshape((full, step) + cols), 1)
    # acc[0] = the tail rows from zero; then acc[0] += acc[1]; += acc[2]; += acc[3]
    return _sequential(np.concatenate([x[chunks * step:]] + [acc[None] for acc in accs]), 0)


def _row_sum(x):
    """row_sum: x of shape (size, *cols) summed along axis 0, as ILP interleaved rows then the leftovers."""
    size = x.shape[0]
    rows = size // ILP
    if rows == 0:
        return _sequential(x, 0)
    partial = _multi_row_sum(x[:rows * ILP].reshape((rows, ILP) + x.shape[1:]))  # (ILP, *cols)
    # partials[0] += each leftover row, then += partials[1], [2], [3]
    return _sequential(np.concatenate((partial[:1], x[rows * ILP:], partial[1:])), 0)


def _inner_sum(x):
    """x of shape (size1, size0), each row summed (the reduced axis is the contiguous one)."""
    size0 = x.shape[1]
    if size0 < VEC_LANES:
        return _row_sum(x.T)  # scalar_inner_sum
    vecs = size0 // VEC_LANES
    lanes = _row_sum(x[:, :vecs * VEC_LANES].reshape(x.shape[0], vecs, VEC_LANES).transpose(1, 0, 2))  # (size1, 8)
    # final_acc = the scalar tail from zero, then += each lane
    return _sequential(np.concatenate((x[:, vecs * VEC_LANES:], lanes), axis=1), 1)


def _outer_sum(x):
    """x of shape (size0, ..., size1) summed along axis 0 (the kept last axis is the contiguous one; the middle
    axes are outer loops, each one the same 2-d kernel)."""
    size1 = x.shape[-1]
    if size1 < VEC_LANES:  # scalar_outer_sum: groups of ILP columns use multi_row_sum, the rest row_sum
        grouped = size1 // ILP * ILP
    else:  # vectorized_outer_sum: groups of ILP vectors use multi_row_sum, the rest row_sum
        grouped = size1 // (ILP * VEC_LANES) * (ILP * VEC_LANES)
    return np.concatenate((_multi_row_sum(x[..., :grouped]), _row_sum(x[..., grouped:])), axis=-1)


def _coalesced(a, dims):
    """a's axes ordered as ATen's TensorIterator walks them (outermost first, by the input's strides) and merged
    into runs of reduced / kept axes: (array, [is_reduced per run]), or None for a layout that ATen walks in other
    kernels (a strided innermost axis, runs that do not merge in memory)."""
    order = [d for d in sorted(range(a.ndim), key=lambda d: (-abs(a.strides[d]), -a.shape[d])) if a.shape[d] != 1]
    if order and a.strides[order[-1]] != a.itemsize:
        return None
    runs: list[list] = []  # [is_reduced, elements, stride of the run's innermost axis]
    for d in order:
        reduced = d in dims
        if runs and runs[-1][0] == reduced:
            if runs[-1][2] != a.strides[d] * a.shape[d]:
                return None
            runs[-1][1:] = [runs[-1][1] * a.shape[d], a.strides[d]]
        else:
            runs.append([reduced, a.shape[d], a.strides[d]])
    x = np.lib.stride_tricks.as_strided(a, [n for _, n, _ in runs], [st for _, _, st in runs], writeable=False)
    return x, [r for r, _, _ in runs]


def torch_sum(a, dims=None, keepdim=False):
    """sum of a float32 array over dims (None: all) in ATen's order; other dtypes and layouts ATen walks in more
    than two nested loops keep numpy's sum."""
    all_dims = tuple(range(a.ndim))
    dims = all_dims if dims is None else tuple(d % max(a.ndim, 1) for d in (dims if isinstance(dims, tuple) else (dims,)))
    if a.dtype == np.float32 and 0 < a.size <= SERIAL_LIMIT and a.flags.c_contiguous and len(set(dims)) == a.ndim:
        with np.errstate(invalid="ignore", over="ignore"):  # the common case first: all of one contiguous row
            total = a.dtype.type(_inner_sum(a.reshape(1, -1))[0] + a.dtype.type(0))
        return np.full((1,) * a.ndim, total) if keepdim else total
    if a.dtype != np.float32 or a.size == 0:  # (past SERIAL_LIMIT: one cascade, as torch on one thread)
        return a.sum(axis=dims, keepdims=keepdim)
    walk = _coalesced(a, set(dims))
    if walk is None:
        if set(dims) == set(all_dims):
            return _strided_total(a, keepdim)
        return a.sum(axis=dims, keepdims=keepdim)
    x, runs = walk
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is nan, as torch's, without a warning
        flat = _walk(x, runs)
    if flat is None:
        return a.sum(axis=dims, keepdims=keepdim)
    kept = [n for d, n in enumerate(a.shape) if d not in dims]
    out = np.asarray(flat, dtype=a.dtype).reshape(kept)
    if keepdim:
        out = out.reshape([1 if d in dims else n for d, n in enumerate(a.shape)])
    out = out + a.dtype.type(0)  # ATen's sums start from +0: an all-zero sum is +0
    return out if out.ndim else a.dtype.type(out)


def _strided_total(a, keepdim):
    """The sum of all of a strided array: ATen sums its contiguous innermost rows, then adds the rows' sums one by
    one into the output (the outer loops of its TensorIterator)."""
    order = [d for d in sorted(range(a.ndim), key=lambda d: (-abs(a.strides[d]), -a.shape[d])) if a.shape[d] != 1]
    if not order or a.strides[order[-1]] != a.itemsize:
        return a.sum(keepdims=keepdim)
    row, stride = 1, a.itemsize
    for d in reversed(order):  # the innermost axes that merge in memory make one row
        if a.strides[d] != stride:
            break
        row, stride = row * a.shape[d], stride * a.shape[d]
    with np.errstate(invalid="ignore", over="ignore"):
        rows = _inner_sum(np.transpose(a, order + [d for d in range(a.ndim) if d not in order]).reshape(-1, row))
        total = a.dtype.type(_sequential(rows, 0) + a.dtype.type(0))
    return np.full([1] * a.ndim, total, a.dtype) if keepdim else total


def _walk(x, runs):
    """The sums of x (coalesced runs) by the 2-d kernel ATen picks; None for layouts of more nested loops."""
    if runs == [] or runs == [False]:
        return x.reshape(-1) + np.float32(0)  # nothing summed: 0 + x, as ATen's zero-filled output
    if runs == [True]:
        return _inner_sum(x.reshape(1, -1))
    if runs == [False, True]:
        return _inner_sum(x)
    if runs == [True, False]:
        return _outer_sum(x)
    if runs == [False, True, False]:
        return _outer_sum(x.transpose(1, 0, 2))
    return None
