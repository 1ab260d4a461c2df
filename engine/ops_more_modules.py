"""Op table rows for nn.PixelShuffle / PixelUnshuffle, AdaptiveMaxPool1d / 2d, Bilinear and RReLU: the primitives
PyTorch gives a backward node of their own (PixelShuffleBackward0, AdaptiveMaxPool2DBackward0, TrilinearBackward0,
RreluWithNoiseBackward0), each forward computed as ATen's CPU kernel computes it (the same bits); and ATen's C++
`tensor + double` (AddBackward1), which margin_ranking_loss and triplet_margin_loss are built with.

Their functional forms and checks are in engine/nn/functional_more.py, the modules in engine/nn/more_modules.py.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .graphed import Graphed
from .graphed import op as _graphed_op
from .linalg_ops import _mm
from .op_table import Params, defop
from .ops_shape import _scatter


# ---------------------------------------------------------------- pixel shuffle
def pixel_shuffle(x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel c r^2 + i r + j goes to row h r + i, column w r + j."""
    *lead, c, h, w = x.shape
    oc = c // (r * r)
    y = x.reshape(*lead, oc, r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(y).reshape(*lead, oc, h * r, w * r)


def pixel_unshuffle(x, r):
    """The inverse: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    *lead, c, h, w = x.shape
    oh, ow = h // r, w // r
    y = x.reshape(*lead, c, oh, r, ow, r)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(y).reshape(*lead, c * r * r, oh, ow)


def _pixel_shuffle_vjp(g, ans, x, r):
    # PyTorch's derivative is the other op (a PixelUnshuffleBackward0 node under create_graph)
    return _graphed_op("pixel_unshuffle", (g,), (r,)) if type(g) is Graphed else pixel_unshuffle(g, r)


def _pixel_unshuffle_vjp(g, ans, x, r):
    return _graphed_op("pixel_shuffle", (g,), (r,)) if type(g) is Graphed else pixel_shuffle(g, r)


defop("pixel_shuffle", "PixelShuffleBackward0", "pixel_shuffle", pixel_shuffle,
      (_pixel_shuffle_vjp, r"\text{unshuffle}"), saves=False, params=Params("keywords", ("upscale_factor",)))

defop("pixel_unshuffle", "PixelUnshuffleBackward0", "pixel_unshuffle", pixel_unshuffle,
      (_pixel_unshuffle_vjp, r"\text{shuffle}"), saves=False, params=Params("keywords", ("downscale_factor",)))


# ---------------------------------------------------------------- adaptive max pooling
def adaptive_bounds(size, out):
    """ATen's adaptive windows along one dim: [floor(i size / out), ceil((i + 1) size / out)) for each output i."""
    i = np.arange(out, dtype=np.int64)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _window_argmax(v, starts, ends, key=None):
    """Per window of the last axis: the position ATen's scan keeps (the first maximum, or the last NaN), its value,
    and its key. `key` (the row each candidate came from, when columns are reduced second) breaks ties as ATen's
    row-major scan does: a smaller row first, and among NaNs the larger row. A loop over the offsets in a window, or
    over the windows when they are fewer (one global window of 10**6 elements: one step, not 10**6)."""
    if len(starts) < int((ends - starts).max(initial=0)):
        return _window_by_window(v, starts, ends, key)
    return _window_by_offset(v, starts, ends, key)


def _window_by_offset(v, starts, ends, key):
    """_window_argmax one offset in the window at a time, every window at once."""
    best = v[..., starts]
    pos = np.broadcast_to(starts, best.shape).copy()
    bkey = None if key is None else key[..., starts]
    last = v.shape[-1] - 1
    for t in range(1, int((ends - starts).max(initial=0))):
        at = starts + t
        ok = at < ends
        cand_at = np.minimum(at, last)
        cand = v[..., cand_at]
        cnan = np.isnan(cand)
        if key is None:
            take = ok & ((cand > best) | cnan)
        else:
            ckey = key[..., cand_at]
            take = ok & np.where(np.isnan(best), cnan & (ckey >= bkey),
                                 cnan | (cand > best) | ((cand == best) & (ckey < bkey)))
            bkey = np.where(take, ckey, bkey)
        best = np.where(take, cand, best)
        pos = np.where(take, at, pos)
    return best, pos, bkey


def _window_by_window(v, starts, ends, key):
    """_window_argmax one window at a time, each reduced whole."""
    shape = v.shape[:-1] + (len(starts),)
    best, pos = np.empty(shape, v.dtype), np.empty(shape, np.int64)
    bkey = None if key is None else np.empty(shape, key.dtype)
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        seg = v[..., s:e]
        nan = np.isnan(seg)
        has_nan = nan.any(axis=-1, keepdims=True)
        if key is None:  # np.argmax: the first maximum (a NaN's place is taken by the last NaN below)
            first, pick = np.argmax(seg, axis=-1), nan
        else:  # the maxima (or the NaNs) with the smallest key first (the largest among NaNs)
            k = key[..., s:e]
            pick = np.where(has_nan, nan, seg == np.max(np.where(nan, -np.inf, seg), axis=-1, keepdims=True))
            low = np.min(np.where(pick, k, np.iinfo(np.int64).max), axis=-1, keepdims=True)
            first = np.argmax(pick & (k == low), axis=-1)
            pick = pick & (k == np.max(np.where(pick, k, -1), axis=-1, keepdims=True))
        last = seg.shape[-1] - 1 - np.argmax(pick[..., ::-1], axis=-1)
        j = np.where(has_nan[..., 0], last, first)
        pos[..., i] = s + j
        best[..., i] = np.take_along_axis(seg, j[..., None], axis=-1)[..., 0]
        if key is not None:
            bkey[..., i] = np.take_along_axis(k, j[..., None], axis=-1)[..., 0]
    return best, pos, bkey


def _rows_first(h, w, oh, ow):
    """Reduce the rows (H) before the columns when that keeps the intermediate smaller: (OH, W) < (H, OW)."""
    return oh * w < h * ow


def adaptive_max_indices(x, output_size):
    """Each output's maximum as its flat position in its (H, W) plane, as ATen's kernel picks it (strict >: the
    first maximum in row-major order; a NaN always wins, so the last NaN). Reduced one axis at a time."""
    h, w = x.shape[-2:]
    oh, ow = output_size
    hs, he = adaptive_bounds(h, oh)
    ws, we = adaptive_bounds(w, ow)
    if not _rows_first(h, w, oh, ow):  # columns first: each row's first maximum, then the first row holding it
        vals, col, _ = _window_argmax(x, ws, we)  # (..., H, OW)
        _, row, _ = _window_argmax(np.swapaxes(vals, -1, -2), hs, he)  # (..., OW, OH)
        row = np.swapaxes(row, -1, -2)
        col = np.take_along_axis(col, row, axis=-2)
    else:  # rows first, then the columns with the rows as tie-breaking key
        vals, row, _ = _window_argmax(np.swapaxes(x, -1, -2), hs, he)  # (..., W, OH)
        vals, row = np.swapaxes(vals, -1, -2), np.swapaxes(row, -1, -2)  # (..., OH, W)
        _, col, row = _window_argmax(vals, ws, we, key=row)
    return row * w + col


def adaptive_max_forward(x, output_size):
    idx = adaptive_max_indices(x, output_size)
    flat = x.reshape(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))
    return np.take_along_axis(flat, idx.reshape(idx.shape[:-2] + (idx.shape[-2] * idx.shape[-1],)), axis=-1
                              ).reshape(idx.shape)


def adaptive_max_vjp(g, ans, x, output_size):
    """Each output's gradient added to its maximum's cell, in output order (ATen's `+=` loop)."""
    x = x.t._data if type(x) is Graphed else x
    for i, n in enumerate(g.shape[1:], 1):  # PyTorch's backward refuses an empty output, as its forward allows it
        if n == 0:
            raise RuntimeError(f"adaptive_max_pool2d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {list(g.shape)} with dimension {i} "
                               "being empty")
    idx = adaptive_max_indices(x, output_size)
    plane = x.shape[-2] * x.shape[-1]
    planes = math.prod(x.shape[:-2])
    flat = (idx.reshape(planes, idx.shape[-2] * idx.shape[-1]) + (np.arange(planes, dtype=np.int64) * plane)[:, None]
            ).reshape(-1)
    if type(g) is Graphed:  # create_graph: a recorded scatter-add, whose own VJP gathers
        return _scatter((x.size,), g.dtype, (flat,), g.reshape(-1), accumulate=True, kind="index").reshape(x.shape)
    out = np.zeros(x.size, dtype=g.dtype)
    np.add.at(out, flat, np.asarray(g).reshape(-1))
    return out.reshape(x.shape)


def _adaptive_max_sizes(arrays, params):
    x = np.shape(arrays[0])
    (oh, ow), (h, w) = params[0], x[-2:]
    middle = (oh, w) if _rows_first(h, w, oh, ow) else (h, ow)
    return (x[:-2] + (oh, ow), x[:-2] + middle)


defop("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", "adaptive_max_pool", adaptive_max_forward,
      (adaptive_max_vjp, r"\mathbb{1}[a=\max_{window}]"), needs=("a",), params=Params("keywords", ("output_size",)),
      sizes=_adaptive_max_sizes)


# ---------------------------------------------------------------- _trilinear (nn.Bilinear)
NAIVE_BMM_TERMS = 400  # ATen's bmm sums products one by one below this contraction x rows x columns (else BLAS)
# NOTE: ATen loops over the unrolled dim one slice at a time; here slices go together up to this many elements of
# their first product (the same sums, fewer numpy calls), and one at a time past it (the backward's g * W is big).
UNROLL_CHUNK_ELEMENTS = 1 << 18


def _as_torch_views(m):
    """A batch of matrices with a size-1 matrix dim strided as PyTorch's views stride it (the other dim's extent):
    numpy's stride there is arbitrary, and MKL's summation order follows the layout the strides imply."""
    b, rows, cols = m.shape
    if rows != 1 and cols != 1:
        return m
    s0, s1, s2 = m.strides
    if cols == 1:
        s2 = s1 * rows
    else:
        s1 = s2 * cols
    return as_strided(m, m.shape, (s0, s1, s2), writeable=False)


def _naive_bmm(left, right):
    """ATen's bmm kernel for small products: each output summed from 0 in k order, in the op math type."""
    b, m, k = left.shape
    dt = np.result_type(left, right)
    acc_dt = np.float32 if dt == np.float16 else dt
    acc = np.zeros((b, m, right.shape[2]), dtype=acc_dt)
    for i in range(k):
        acc += left[:, :, i, None].astype(acc_dt, copy=False) * right[:, None, i, :].astype(acc_dt, copy=False)
    return acc.astype(dt, copy=False)


def _blas_bmm(left, right):
    """Larger products, as the bmm inside _trilinear computes them: one mm per matrix (engine/linalg_ops.py's,
    MKL called as ATen's addmm calls it), each operand read where it lies."""
    dt = np.result_type(left, right)
    if dt.kind != "f" or dt == np.float16 or not len(left):
        return np.matmul(left, right)
    left, right = _as_torch_views(left), _as_torch_views(right)
    return np.stack([_mm(left[i], right[i]) for i in range(len(left))])


def _sumproduct_pair(left, right, sum_dims):
    """ATen's sumproduct_pair (keepdim): (left * right) summed over sum_dims by one bmm between permutes. Both
    operands carry a leading axis of unrolled slices (each slice its own bmm in ATen, on its own memory)."""
    if not sum_dims:
        return left * right
    dims = left.ndim - 1
    lro, lo, ro, sum_size = [], [], [], 1
    for i in range(dims):
        sl, sr = left.shape[i + 1] != 1, right.shape[i + 1] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i + 1]
            elif sl:  # a dim only one side has is summed right away
                left = left.sum(axis=i + 1, keepdims=True)
            elif sr:
                right = right.sum(axis=i + 1, keepdims=True)
        elif sl and sr:
            lro.append(i)
        elif sl:
            lo.append(i)
        else:
            ro.append(i)
    u = left.shape[0]
    lro_size = math.prod(left.shape[i + 1] for i in lro)
    lo_size = math.prod(left.shape[i + 1] for i in lo)
    ro_size = math.prod(right.shape[i + 1] for i in ro)
    out_size = ([left.shape[i + 1] for i in lro] + [left.shape[i + 1] for i in lo] + [1] * len(sum_dims)
                + [right.shape[i + 1] for i in ro])
    order, rorder = lro + lo + list(sum_dims) + ro, lro + list(sum_dims) + ro + lo
    operm = [0] * dims
    for j, i in enumerate(order):
        operm[i] = j
    if sum_size * lo_size * ro_size < NAIVE_BMM_TERMS:  # every slice's small products in one pass
        lmat = np.transpose(left, [0] + [i + 1 for i in order]).reshape(u * lro_size, lo_size, sum_size)
        rmat = np.transpose(right, [0] + [i + 1 for i in rorder]).reshape(u * lro_size, sum_size, ro_size)
        result = _naive_bmm(lmat, rmat)
    else:  # slice by slice: each operand reshaped from its own memory, as ATen's (a view where one fits)
        result = np.concatenate([_blas_bmm(np.transpose(left[k], order).reshape(lro_size, lo_size, sum_size),
                                           np.transpose(right[k], rorder).reshape(lro_size, sum_size, ro_size))
                                 for k in range(u)])
    return np.transpose(result.reshape([u] + out_size), [0] + [j + 1 for j in operm])


def _unrolled(x, dim, sliced, start, stop):
    """Slices start..stop of x.narrow(dim, k, 1) stacked on a new axis 0 (a dim x lacks: its one slice, repeated)."""
    if sliced:
        return np.expand_dims(np.moveaxis(x, dim, 0)[start:stop], dim + 1)
    return np.broadcast_to(x[None], (stop - start,) + x.shape)


def _pair_terms(lshape, rshape, sum_dims):
    """Contraction x rows x columns of the bmm sumproduct_pair runs for operands of these shapes (0: a product)."""
    if not sum_dims:
        return 0
    terms = 1
    for i, (a, b) in enumerate(zip(lshape, rshape)):
        if i in sum_dims:
            terms *= a if a != 1 and b != 1 else 1  # (a dim one side lacks is summed before the bmm)
        elif (a != 1) != (b != 1):  # a dim of one side only: the bmm's rows or columns
            terms *= max(a, b)
    return terms


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """ATen's _trilinear: (i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim), as
    its kernel computes it: for each slice k of unroll_dim, sumproduct_pair(sumproduct_pair(i1, i2), i3), the
    slices written (or, when unroll_dim is summed, added in k order) into zeros."""
    total = i1.ndim + len(expand1)
    sum12, sum23, out_size, unroll_size = [], [], [], 0
    for i in range(total):
        s = 0
        if i in expand1:
            i1 = np.expand_dims(i1, i)
        else:
            s = i1.shape[i]
        if i in expand2:
            i2 = np.expand_dims(i2, i)
        else:
            s = i2.shape[i]
        if i in expand3:
            i3 = np.expand_dims(i3, i)
            if i in sumdim and i != unroll_dim:
                sum12.append(i)
        else:
            s = i3.shape[i]
            if i in sumdim and i != unroll_dim:
                sum23.append(i)
        out_size.append(1 if i in sumdim else s)
        if i == unroll_dim:
            unroll_size = s
    out = np.zeros(out_size, dtype=np.result_type(i1, i2, i3))
    if not (i1.size and i2.size and i3.size and unroll_size):
        return out.reshape([n for i, n in enumerate(out_size) if i not in sumdim])
    one = [tuple(1 if d == unroll_dim else n for d, n in enumerate(t.shape)) for t in (i1, i2, i3)]
    first = tuple(1 if d in sum12 else max(a, b) for d, (a, b) in enumerate(zip(one[0], one[1])))
    # NOTE: MKL's sums depend on the operands' alignment: a slice whose product goes to BLAS gets arrays of its own
    # (fresh, as ATen's per-slice tensors are), so the slices go one at a time then
    blas = max(_pair_terms(one[0], one[1], sum12), _pair_terms(first, one[2], sum23)) >= NAIVE_BMM_TERMS
    chunk = 1 if blas else max(1, UNROLL_CHUNK_ELEMENTS // max(math.prod(first), 1))
    summed = unroll_dim in sumdim
    lead = (slice(None),) * unroll_dim
    for start in range(0, unroll_size, chunk):
        stop = min(start + chunk, unroll_size)
        a, b, c = (_unrolled(t, unroll_dim, unroll_dim not in e, start, stop)
                   for t, e in ((i1, expand1), (i2, expand2), (i3, expand3)))
        buf = _sumproduct_pair(_sumproduct_pair(a, b, sum12), c, sum23)
        if not summed:  # output.narrow(unroll_dim, k, 1).add_(buf): zeros plus each slice
            part = out[lead + (slice(start, stop),)]
            np.add(part, np.moveaxis(buf, 0, unroll_dim + 1)[lead + (0,)], out=part)
        else:
            for k in range(stop - start):  # output.add_(buf), slice after slice
                np.add(out, buf[k], out=out)
    return out.reshape([n for i, n in enumerate(out_size) if i not in sumdim])


def _trilinear_call(i1, i2, i3, *params):
    if Graphed in (type(i1), type(i2), type(i3)):  # create_graph: the backward is _trilinear again (recorded)
        return _graphed_op("trilinear", (i1, i2, i3), params)
    return trilinear(i1, i2, i3, *params)


# ATen's _trilinear_backward: each input's gradient is a _trilinear of the other two and the output's gradient
def _trilinear_vjp1(g, ans, i1, i2, i3, e1, e2, e3, sd):
    return _trilinear_call(g, i2, i3, sd, e2, e3, e1)


def _trilinear_vjp2(g, ans, i1, i2, i3, e1, e2, e3, sd):
    return _trilinear_call(i1, g, i3, e1, sd, e3, e2)


def _trilinear_vjp3(g, ans, i1, i2, i3, e1, e2, e3, sd):
    return _trilinear_call(i1, i2, g, e1, e2, sd, e3)


def _trilinear_sizes(arrays, params):
    """The output and one slice's first product (slices go together only up to UNROLL_CHUNK_ELEMENTS)."""
    *expands, sumdim = params
    total = np.ndim(arrays[0]) + len(expands[0])
    shapes = []
    for a, expand in zip(arrays, expands):
        it = iter(np.shape(a))
        shapes.append([1 if i in expand else int(next(it, 1)) for i in range(total)])
    full = [max(s[i] for s in shapes) for i in range(total)]
    sum12 = {i for i in sumdim if i != 1 and i in expands[2]}
    first = tuple(1 if i in sum12 or i == 1 else max(shapes[0][i], shapes[1][i]) for i in range(total))
    return (tuple(n for i, n in enumerate(full) if i not in sumdim), first)


defop("trilinear", "TrilinearBackward0", "trilinear", trilinear, (_trilinear_vjp1, r"b\,c"), (_trilinear_vjp2, r"a\,c"),
      (_trilinear_vjp3, r"a\,b"), needs=("bc", "ac", "ab"),
      params=Params("hidden", ("expand1", "expand2", "expand3", "sumdim")), sizes=_trilinear_sizes)


# ---------------------------------------------------------------- rrelu_with_noise (nn.RReLU)
def rrelu_eval_slope(lower, upper, dtype):
    """Eval mode's slope: (lower + upper) / 2 in double, then the op math type (leaky_relu's negval)."""
    return np.asarray((float(lower) + float(upper)) / 2.0).astype(np.float32 if dtype == np.float16 else dtype)


def rrelu_forward(x, noise, lower, upper, training):
    """Training: x times its noise (the drawn slope where x <= 0, else 1). Eval: leaky_relu by the mean slope."""
    if training:
        return x * noise
    return np.where(x > 0, x, x * rrelu_eval_slope(lower, upper, x.dtype)).astype(x.dtype, copy=False)


def rrelu_vjp(g, ans, x, noise, lower, upper, training):
    x = x.t._data if type(x) is Graphed else x
    if training:  # noise * grad_output
        return noise * g
    return g * np.where(x > 0, np.ones((), x.dtype), rrelu_eval_slope(lower, upper, x.dtype).astype(x.dtype))


defop("rrelu_with_noise", "RreluWithNoiseBackward0", "rrelu", rrelu_forward,
      (rrelu_vjp, r"\mathbb{1}[a>0]+r\,\mathbb{1}[a\le 0]"), (None, ""), needs=("ab", ""),
      params=Params("keywords", ("lower", "upper", "training"),
                    defaults=(("lower", 0.125), ("upper", 1.0 / 3.0), ("training", False))))


# ---------------------------------------------------------------- add(Tensor, Scalar)
# ATen's C++ `tensor + double` (margin_ranking_loss's `+ margin`, pairwise_distance's `+ eps` in triplet_margin_loss):
# an AddBackward1 node, where Python's `tensor + 0.5` wraps the number in a tensor (AddBackward0)
defop("add_scalar", "AddBackward1", "+", lambda a, c: a + c, (lambda g, ans, a, c: g, "1"), saves=False,
      params=Params("right", ("other",), symbol="+"))
