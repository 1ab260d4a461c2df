"""PyTorch's CPU float sum, bit for bit: ATen's cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp) in numpy.

ATen adds float32 in its own order: rows of 4 (ILP) x 8-lane AVX2 vectors, accumulated in up to four levels whose
level size is 2 ** max(4, ceil(log2(rows)) // 4), then the lanes and the scalar tail. numpy's pairwise order gives
other last bits, which printed losses show. Every step here is a whole-array numpy add in that order (Python loops
run over the levels, never over the elements).

Speed (issue 21): the sums run once per op and per broadcast backward, so each path is a handful of numpy calls.
`np.add.reduce` along an axis that is not the innermost one adds whole rows one after another (numpy pairs terms
only when the reduced axis is the inner loop), so it is the sequential sum wherever `_reduce_keeps_order` holds;
elsewhere `np.add.accumulate`, which is sequential by definition. tests/engine/cascade_sum_reference.py keeps the
first, plain implementation; tests/engine/test_cascade_sum_fast_paths.py checks these paths against it bit for bit.
"""
from __future__ import annotations

import numpy as np

from .fp_warnings import is_silenced

VEC_LANES = 8  # Vectorized<float> under AVX2 (torch.backends.cpu.get_cpu_capability() == "AVX2"): 256 bits
ILP = 4  # row_sum's ilp_factor and the outer kernels' nrows
LEVELS = 4  # multi_row_sum's num_levels
# NOTE: ATen splits a full reduction of more than at::internal::GRAIN_SIZE elements between its threads, whose partial
# sums depend on the thread count. The engine computes as PyTorch on one thread (as MKL, engine/mkl.py), where no sum
# is split: past this size a sum takes the general walk (one cascade), not the unrolled one-run path.
SERIAL_LIMIT = 32768
SMALL = 1 << 16  # arrays up to this size are summed along any axis by one np.add.accumulate
ROW = ILP * VEC_LANES  # one multi_row_sum row of a contiguous inner sum: 4 vectors of 8 lanes
MIN_LEVEL_POWER = 4
_F32 = np.dtype(np.float32)
_ZERO = np.float32(0)
_add_reduce = np.add.reduce
_add_accumulate = np.add.accumulate
_concatenate = np.concatenate
# scalar_inner_sum's order for fewer than 8 elements: x[0] (row_sum's first partial), the leftovers, x[1], x[2], x[3]
_SCALAR_ORDERS = tuple(np.array(list(range(n)) if n < ILP else [0, *range(ILP, n), 1, 2, 3], np.intp)
                       for n in range(VEC_LANES))


def _ceil_log2(n: int) -> int:
    return max(int(n) - 1, 0).bit_length()


def _reduce_keeps_order(x, axis: int) -> bool:
    """Whether np.add.reduce(x, axis) adds x's slices along axis one by one: numpy's iterator makes the axis of least
    stride its inner loop and pairs terms only when that loop is the reduction; a kept axis of more than one element
    and a smaller (non-negative) stride keeps the reduced axis out of it."""
    strides, shape = x.strides, x.shape
    reduced = strides[axis]
    if reduced <= 0 or min(strides) < 0:
        return False
    return any(0 < strides[d] < reduced and shape[d] > 1 for d in range(x.ndim) if d != axis)


def _sequential(x, axis: int):
    """The sum along axis added one slice at a time (never paired, unlike numpy's sum). An empty axis gives +0, as
    ATen's accumulators start; otherwise the first slice starts it, not ATen's zero: that changes only the sign of an
    all-zero sum, which torch_sum makes +0."""
    n = x.shape[axis]
    if n <= 1:
        return np.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype) if n == 0 else np.take(x, 0, axis=axis)
    # one C call, no partial sums kept (a big strided array would run numpy's inner loop over a few lanes at a time)
    if (x.size <= SMALL or (axis == 0 and x.flags.c_contiguous)) and _reduce_keeps_order(x, axis):
        return _add_reduce(x, axis=axis)
    if x.size <= SMALL or axis == x.ndim - 1:  # one C call
        return _add_accumulate(x, axis=axis)[(slice(None),) * axis + (-1,)]
    x = np.moveaxis(x, axis, 0)
    if n <= 64:  # a few whole-slice adds beat accumulate's strided walk over a big array
        out = x[0] + x[1]
        for i in range(2, n):
            np.add(out, x[i], out=out)
        return out
    return _add_accumulate(np.ascontiguousarray(x), axis=0)[-1]


def _multi_row_sum(x):
    """multi_row_sum: x of shape (size, *cols) summed along axis 0 in ATen's four-level cascade."""
    size = x.shape[0]
    step = 1 << max(MIN_LEVEL_POWER, _ceil_log2(size) // LEVELS)
    chunks = size // step
    if chunks == 0:  # fewer rows than one level: plain sequential adds
        return _sequential(x, 0)
    cols = x.shape[1:]
    # level 0: each full chunk of `step` rows summed one by one; the tail rows stay in level 0's accumulator
    level = _sequential(x[:chunks * step].reshape((chunks, step) + cols), 1)
    # acc[0] = the tail rows from zero; then acc[0] += acc[1]; += acc[2]; += acc[3] (what each level holds at the end)
    acc = _sequential(x[chunks * step:], 0)
    for depth in range(1, LEVELS):
        if depth == LEVELS - 1 or level.shape[0] < step:  # the last level keeps everything it is given
            acc += _sequential(level, 0)
            break
        full = level.shape[0] // step
        acc += _sequential(level[full * step:], 0)  # not yet flushed to the next level
        level = _sequential(level[:full * step].reshape((full, step) + cols), 1)
    return acc


def _row_sum(x):
    """row_sum: x of shape (size, *cols) summed along axis 0, as ILP interleaved rows then the leftovers."""
    size = x.shape[0]
    rows = size // ILP
    if rows == 0:
        return _sequential(x, 0)
    partial = _multi_row_sum(x[:rows * ILP].reshape((rows, ILP) + x.shape[1:]))  # (ILP, *cols)
    # partials[0] += each leftover row, then += partials[1], [2], [3]
    return _sequential(_concatenate((partial[:1], x[rows * ILP:], partial[1:])), 0)


def _inner_sum(x):
    """x of shape (size1, size0), each row summed (the reduced axis is the contiguous one)."""
    size0 = x.shape[1]
    if size0 < VEC_LANES:
        return _row_sum(x.T)  # scalar_inner_sum
    vecs = size0 // VEC_LANES
    lanes = _row_sum(x[:, :vecs * VEC_LANES].reshape(x.shape[0], vecs, VEC_LANES).transpose(1, 0, 2))  # (size1, 8)
    # final_acc = the scalar tail from zero, then += each lane
    size1 = x.shape[0]
    if size1 == 1:
        return _add_accumulate(_concatenate((x[:, vecs * VEC_LANES:], lanes), axis=1), axis=1)[:, -1]
    # NOTE: as C-ordered columns, reduced one row after another (accumulate along a short inner axis runs numpy's loop
    # once per row: 3x slower); a concatenate of transposes would be F-ordered, and reduce would pair its terms
    tail = size0 - vecs * VEC_LANES
    columns = np.empty((tail + VEC_LANES, size1), x.dtype)
    columns[:tail] = x[:, vecs * VEC_LANES:].T
    columns[tail:] = lanes.T
    return _add_reduce(columns, axis=0)


def _outer_sum(x):
    """x of shape (size0, ..., size1) summed along axis 0 (the kept last axis is the contiguous one; the middle
    axes are outer loops, each one the same 2-d kernel)."""
    size1 = x.shape[-1]
    if size1 < VEC_LANES:  # scalar_outer_sum: groups of ILP columns use multi_row_sum, the rest row_sum
        grouped = size1 // ILP * ILP
    else:  # vectorized_outer_sum: groups of ILP vectors use multi_row_sum, the rest row_sum
        grouped = size1 // (ILP * VEC_LANES) * (ILP * VEC_LANES)
    if grouped == size1:
        return _multi_row_sum(x)
    if grouped == 0:
        return _row_sum(x)
    return _concatenate((_multi_row_sum(x[..., :grouped]), _row_sum(x[..., grouped:])), axis=-1)


def _flat_total(flat):
    """The sum of a contiguous 1-d float32 array of 1..SERIAL_LIMIT elements: _inner_sum(flat.reshape(1, -1))'s
    order, unrolled for this layout (rows of 4 x 8 lanes; at most 1024 rows, so levels of 16 rows and at most three
    of them) into about eight numpy calls."""
    n = flat.shape[0]
    vecs = n >> 3
    if vecs == 0:  # scalar_inner_sum: one chain
        return _add_accumulate(flat[_SCALAR_ORDERS[n]])[-1]
    rows = vecs >> 2
    if rows == 0:
        lanes = _add_reduce(flat[:vecs * VEC_LANES].reshape(vecs, VEC_LANES), axis=0)
    else:
        body = flat[:rows * ROW].reshape(rows, ROW)
        chunks = rows >> MIN_LEVEL_POWER  # rows <= 1024: ceil(log2(rows)) // 4 <= 2, so the level size is 16
        if chunks == 0:
            acc = _add_reduce(body, axis=0)
        else:
            level = _add_reduce(body[:chunks << MIN_LEVEL_POWER].reshape(chunks, 1 << MIN_LEVEL_POWER, ROW), axis=1)
            acc = _add_reduce(body[chunks << MIN_LEVEL_POWER:], axis=0)  # level 0's tail rows, from +0
            if chunks < 1 << MIN_LEVEL_POWER:  # level 1 holds every chunk
                acc += _add_reduce(level, axis=0)
            else:  # chunks <= 64: level 1 holds the last chunks % 16, level 2 the sums of 16 chunks each
                full = chunks >> MIN_LEVEL_POWER
                acc += _add_reduce(level[full << MIN_LEVEL_POWER:], axis=0)
                acc += _add_reduce(_add_reduce(level[:full << MIN_LEVEL_POWER].reshape(full, 1 << MIN_LEVEL_POWER, ROW),
                                               axis=1), axis=0)
        # row_sum: the first row's partial, the leftover vectors, the other three partials
        if vecs & 3:
            acc = _concatenate((acc[:VEC_LANES], flat[rows * ROW:vecs * VEC_LANES], acc[VEC_LANES:]))
        lanes = _add_reduce(acc.reshape(-1, VEC_LANES), axis=0)
    if n & 7:  # the scalar tail from zero, then each lane
        return _add_accumulate(_concatenate((flat[vecs * VEC_LANES:], lanes)))[-1]
    return _add_accumulate(lanes)[-1]


# inf - inf is nan, as torch's, without a warning; the decorator form costs half the `with` statement's time
_quiet = np.errstate(invalid="ignore", over="ignore")
_quiet_flat_total, _quiet_outer_sum, _quiet_inner_sum = _quiet(_flat_total), _quiet(_outer_sum), _quiet(_inner_sum)


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
    ndim = a.ndim
    if dims is None:
        if a.dtype is _F32 and 0 < a.size <= SERIAL_LIMIT and a.flags.c_contiguous:  # a loss's sum: the common case
            # ATen's sums start from +0: an all-zero sum is +0
            total = (_flat_total if is_silenced() else _quiet_flat_total)(a if ndim == 1 else a.reshape(-1)) + _ZERO
            if keepdim:
                return total.reshape((1,) * ndim) if ndim else np.array(total)
            return total
        dims = tuple(range(ndim))
    elif type(dims) is not tuple:
        dims = (dims % max(ndim, 1),)
    elif min(dims, default=0) < 0 or max(dims, default=0) >= max(ndim, 1):
        dims = tuple(d % max(ndim, 1) for d in dims)
    # (a 0-d array summed over dim 0 is left to the general path, which makes its result a scalar even with keepdim)
    if a.dtype is _F32 and 0 < a.size <= SERIAL_LIMIT and a.flags.c_contiguous and (ndim or not dims):
        shape = a.shape
        kept = ndim - len(set(dims))
        if not kept or all(shape[d] == 1 for d in range(ndim) if d not in dims):  # the common case: one contiguous run
            total = _quiet_flat_total(a.reshape(-1)) + _ZERO  # ATen's sums start from +0: an all-zero sum is +0
            if keepdim:
                return total.reshape((1,) * ndim) if ndim else np.array(total)
            return total.reshape((1,) * kept) if kept else total
        # the summed axes (of more than one element) all before, or all after, the kept ones: one 2-d kernel
        summed = [d for d in range(ndim) if shape[d] != 1 and d in dims]
        others = [d for d in range(ndim) if shape[d] != 1 and d not in dims]
        if summed and (summed[-1] < others[0] or others[-1] < summed[0]):
            rows = 1
            for d in summed:
                rows *= shape[d]
            flat = (_quiet_outer_sum(a.reshape(rows, -1)) if summed[-1] < others[0]
                    else _quiet_inner_sum(a.reshape(-1, rows)))
            return _shaped(a, dims, keepdim, flat)
    all_dims = tuple(range(ndim))
    if a.dtype != np.float32 or a.size == 0:
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
    return _shaped(a, dims, keepdim, flat)


def _shaped(a, dims, keepdim, flat):
    """The kept sums `flat` in the result's shape, from +0 as ATen's sums start (an all-zero sum is +0)."""
    kept = [n for d, n in enumerate(a.shape) if d not in dims]
    out = np.asarray(flat, dtype=a.dtype).reshape(kept)
    if keepdim:
        out = out.reshape([1 if d in dims else n for d, n in enumerate(a.shape)])
    out = out + a.dtype.type(0)
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
