"""Forwards and VJPs of the layer ops (convolution, pooling, normalisation, embedding) for the op table.

The `defop` lines stay in engine/ops.py; this module holds only their numpy. Convolution is im2col:
one strided window view of the (padded) input copied into a column matrix, then one matmul per group;
its input gradient is col2im, a loop over the kernel offsets adding strided slices. Spatial ops work in
2-D: a 1-D op is the 2-D one with height 1 (PyTorch's own conv1d/max_pool1d do the same).
`output_sizes` predicts the big allocations of each op for engine/limits.py before numpy makes them.
"""
from __future__ import annotations

import math
import weakref

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .graphed import Graphed
from .graphed import op as _graphed_op
from .graphed import raw as _raw


def _two(v, n):
    """A 1- or 2-element parameter as a 2-D one: (v,) -> (1 or 0, v) for 1-D ops."""
    v = tuple(v)
    return v if len(v) == 2 else ((n,) + v)


def _as2d(x):
    """(N, C, L) -> (N, C, 1, L); 4-D unchanged."""
    return x[:, :, None, :] if x.ndim == 3 else x


# ---------------------------------------------------------------- convolution
def conv_geometry(xshape, wshape, stride, padding, dilation):
    """Output spatial size for a conv; padding is ((lo, hi), ...) per spatial dim."""
    spatial = xshape[2:]
    k = wshape[2:]
    return tuple((spatial[i] + padding[i][0] + padding[i][1] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
                 for i in range(len(spatial)))


def _pad2d(x, pads, value=0.0):
    (t, b), (l, r) = pads
    if not (t or b or l or r):
        return x
    return np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=value)


def _conv_setup(x, w, stride, padding, dilation):
    one = x.ndim == 3
    x4, w4 = _as2d(x), _as2d(w)
    st, dl = _two(stride, 1), _two(dilation, 1)
    pads = tuple((q, q) for q in _two(padding, 0))
    oh, ow = conv_geometry(x4.shape, w4.shape, st, pads, dl)
    return one, x4, w4, st, pads, dl, oh, ow


def _batch_last(a):
    """(N, C, H, W) -> a contiguous (C, H, W, N) copy."""
    return np.ascontiguousarray(a.transpose(1, 2, 3, 0))


def _cols(x4, w4, groups, st, pads, dl, oh, ow):
    """im2col with the batch innermost: (G, Cg*KH*KW, OH*OW*N). Every window row is then a run of whole
    contiguous (OW, N) blocks, so the copy here and the col2im adds of the input gradient move long runs
    (the (N, C, ...) layout moves runs of OW elements: ~3x slower on LeNet's 8x8 maps), and the forward,
    the weight gradient and the input gradient are each one matmul over the whole batch."""
    n, c = x4.shape[:2]
    kh, kw = w4.shape[2:]
    (t, b), (le, r) = pads
    xt = np.zeros((c, x4.shape[2] + t + b, x4.shape[3] + le + r, n), dtype=x4.dtype)
    xt[:, t:t + x4.shape[2], le:le + x4.shape[3]] = x4.transpose(1, 2, 3, 0)
    s0, s1, s2, s3 = xt.strides
    win = as_strided(xt, (c, kh, kw, oh, ow, n), (s0, s1 * dl[0], s2 * dl[1], s1 * st[0], s2 * st[1], s3),
                     writeable=False)
    return np.ascontiguousarray(win).reshape(groups, (c // groups) * kh * kw, oh * ow * n)


_CONV_COLS: dict = {}  # id(output array) -> (weakref to it, its im2col): the weight gradient reuses the forward's
_CONV_COLS_KEPT = 8  # NOTE: only the latest few: an eval loop holding many outputs must not pin their im2cols


def _keep_cols(out, cols):
    key = id(out)
    _CONV_COLS[key] = (weakref.ref(out, lambda _: _CONV_COLS.pop(key, None)), cols)
    while len(_CONV_COLS) > _CONV_COLS_KEPT:
        _CONV_COLS.pop(next(iter(_CONV_COLS)), None)
    return out


def _forward_cols(ans, x4, w4, groups, st, pads, dl, oh, ow):
    entry = _CONV_COLS.get(id(ans))
    if entry is not None and entry[0]() is ans:
        return entry[1]
    return _cols(x4, w4, groups, st, pads, dl, oh, ow)


def _grad_batch_last(g, groups, o):
    """The output gradient as (G, Og, OH*OW*N), the layout of the matmuls' output."""
    g4 = _as2d(g)
    return _batch_last(g4).reshape(groups, o // groups, -1)


def conv_forward(x, w, b, stride, padding, dilation, groups):
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    n, o = x4.shape[0], w4.shape[0]
    cols = _cols(x4, w4, groups, st, pads, dl, oh, ow)
    out = np.matmul(w4.reshape(groups, o // groups, -1), cols).reshape(o, oh, ow, n)
    if b is not None:
        out += b.reshape(o, 1, 1, 1).astype(out.dtype, copy=False)
    out = np.ascontiguousarray(out.transpose(3, 0, 1, 2))
    return _keep_cols(out[:, :, 0, :] if one else out, cols)


def conv_vjp_input(g, ans, x, w, b, stride, padding, dilation, groups):
    if type(g) is Graphed:
        return _conv_graphed_backward(g, ans, x, w, b, stride, padding, dilation, groups)[0]
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    n, c, h, wd = x4.shape
    o, cg, kh, kw = w4.shape
    wt = np.swapaxes(w4.reshape(groups, o // groups, -1), 1, 2)  # G, Cg*KH*KW, Og
    dcols = np.matmul(wt, _grad_batch_last(g, groups, o)).reshape(c, kh, kw, oh, ow, n)
    (t, bt), (le, r) = pads
    dxt = np.zeros((c, h + t + bt, wd + le + r, n), dtype=dcols.dtype)  # col2im: one strided add per offset
    for i in range(kh):
        hs = i * dl[0]
        for j in range(kw):
            ws = j * dl[1]
            dxt[:, hs:hs + st[0] * (oh - 1) + 1:st[0], ws:ws + st[1] * (ow - 1) + 1:st[1]] += dcols[:, i, j]
    dx = dxt[:, t:t + h, le:le + wd].transpose(3, 0, 1, 2)
    return dx[:, :, 0, :] if one else dx


def conv_vjp_weight(g, ans, x, w, b, stride, padding, dilation, groups):
    if type(g) is Graphed:
        return _conv_graphed_backward(g, ans, x, w, b, stride, padding, dilation, groups)[1]
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    cols = _forward_cols(ans, x4, w4, groups, st, pads, dl, oh, ow)
    dw = np.matmul(_grad_batch_last(g, groups, w4.shape[0]), np.swapaxes(cols, 1, 2))  # G, Og, Cg*KH*KW
    return dw.reshape(w.shape)


def conv_vjp_bias(g, ans, x, w, b, *params):
    return g.sum(axis=(0,) + tuple(range(2, g.ndim)))


def _conv_composed(x, w, b, stride, padding, dilation, groups):
    """The convolution in table ops: im2col as one strided slice of the padded input per kernel offset, stacked,
    then one matmul per group, in the (N, G, Cg*KH*KW, OH*OW) layout."""
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    n, c = x4.shape[:2]
    o, kh, kw = w4.shape[0], w4.shape[2], w4.shape[3]
    parts = list(_offsets(_pad2d(x4, pads), (kh, kw), st, dl, oh, ow))  # each N C OH OW, row-major offsets
    cols = np.stack(parts, axis=2).reshape(n, groups, (c // groups) * kh * kw, oh * ow)
    out = np.matmul(w4.reshape(groups, o // groups, -1), cols).reshape(n, o, oh, ow)
    if b is not None:
        out = out + b.reshape(1, o, 1, 1)
    return out[:, :, 0, :] if one else out


_CONV_GRAPHED = [None]  # (g, ans, grads): one node's input and weight VJPs share one pass


def _conv_graphed_backward(g, ans, x, w, b, *params):
    memo = _CONV_GRAPHED[0]
    if memo is not None and memo[0] is g and memo[1] is ans:
        return memo[2]
    from .graphed import vjps_by_decomposition

    # NOTE: im2col is an as_strided view and col2im adds in place: under create_graph the convolution's
    # gradients are those of its composition (slices, stack, matmul), so they are differentiable again.
    grads = vjps_by_decomposition(lambda xx, ww, bb: _conv_composed(xx, ww, bb, *params), g, (x, w, b))
    _CONV_GRAPHED[0] = (g, ans, grads)
    return grads


# ---------------------------------------------------------------- pooling
def pool_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_setup(x, kernel, stride, padding, dilation, ceil_mode, value):
    """Padded 4-D input (right side extended for ceil_mode) and the output size."""
    x4 = x if x.ndim == 4 else x[None]
    k, s, p, d = kernel, stride, padding, dilation
    h, w = x4.shape[2:]
    oh = pool_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    need_h = (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1
    pads = ((p[0], max(need_h - h - p[0], 0)), (p[1], max(need_w - w - p[1], 0)))
    xp = _pad2d(x4, pads, value)
    return x4, xp, pads, oh, ow


def _offsets(xp, kernel, stride, dilation, oh, ow):
    """The (N, C, OH, OW) strided slice of a padded input under each kernel offset, in row-major order."""
    for i in range(kernel[0]):
        hs = i * dilation[0]
        for j in range(kernel[1]):
            ws = j * dilation[1]
            yield xp[:, :, hs:hs + stride[0] * (oh - 1) + 1:stride[0], ws:ws + stride[1] * (ow - 1) + 1:stride[1]]


def _offset_keys(kernel, stride, dilation, oh, ow):
    """The keys of `_offsets`' slices (N, C, OH, OW), row-major."""
    for i in range(kernel[0]):
        hs = i * dilation[0]
        for j in range(kernel[1]):
            ws = j * dilation[1]
            yield (slice(None), slice(None), slice(hs, hs + stride[0] * (oh - 1) + 1, stride[0]),
                   slice(ws, ws + stride[1] * (ow - 1) + 1, stride[1]))


def _col2im_graphed(dcols, shape, kernel, stride, dilation, oh, ow):
    """create_graph: each kernel offset's (N, C, OH, OW) gradient placed in its strided slice of zeros of `shape`
    (a recorded scatter each), summed."""
    from .ops import _scatter

    total = None
    for k, key in enumerate(_offset_keys(kernel, stride, dilation, oh, ow)):
        part = _scatter(shape, dcols.dtype, key, dcols[:, :, k // kernel[1], k % kernel[1]])
        total = part if total is None else total + part
    return total


def _max_pool_graphed_vjp(g, ans, x, kernel, stride, padding, dilation, ceil_mode):
    """create_graph: g times each kernel offset's first-maximum mask (constants, from the values), placed back."""
    x, ans = _raw(x), _raw(ans)
    x4, xp, pads, oh, ow = _pool_setup(x, kernel, stride, padding, dilation, ceil_mode, -np.inf)
    g4 = g if g.ndim == 4 else g[None]
    a4 = ans if ans.ndim == 4 else ans[None]
    free = np.ones(a4.shape, dtype=bool)
    hits = []
    for part in _offsets(xp, kernel, stride, dilation, oh, ow):
        hit = (part == a4) & free
        free ^= hit
        hits.append(hit)
    dcols = np.stack([g4 * hit for hit in hits], axis=2).reshape(a4.shape[:2] + tuple(kernel) + a4.shape[2:])
    dx = _col2im_graphed(dcols, xp.shape, kernel, stride, dilation, oh, ow)
    dx = dx[:, :, pads[0][0]:pads[0][0] + x4.shape[2], pads[1][0]:pads[1][0] + x4.shape[3]]
    return dx if x.ndim == 4 else dx[0]


def _avg_pool_graphed_vjp(g, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """create_graph: every kernel offset gets the same g / divisor, placed back by recorded scatters."""
    x4, xp, pads, oh, ow = _pool_setup(_raw(x), kernel, stride, padding, (1, 1), ceil_mode, 0.0)
    g4 = g if g.ndim == 4 else g[None]
    gd = g4 / _avg_div(x4, kernel, stride, padding, oh, ow, count_include_pad, divisor_override, g.dtype)
    dcols = np.stack([gd] * (kernel[0] * kernel[1]), axis=2).reshape(gd.shape[:2] + tuple(kernel) + gd.shape[2:])
    dx = _col2im_graphed(dcols, xp.shape, kernel, stride, (1, 1), oh, ow)
    dx = dx[:, :, pads[0][0]:pads[0][0] + x4.shape[2], pads[1][0]:pads[1][0] + x4.shape[3]]
    return dx if x.ndim == 4 else dx[0]


def max_pool_forward(x, kernel, stride, padding, dilation, ceil_mode):
    # NOTE: one np.maximum per kernel offset over strided slices: ~10x faster than reducing a window view.
    x4, xp, pads, oh, ow = _pool_setup(x, kernel, stride, padding, dilation, ceil_mode, -np.inf)
    parts = _offsets(xp, kernel, stride, dilation, oh, ow)
    out = np.array(next(parts))
    for part in parts:
        np.maximum(out, part, out=out)
    return out if x.ndim == 4 else out[0]


def max_pool_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """Which kernel offset holds each window's (first) maximum: (N, C, OH, OW) ints."""
    x4, xp, pads, oh, ow = _pool_setup(x, kernel, stride, padding, dilation, ceil_mode, -np.inf)
    parts = _offsets(xp, kernel, stride, dilation, oh, ow)
    best = np.array(next(parts))
    arg = np.zeros(best.shape, dtype=np.intp)
    for k, part in enumerate(parts, 1):
        more = part > best
        np.copyto(best, part, where=more)
        arg[more] = k
    return x4, pads, arg


def max_pool_vjp(g, ans, x, kernel, stride, padding, dilation, ceil_mode):
    if type(g) is Graphed:
        return _max_pool_graphed_vjp(g, ans, x, kernel, stride, padding, dilation, ceil_mode)
    # Each window's gradient goes to its first maximum (PyTorch's index), found by comparing every kernel
    # offset's strided slice with the forward's output: a few whole-array calls per offset, no window copies.
    x4, xp, pads, oh, ow = _pool_setup(x, kernel, stride, padding, dilation, ceil_mode, -np.inf)
    g4 = g if g.ndim == 4 else g[None]
    a4 = ans if ans.ndim == 4 else ans[None]
    dxp = np.zeros(xp.shape, dtype=g.dtype)
    # windows apart (LeNet's 2x2/2): each cell has one window, so a multiply writes it (no masked add)
    disjoint = all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))
    taken = None
    slices = zip(_offsets(xp, kernel, stride, dilation, oh, ow), _offsets(dxp, kernel, stride, dilation, oh, ow))
    for part, dpart in slices:
        hit = part == a4
        if taken is None:
            taken = hit.copy()
        else:
            hit &= ~taken
            taken |= hit
        if disjoint:
            np.multiply(g4, hit, out=dpart)
        else:
            dpart += g4 * hit
    n, c, h, w = x4.shape
    dx = dxp[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w]
    return dx if x.ndim == 4 else dx[0]


def _avg_divisors(size, k, s, p, oh, count_include_pad):
    """Per output position along one axis: the number of cells PyTorch divides by."""
    start = np.arange(oh) * s - p
    end = np.minimum(start + k, size + p)
    span = end - start
    if not count_include_pad:
        span = np.minimum(end, size) - np.maximum(start, 0)
    return span


def avg_pool_forward(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x4, xp, pads, oh, ow = _pool_setup(x, kernel, stride, padding, (1, 1), ceil_mode, 0.0)
    parts = _offsets(xp, kernel, stride, (1, 1), oh, ow)
    total = np.array(next(parts))
    for part in parts:
        total += part
    out = total / _avg_div(x4, kernel, stride, padding, oh, ow, count_include_pad, divisor_override, x.dtype)
    return out if x.ndim == 4 else out[0]


def _avg_div(x4, kernel, stride, padding, oh, ow, count_include_pad, divisor_override, dt):
    if divisor_override:
        return np.asarray(divisor_override, dtype=dt)
    dh = _avg_divisors(x4.shape[2], kernel[0], stride[0], padding[0], oh, count_include_pad)
    dw = _avg_divisors(x4.shape[3], kernel[1], stride[1], padding[1], ow, count_include_pad)
    return (dh[:, None] * dw[None, :]).astype(dt)


def avg_pool_vjp(g, ans, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if type(g) is Graphed:
        return _avg_pool_graphed_vjp(g, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    x4, xp, pads, oh, ow = _pool_setup(x, kernel, stride, padding, (1, 1), ceil_mode, 0.0)
    g4 = g if g.ndim == 4 else g[None]
    gd = g4 / _avg_div(x4, kernel, stride, padding, oh, ow, count_include_pad, divisor_override, g.dtype)
    dxp = np.zeros(xp.shape, dtype=g.dtype)
    for part in _offsets(dxp, kernel, stride, (1, 1), oh, ow):
        part += gd
    n, c, h, w = x4.shape
    dx = dxp[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w]
    return dx if x.ndim == 4 else dx[0]


def _adaptive_matrix(size, out, dt):
    """Rows average PyTorch's adaptive bins: [floor(i*size/out), ceil((i+1)*size/out))."""
    m = np.zeros((out, size), dtype=dt)
    for i in range(out):
        s = (i * size) // out
        e = -((-(i + 1) * size) // out)
        m[i, s:e] = 1.0 / (e - s)
    return m


def adaptive_avg_forward(x, output_size):
    ah = _adaptive_matrix(x.shape[-2], output_size[0], x.dtype)
    aw = _adaptive_matrix(x.shape[-1], output_size[1], x.dtype)
    return np.matmul(np.matmul(ah, x), aw.T)


def adaptive_avg_vjp(g, ans, x, output_size):
    ah = _adaptive_matrix(x.shape[-2], output_size[0], g.dtype)
    aw = _adaptive_matrix(x.shape[-1], output_size[1], g.dtype)
    return np.matmul(np.matmul(ah.T, g), aw)


def pad_forward(x, pad, value):
    """F.pad's constant mode: pad = (last lo, last hi, second-last lo, ...), negative crops."""
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    grown = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], constant_values=value)
    return grown[tuple(slice(-min(lo, 0), grown.shape[d] + min(hi, 0)) for d, (lo, hi) in enumerate(widths))]


def pad_vjp(g, ans, x, pad, value):
    return pad_forward(g, tuple(-p for p in pad), 0)


def _mode_pad_sources(n, lo, hi, mode):
    """For one padded dim of size n: the input index each output position copies (negative pads crop)."""
    k = np.arange(-lo, n + hi)
    if mode == "reflect":
        k = np.abs(k)
        return np.where(k > n - 1, 2 * (n - 1) - k, k)
    if mode == "replicate":
        return np.clip(k, 0, n - 1)
    # circular: PyTorch crops a negative side first, then wraps within what is left
    start, kept = max(-lo, 0), n - max(-lo, 0) - max(-hi, 0)
    return np.arange(-max(lo, 0), kept + max(hi, 0)) % kept + start


def _mode_pad_dims(x, pad):
    """(axis, lo, hi) per padded dim: pad is PyTorch's (last lo, last hi, second-last lo, ...)."""
    return [(x.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def mode_pad_forward(x, pad, mode):
    """F.pad's reflect / replicate / circular modes: one gather per padded dim."""
    for axis, lo, hi in _mode_pad_dims(x, pad):
        x = np.take(x, _mode_pad_sources(x.shape[axis], lo, hi, mode), axis=axis)
    return x


def mode_pad_vjp(g, ans, x, pad, mode):
    # each padded dim's gather undone by a scatter-add (np.add.at), last dim first as the forward went
    dims = _mode_pad_dims(x, pad)
    sizes = list(x.shape)
    shapes = []
    for axis, lo, hi in dims:  # the array's shape before each forward gather
        shapes.append(tuple(sizes))
        sizes[axis] = sizes[axis] + lo + hi
    for (axis, lo, hi), shape in zip(reversed(dims), reversed(shapes)):
        src = _mode_pad_sources(shape[axis], lo, hi, mode)
        if type(g) is Graphed:  # create_graph: the same scatter-add as a recorded op
            from .ops import _scatter

            g = _scatter(shape, g.dtype, (slice(None),) * axis + (src,), g, accumulate=True, kind="index")
            continue
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(np.moveaxis(out, axis, 0), src, np.moveaxis(g, axis, 0))
        g = out
    return g


# ---------------------------------------------------------------- normalisation
def _bn_axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _bc(v, x):
    """A per-channel vector shaped to broadcast against (N, C, ...)."""
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def bn_stats(x, rm, rv, training, eps):
    """(mean, invstd) per channel: the batch's (biased variance) in training, else the running ones."""
    if training:
        axes = _bn_axes(x)
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
    else:
        mean, var = rm.astype(x.dtype, copy=False), rv.astype(x.dtype, copy=False)
    return mean, (1.0 / np.sqrt(var + eps)).astype(x.dtype)


def batch_norm_forward(x, w, b, rm, rv, training, eps):
    mean, invstd = bn_stats(x, rm, rv, training, eps)
    out = (x - _bc(mean, x)) * _bc(invstd if w is None else invstd * w, x)
    if b is not None:
        out += _bc(b, x)
    return out


def batch_norm_vjp_input(g, ans, x, w, b, rm, rv, training, eps):
    mean, invstd = bn_stats(x, rm, rv, training, eps)
    scale = invstd if w is None else invstd * w
    if not training:
        return g * _bc(scale, x)
    axes = _bn_axes(x)
    m = x.size // x.shape[1]
    xhat = (x - _bc(mean, x)) * _bc(invstd, x)
    gsum = g.sum(axis=axes)
    gx = (g * xhat).sum(axis=axes)
    return _bc(scale / m, x) * (m * g - _bc(gsum, x) - xhat * _bc(gx, x))


def batch_norm_vjp_weight(g, ans, x, w, b, rm, rv, training, eps):
    mean, invstd = bn_stats(x, rm, rv, training, eps)
    return (g * ((x - _bc(mean, x)) * _bc(invstd, x))).sum(axis=_bn_axes(x))


def batch_norm_vjp_bias(g, ans, x, w, b, rm, rv, training, eps):
    return g.sum(axis=_bn_axes(x))


def _ln_stats(x, k, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    invstd = (1.0 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)).astype(x.dtype)
    return axes, (x - mean) * invstd, invstd


def layer_norm_forward(x, w, b, shape, eps):
    _, xhat, _ = _ln_stats(x, len(shape), eps)
    if w is not None:
        xhat *= w
    if b is not None:
        xhat += b
    return xhat


def layer_norm_vjp_input(g, ans, x, w, b, shape, eps):
    axes, xhat, invstd = _ln_stats(x, len(shape), eps)
    gw = g if w is None else g * w
    m = math.prod(shape)
    return invstd / m * (m * gw - gw.sum(axis=axes, keepdims=True) - xhat * (gw * xhat).sum(axis=axes, keepdims=True))


def layer_norm_vjp_weight(g, ans, x, w, b, shape, eps):
    _, xhat, _ = _ln_stats(x, len(shape), eps)
    return (g * xhat).reshape((-1,) + tuple(shape)).sum(axis=0)


def layer_norm_vjp_bias(g, ans, x, w, b, shape, eps):
    return g.reshape((-1,) + tuple(shape)).sum(axis=0)


def embedding_vjp(g, ans, w, idx, padding_idx):
    if type(g) is Graphed:  # create_graph: one recorded scatter-add of the rows, the padding row masked out
        from .ops import _scatter

        rows = g.reshape(-1, w.shape[1])
        if padding_idx is not None:
            rows = rows * (idx.reshape(-1, 1) != padding_idx)
        return _scatter(w.shape, g.dtype, idx.reshape(-1), rows, accumulate=True, kind="index")
    dw = np.zeros(w.shape, dtype=g.dtype)
    np.add.at(dw, idx.reshape(-1), g.reshape(-1, w.shape[1]))
    if padding_idx is not None:
        dw[padding_idx] = 0
    return dw


# ---------------------------------------------------------------- activations
_ERF = ERF_UFUNC = np.frompyfunc(math.erf, 1, 1)  # engine/graphed.py maps this ufunc onto the erf op
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def erf(a):
    # NOTE: math.erf per element (no scipy here): exact, ~50 ns an element.
    if type(a) is Graphed:
        return _graphed_op("erf", (a,))
    return _ERF(a).astype(a.dtype) if a.ndim else a.dtype.type(math.erf(a))


def gelu(a, approximate):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a ** 3)))
    return 0.5 * a * (1 + erf(a / math.sqrt(2.0)))


def gelu_vjp(g, ans, a, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_PI * (a + 0.044715 * a ** 3)
        t = np.tanh(inner)
        return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * a * a))
    cdf = 0.5 * (1 + erf(a / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    return g * (cdf + a * pdf)


def sigmoid(a):
    if type(a) is Graphed:  # create_graph: the sigmoid op (both where-branches would put inf * 0 into the graph)
        return _graphed_op("sigmoid", (a,))
    with np.errstate(over="ignore"):
        return np.where(a >= 0, 1 / (1 + np.exp(-a)), np.exp(a) / (1 + np.exp(a))).astype(a.dtype)


def softplus(a, beta, threshold):
    """log(1 + e^(beta a)) / beta, linear above the threshold (PyTorch's)."""
    z = a * beta
    with np.errstate(over="ignore"):
        soft = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
    return np.where(z > threshold, a, soft).astype(a.dtype)


def softplus_vjp(g, ans, a, beta, threshold):
    z = a * beta
    return g * np.where(z > threshold, 1, sigmoid(z))


def elu(a, alpha, scale, input_scale):
    with np.errstate(over="ignore"):
        return np.where(a > 0, scale * a, scale * alpha * np.expm1(np.minimum(a, 0) * input_scale)).astype(a.dtype)


def elu_vjp(g, ans, a, alpha, scale, input_scale):
    return g * np.where(a > 0, scale, scale * alpha * input_scale * np.exp(np.minimum(a, 0) * input_scale))


def mish(a):
    return a * np.tanh(softplus(a, 1.0, 20.0))


def mish_vjp(g, ans, a):
    t = np.tanh(softplus(a, 1.0, 20.0))
    return g * (t + a * (1 - t * t) * sigmoid(a))


def logsigmoid(a):
    return -(np.maximum(-a, 0) + np.log1p(np.exp(-np.abs(a))))


def hardswish(a):
    return a * np.clip(a + 3, 0, 6) / 6


def hardswish_vjp(g, ans, a):
    return g * np.where(a < -3, 0, np.where(a <= 3, (2 * a + 3) / 6, 1))


# ---------------------------------------------------------------- regression losses
def _reduce(x, reduction):
    if reduction == "mean":
        return x.sum() / x.dtype.type(x.size)
    return x.sum() if reduction == "sum" else x


def _reduce_grad(g, shape, reduction):
    if reduction == "mean":
        return np.broadcast_to(g / math.prod(shape), shape)
    return np.broadcast_to(g, shape) if reduction == "sum" else g


def smooth_l1(a, b, reduction, beta):
    d = np.abs(a - b)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss.astype(np.result_type(a, b), copy=False), reduction)


def smooth_l1_vjp(g, ans, a, b, reduction, beta):
    diff = a - b
    local = np.sign(diff) if beta == 0 else np.where(np.abs(diff) < beta, diff / beta, np.sign(diff))
    return _reduce_grad(g, diff.shape, reduction) * local


def huber(a, b, reduction, delta):
    d = np.abs(a - b)
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss.astype(np.result_type(a, b), copy=False), reduction)


def huber_vjp(g, ans, a, b, reduction, delta):
    diff = a - b
    return _reduce_grad(g, diff.shape, reduction) * np.clip(diff, -delta, delta)


# ---------------------------------------------------------------- spatial NLL (N, C, H, W)
def nll2d_vjp(g, ans, logp, target, reduction, weight=None, ignore_index=-100):
    """NllLoss2DBackward0: -g * w[target] at each pixel's target class (over the weight sum for 'mean')."""
    t = np.asarray(target)
    ignored = t == ignore_index
    w = np.ones(t.shape, logp.dtype) if weight is None else np.asarray(weight, logp.dtype)[np.where(ignored, 0, t)]
    w = np.where(ignored, 0, w).astype(logp.dtype)
    scale = g / w.sum() if reduction == "mean" else g  # 'none': g is per pixel, like w
    if type(g) is Graphed:  # create_graph: one recorded scatter to each pixel's target class
        from .ops import _scatter

        grids = np.indices(t.shape, sparse=True)
        key = (grids[0], np.where(ignored, 0, t), *grids[1:])
        return _scatter(logp.shape, logp.dtype, key, -scale * w, kind="index")
    z = np.zeros_like(logp)
    np.put_along_axis(z, np.expand_dims(np.where(ignored, 0, t), 1), np.expand_dims(-scale * w, 1), axis=1)
    return z


# ---------------------------------------------------------------- recurrent cells
def _chunk_key(shape, i, chunks, dim):
    size = -(-shape[dim] // chunks)
    return (slice(None),) * dim + (slice(i * size, (i + 1) * size),)


def chunk_forward(a, i, chunks, dim):
    return a[_chunk_key(a.shape, i, chunks, dim)]


def chunk_vjp(g, ans, a, i, chunks, dim):
    if type(g) is Graphed:
        from .ops import _scatter

        return _scatter(a.shape, g.dtype, _chunk_key(a.shape, i, chunks, dim), g)
    z = np.zeros(a.shape, dtype=g.dtype)
    z[_chunk_key(a.shape, i, chunks, dim)] = g
    return z


def _sig(a):
    return 0.5 * (np.tanh(0.5 * a) + 1)  # overflow-free logistic


def _gate_order(hsz):
    """PyTorch's gate rows are (i, f, g, o); the loops use (o, i, f, g): the three sigmoid gates side by side
    for the forward, the three that c's gradient feeds side by side for the backward."""
    return np.r_[3 * hsz:4 * hsz, 0:3 * hsz]


def _lstm_run(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    """One LSTM layer over a whole sequence (PyTorch's fused CPU layer): the step states backward needs.
    sigmoid(a) = (tanh(a/2) + 1)/2, so the sigmoid gates' pre-activations are halved up front (in the
    weights) and one tanh per step serves all four gates. The states are kept transposed, features by batch
    ((4H, N) gates, (H, N) h and c): each gate is then a contiguous block, so every elementwise call of the
    step runs over contiguous memory (~25 % faster than (N, 4H) rows). Each step's gates are one matrix
    product [W_hh | W_ih | b_ih + b_hh] @ [h; x_t; 1]: the input projection and the biases ride along in the
    recurrent product (one call a step, no separate projection of the sequence)."""
    xs = x[::-1] if reverse else x
    steps, batch, isz = xs.shape
    hsz = w_hh.shape[1]
    dt = np.result_type(x.dtype, w_ih.dtype)
    order = _gate_order(hsz)
    bias = b_ih is not None
    k = hsz + isz + bias
    weights = np.empty((4 * hsz, k), dtype=dt)
    weights[:, :hsz] = w_hh[order]
    weights[:, hsz:hsz + isz] = w_ih[order]
    if bias:
        weights[:, -1] = (b_ih + b_hh)[order]
    weights[:3 * hsz] *= 0.5
    # per step [h_t; x_t; 1], features by batch: h_{t+1} is written straight into the next step's operand
    operands = np.empty((steps + 1, k, batch), dtype=dt)
    operands[:steps, hsz:hsz + isz] = xs.transpose(0, 2, 1)
    if bias:
        operands[:, -1] = 1
    hs = operands[:, :hsz]
    # Each step's block holds (o, i, f, g) after the activations, then the step's incoming cell state: i, f
    # and g, c_prev are then side by side, so i*g and f*c_prev are one multiply.
    block = np.empty((steps + 1, 5 * hsz, batch), dtype=dt)
    gates, cs = block[:steps, :4 * hsz], block[:, 4 * hsz:]
    tcs = np.empty((steps, hsz, batch), dtype=dt)
    prods = np.empty((2 * hsz, batch), dtype=dt)
    hs[0], cs[0] = h0.T, c0.T
    sig_rows = 3 * hsz
    # every view the loop touches, made once: slicing in the loop costs as much as a small ufunc call
    mul, add, tanh, matmul = np.multiply, np.add, np.tanh, np.matmul
    p_i, p_f = prods[:hsz], prods[hsz:]
    steps_views = zip(block[:steps, :4 * hsz], block[:steps, :sig_rows], block[:steps, hsz:sig_rows],
                      block[:steps, sig_rows:], block[:steps, :hsz], operands, hs[1:], cs[1:], tcs)
    one, half = dt.type(1), dt.type(0.5)
    for a, sig, ifx, gcx, o, z, h_next, c, tc in steps_views:  # out= passed by position: no keyword parsing
        matmul(weights, z, a)
        tanh(a, a)
        add(sig, one, sig)
        mul(sig, half, sig)
        mul(ifx, gcx, prods)  # i*g, f*c_prev
        add(p_i, p_f, c)
        tanh(c, tc)
        mul(o, tc, h_next)
    return xs, gates, cs, hs, tcs, operands


_LSTM_RUNS: dict = {}  # id(output array) -> (weakref to it, its run): backward reuses the forward's states
_LSTM_LAST = [None]  # (input arrays, run) of the latest layer forward, for its cell-state twin


def _remember(out, run):
    key = id(out)
    _LSTM_RUNS[key] = (weakref.ref(out, lambda _: _LSTM_RUNS.pop(key, None)), run)
    return out


def _recall(ans, args):
    entry = _LSTM_RUNS.get(id(ans))
    if entry is not None and entry[0]() is ans:
        return entry[1]
    return _lstm_run(*args)


def lstm_layer_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    args = (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse)
    run = _lstm_run(*args)
    _LSTM_LAST[0] = (args, run)
    hs = run[3][1:].transpose(0, 2, 1)
    return _remember(np.ascontiguousarray(hs[::-1] if reverse else hs), run)


def lstm_cell_state_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    args = (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse)
    last, _LSTM_LAST[0] = _LSTM_LAST[0], None
    same = last is not None and all(a is b for a, b in zip(last[0], args))
    run = last[1] if same else _lstm_run(*args)
    return _remember(np.ascontiguousarray(run[2][-1].T), run)


_LSTM_GRADS = [None]  # (g, ans, pass) of the latest backward: one node's seven VJPs share one pass through time


def _lstm_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c):
    """The pass through time: every step's gate gradients in PyTorch's (i, f, g, o) order, and d h0, d c0.
    The VJPs below take their input's gradient from it, so nobody pays for a gradient no input wants.
    Transposed like the forward: (T, 4H, N) gates, (H, N) states."""
    memo = _LSTM_GRADS[0]
    if memo is not None and memo[0] is g and memo[1] is ans:  # ans: this node's own output, so never another's
        return memo[2]
    xs, gates, cs, hs, tcs, operands = _recall(ans, (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse))
    steps, hsz, batch = tcs.shape
    o, i, f, gg = (gates[:, k * hsz:(k + 1) * hsz] for k in range(4))
    # Everything but the recurrence, for all steps at once, in place: d(c_t)/d(h_t) and each gate's local
    # derivative, laid out as PyTorch's gates (i, f, g, o) so the step's gradients need no reordering.
    local = np.empty_like(gates)
    li, lf, lg, lo = (local[:, k * hsz:(k + 1) * hsz] for k in range(4))
    for out, s, other in ((lo, o, tcs), (li, i, gg), (lf, f, cs[:-1])):
        np.subtract(1, s, out=out)
        out *= s
        out *= other
    np.multiply(gg, gg, out=lg)
    np.subtract(1, lg, out=lg)
    lg *= i
    dcdh = tcs * tcs
    np.subtract(1, dcdh, out=dcdh)
    dcdh *= o
    if last_c:
        d_out, dc = None, np.array(g.T, dtype=gates.dtype)
    else:
        d_out, dc = np.ascontiguousarray((g[::-1] if reverse else g).transpose(0, 2, 1)), \
            np.zeros((hsz, batch), gates.dtype)
    dh = np.zeros((hsz, batch), gates.dtype)
    dgates = np.empty_like(gates)
    tmp = np.empty((hsz, batch), gates.dtype)
    whh_t = np.ascontiguousarray(w_hh.T)
    ifg = 3 * hsz
    mul, matmul = np.multiply, np.matmul
    local3 = local[:, :ifg].reshape(steps, 3, hsz, batch)  # views made once (see the forward)
    dgates3 = dgates[:, :ifg].reshape(steps, 3, hsz, batch)
    add = np.add
    # out= passed by position, and the steps' views made by iterating over arrays, as in the forward
    per_step = zip(dcdh[::-1], dgates[::-1], local[::-1, ifg:], dgates[::-1, ifg:], local3[::-1], dgates3[::-1],
                   f[::-1], d_out[::-1] if d_out is not None else [None] * steps)
    for dcdh_t, d, local_o, d_o, local_ifg, d_ifg, f_t, d_out_t in per_step:
        if d_out_t is not None:
            add(dh, d_out_t, dh)
        mul(dh, dcdh_t, tmp)
        add(dc, tmp, dc)
        mul(local_o, dh, d_o)
        mul(local_ifg, dc, d_ifg)
        mul(dc, f_t, dc)
        matmul(whh_t, d, dh)
    result = {"dgates": dgates, "xs": xs, "operands": operands, 5: dh.T, 6: dc.T}
    _LSTM_GRADS[0] = (g, ans, result)
    return result


def _lstm_grad(k, bw, w_ih, reverse):
    """Input k's gradient from the pass: x, w_ih, w_hh, b_ih, b_hh (the same sum), h0, c0."""
    if k in bw:
        return bw[k]
    dgates = bw["dgates"]  # T, 4H, N
    if "flat" not in bw:
        bw["flat"] = np.ascontiguousarray(dgates.transpose(1, 0, 2)).reshape(dgates.shape[1], -1)  # 4H, T*N
    if k == 0:
        steps, _, batch = dgates.shape
        dx = (bw["flat"].T @ w_ih).reshape(steps, batch, -1)  # one matrix product for every step
        grad = dx[::-1] if reverse else dx
    else:
        # w_hh, w_ih and the biases from one product: the forward's per-step operands [h; x_t; 1] against the
        # gate gradients, (4H, T*N) @ (T*N, H + I + 1); each part copied out C-ordered like its weight
        operands = bw["operands"][:-1]  # T, H + I + 1, N
        hsz, isz = dgates.shape[1] // 4, bw["xs"].shape[2]
        whole = bw["flat"] @ operands.transpose(0, 2, 1).reshape(-1, operands.shape[1])
        bw[2], bw[1] = np.ascontiguousarray(whole[:, :hsz]), np.ascontiguousarray(whole[:, hsz:hsz + isz])
        if whole.shape[1] > hsz + isz:
            bw[3] = bw[4] = np.ascontiguousarray(whole[:, -1])
        grad = bw[k]
    bw[k] = grad
    return grad


def _lstm_composed(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c):
    """The layer as PyTorch's cell equations in table ops (i, f, g, o gates): what create_graph differentiates."""
    steps, hsz = x.shape[0], w_hh.shape[1]
    h, c = h0, c0
    hs = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        gates = x[t] @ w_ih.T + h @ w_hh.T
        if b_ih is not None:
            gates = gates + b_ih + b_hh
        i, f, o = (sigmoid(gates[:, k * hsz:(k + 1) * hsz]) for k in (0, 1, 3))
        c = f * c + i * np.tanh(gates[:, 2 * hsz:3 * hsz])
        h = o * np.tanh(c)
        hs[t] = h
    return c if last_c else np.stack(hs, axis=0)


_LSTM_GRAPHED = [None]  # (g, ans, grads): under create_graph too, one node's seven VJPs share one pass


def _lstm_graphed_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c):
    memo = _LSTM_GRAPHED[0]
    if memo is not None and memo[0] is g and memo[1] is ans:
        return memo[2]
    from .graphed import vjps_by_decomposition

    # NOTE: the fused kernel writes its states in place (out=), which no graph can record: this op alone
    # differentiates its composition instead of running its rule on tensors.
    grads = vjps_by_decomposition(lambda *a: _lstm_composed(*a, reverse, last_c), g, (x, w_ih, w_hh, b_ih, b_hh, h0, c0))
    _LSTM_GRAPHED[0] = (g, ans, grads)
    return grads


def lstm_vjp(k, last_c=False):
    def vjp(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
        if type(g) is Graphed:
            return _lstm_graphed_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c=last_c)[k]
        return _lstm_grad(k, _lstm_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c), w_ih,
                          reverse)

    return vjp


# ---------------------------------------------------------------- limits
def _prod(shape):
    return math.prod(int(s) for s in shape)


MODE_PAD_OPS = ("reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d", "circular_pad")


def output_sizes(name, arrays, params):
    """Shapes of the big arrays an op allocates (output, im2col buffer), from shapes only; [] if unknown."""
    if name == "convolution":
        x, w = np.shape(arrays[0]), np.shape(arrays[1])
        if len(x) not in (3, 4) or len(w) != len(x):
            return []
        stride, padding, dilation, groups = params
        x4 = x if len(x) == 4 else (x[0], x[1], 1, x[2])
        w4 = w if len(w) == 4 else (w[0], w[1], 1, w[2])
        pads = tuple((q, q) for q in _two(padding, 0))
        oh, ow = conv_geometry(x4, w4, _two(stride, 1), pads, _two(dilation, 1))
        padded = (x4[0], x4[1], x4[2] + pads[0][0] + pads[0][1], x4[3] + pads[1][0] + pads[1][1])
        return [padded, (x4[0], x4[1] * w4[2] * w4[3], max(oh, 0) * max(ow, 0)), (x4[0], w4[0], oh, ow)]
    if name in ("max_pool2d", "avg_pool2d"):
        x = np.shape(arrays[0])
        k, s, p = params[0], params[1], params[2]
        d = params[3] if name == "max_pool2d" else (1, 1)
        ceil_mode = params[4] if name == "max_pool2d" else params[3]
        oh = pool_size(x[-2], k[0], s[0], p[0], d[0], ceil_mode)
        ow = pool_size(x[-1], k[1], s[1], p[1], d[1], ceil_mode)
        lead = x[:-2]
        return [lead + (x[-2] + 2 * p[0] + s[0], x[-1] + 2 * p[1] + s[1]), lead + (oh, ow)]  # padded input, output
    if name == "constant_pad_nd":
        x, pad = np.shape(arrays[0]), params[0]
        grown = list(x)
        for i in range(len(pad) // 2):
            grown[len(x) - 1 - i] += max(pad[2 * i], 0) + max(pad[2 * i + 1], 0)
        return [tuple(grown)]
    if name in MODE_PAD_OPS:
        x, pad = list(np.shape(arrays[0])), params[0]
        for i in range(len(pad) // 2):
            x[len(x) - 1 - i] += pad[2 * i] + pad[2 * i + 1]
        return [tuple(x)]
    if name == "embedding":
        return [np.shape(arrays[1]) + np.shape(arrays[0])[1:]]
    if name in ("select_backward", "slice_backward", "index_backward"):  # zeros of the indexed tensor's shape
        return [params[0]]
    if name == "adaptive_avg_pool2d":
        x = np.shape(arrays[0])
        return [x[:-2] + (params[0][0], x[-1]), x[:-2] + tuple(params[0])]
    return []
