"""Op table rows: convolution, pooling and padding, with their numpy forwards and VJPs.

Convolution is im2col: one strided window view of the (padded) input copied into a column matrix, then one
matmul per group; its input gradient is col2im, a loop over the kernel offsets adding strided slices. Spatial
ops work in 2-D: a 1-D op is the 2-D one with height 1 (PyTorch's own conv1d/max_pool1d do the same).
Spatial params are 2-tuples, or 1-tuples for the 1-D forms.
"""
from __future__ import annotations

import weakref

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .graphed import Graphed, vjps_by_decomposition
from .graphed import raw as _raw
from .op_table import Params, SameAs, defop, padded_shape
from .ops_shape import _scatter


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


# NOTE: im2col copies each input element kh*kw times: pytorch/examples' MNIST conv2 on a 64-image batch would take
# 64 x 288 x 576 = 10.6 million elements at once. Batches are cut into runs of images whose columns stay within this
# (one image at least), so a convolution's transient memory is bounded whatever the batch.
COLS_CHUNK_ELEMENTS = 1 << 21


def batch_chunks(n, cols_per_image):
    """[(first, end), ...] runs of images of one batch whose im2col columns fit COLS_CHUNK_ELEMENTS."""
    step = max(1, COLS_CHUNK_ELEMENTS // max(cols_per_image, 1))
    return [(i, min(i + step, n)) for i in range(0, n, step)] or [(0, 0)]


def conv_forward(x, w, b, stride, padding, dilation, groups):
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    n, o = x4.shape[0], w4.shape[0]
    wmat = w4.reshape(groups, o // groups, -1)
    chunks = batch_chunks(n, x4.shape[1] * w4.shape[2] * w4.shape[3] * oh * ow)
    if len(chunks) > 1:  # run by run of images: no columns kept for the weight gradient (it makes them again)
        out = None
        for lo, hi in chunks:
            part = _conv_batch_last(wmat, _cols(x4[lo:hi], w4, groups, st, pads, dl, oh, ow), b, o, oh, ow, hi - lo)
            if out is None:
                out = np.empty((n, o, oh, ow), part.dtype)
            out[lo:hi] = part.transpose(3, 0, 1, 2)
        return out[:, :, 0, :] if one else out
    cols = _cols(x4, w4, groups, st, pads, dl, oh, ow)
    out = np.ascontiguousarray(_conv_batch_last(wmat, cols, b, o, oh, ow, n).transpose(3, 0, 1, 2))
    return _keep_cols(out[:, :, 0, :] if one else out, cols)


def _conv_batch_last(wmat, cols, b, o, oh, ow, n):
    """The convolution of one run of images as (O, OH, OW, N): one matmul per group, then the bias."""
    out = np.matmul(wmat, cols).reshape(o, oh, ow, n)
    if b is not None:
        out += b.reshape(o, 1, 1, 1).astype(out.dtype, copy=False)
    return out


def conv_vjp_input(g, ans, x, w, b, stride, padding, dilation, groups):
    if type(g) is Graphed:
        return _conv_graphed_backward(g, ans, x, w, b, stride, padding, dilation, groups)[0]
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    n, c, h, wd = x4.shape
    o, cg, kh, kw = w4.shape
    wt = np.swapaxes(w4.reshape(groups, o // groups, -1), 1, 2)  # G, Cg*KH*KW, Og
    g4 = _as2d(g)
    (t, bt), (le, r) = pads
    dx = None
    for lo, hi in batch_chunks(n, c * kh * kw * oh * ow):  # the columns' gradient, run by run of images
        dcols = np.matmul(wt, _grad_batch_last(g4[lo:hi], groups, o)).reshape(c, kh, kw, oh, ow, hi - lo)
        dxt = np.zeros((c, h + t + bt, wd + le + r, hi - lo), dtype=dcols.dtype)  # col2im: a strided add per offset
        for i in range(kh):
            hs = i * dl[0]
            for j in range(kw):
                ws = j * dl[1]
                dxt[:, hs:hs + st[0] * (oh - 1) + 1:st[0], ws:ws + st[1] * (ow - 1) + 1:st[1]] += dcols[:, i, j]
        part = dxt[:, t:t + h, le:le + wd].transpose(3, 0, 1, 2)
        if lo == 0 and hi == n:
            dx = part
            break
        if dx is None:
            dx = np.empty((n, c, h, wd), part.dtype)
        dx[lo:hi] = part
    return dx[:, :, 0, :] if one else dx


def conv_vjp_weight(g, ans, x, w, b, stride, padding, dilation, groups):
    if type(g) is Graphed:
        return _conv_graphed_backward(g, ans, x, w, b, stride, padding, dilation, groups)[1]
    one, x4, w4, st, pads, dl, oh, ow = _conv_setup(x, w, stride, padding, dilation)
    g4 = _as2d(g)
    chunks = batch_chunks(x4.shape[0], x4.shape[1] * w4.shape[2] * w4.shape[3] * oh * ow)
    if len(chunks) == 1:
        cols = _forward_cols(ans, x4, w4, groups, st, pads, dl, oh, ow)
        dw = np.matmul(_grad_batch_last(g4, groups, w4.shape[0]), np.swapaxes(cols, 1, 2))  # G, Og, Cg*KH*KW
        return dw.reshape(w.shape)
    dw = None
    for lo, hi in chunks:  # the runs' contributions, added in batch order
        cols = _cols(x4[lo:hi], w4, groups, st, pads, dl, oh, ow)
        part = np.matmul(_grad_batch_last(g4[lo:hi], groups, w4.shape[0]), np.swapaxes(cols, 1, 2))
        dw = part if dw is None else dw + part
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

            g = _scatter(shape, g.dtype, (slice(None),) * axis + (src,), g, accumulate=True, kind="index")
            continue
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(np.moveaxis(out, axis, 0), src, np.moveaxis(g, axis, 0))
        g = out
    return g


# ---------------------------------------------------------------- size rules: output, im2col buffer, padding
def _conv_sizes(arrays, params):
    x, w = np.shape(arrays[0]), np.shape(arrays[1])
    if len(x) not in (3, 4) or len(w) != len(x):
        return ()
    stride, padding, dilation, groups = params
    x4 = x if len(x) == 4 else (x[0], x[1], 1, x[2])
    w4 = w if len(w) == 4 else (w[0], w[1], 1, w[2])
    pads = tuple((q, q) for q in _two(padding, 0))
    oh, ow = conv_geometry(x4, w4, _two(stride, 1), pads, _two(dilation, 1))
    padded = (x4[0], x4[1], x4[2] + pads[0][0] + pads[0][1], x4[3] + pads[1][0] + pads[1][1])
    per_image = x4[1] * w4[2] * w4[3] * max(oh, 0) * max(ow, 0)
    lo, hi = batch_chunks(x4[0], per_image)[0]  # the columns of one run of images at a time
    return (padded, (hi - lo, x4[1] * w4[2] * w4[3], max(oh, 0) * max(ow, 0)), (x4[0], w4[0], oh, ow))


def _pool_sizes(x, k, s, p, d, ceil_mode):
    oh = pool_size(x[-2], k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_size(x[-1], k[1], s[1], p[1], d[1], ceil_mode)
    lead = x[:-2]
    return (lead + (x[-2] + 2 * p[0] + s[0], x[-1] + 2 * p[1] + s[1]), lead + (oh, ow))  # padded input, output


def _max_pool_sizes(arrays, params):
    kernel, stride, padding, dilation, ceil_mode = params
    return _pool_sizes(np.shape(arrays[0]), kernel, stride, padding, dilation, ceil_mode)


def _avg_pool_sizes(arrays, params):
    kernel, stride, padding, ceil_mode = params[:4]
    return _pool_sizes(np.shape(arrays[0]), kernel, stride, padding, (1, 1), ceil_mode)


def _constant_pad_sizes(arrays, params):
    x, pad = np.shape(arrays[0]), params[0]
    grown = list(x)
    for i in range(len(pad) // 2):  # a negative pad crops: it never makes the output bigger
        grown[len(x) - 1 - i] += max(pad[2 * i], 0) + max(pad[2 * i + 1], 0)
    return (tuple(grown),)


def _adaptive_avg_sizes(arrays, params):
    x = np.shape(arrays[0])
    return (x[:-2] + (params[0][0], x[-1]), x[:-2] + tuple(params[0]))


# Layers (numpy in engine/opspy). Spatial params are 2-tuples, or 1-tuples for the 1-D forms.
defop("convolution", "ConvolutionBackward0", "conv", conv_forward, (conv_vjp_input, r"\star W^{\top}"),
      (conv_vjp_weight, r"x\star"), (conv_vjp_bias, r"\textstyle\sum"), needs=("b", "a", ""),
      params=Params("keywords", ("stride", "padding", "dilation", "groups"),
                    defaults=(("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1))), sizes=_conv_sizes)


defop("constant_pad_nd", "ConstantPadNdBackward0", "pad", pad_forward, (pad_vjp, "1"), saves=False,
      params=Params("args", ("pad", "value")), sizes=_constant_pad_sizes)


# F.pad(mode="circular") (conv padding_mode): PyTorch builds it as a chain of slice copies (its output's node is
# CopySlices), one gather here. Reflect and replicate are the ReflectionPad/ReplicationPad entries further down.
defop("circular_pad", "CopySlices", "pad", mode_pad_forward, (mode_pad_vjp, "1"), saves=False,
      params=Params("args", ("pad", "mode")), sizes=padded_shape)


defop("max_pool2d", "MaxPool2DWithIndicesBackward0", "max_pool", max_pool_forward,
      (max_pool_vjp, r"\mathbb{1}[a=\max_{window}]"), needs=("ar",),
      params=Params("keywords", ("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
                    defaults=(("stride", SameAs("kernel_size")), ("padding", 0), ("dilation", 1),
                              ("ceil_mode", False))), sizes=_max_pool_sizes)


defop("avg_pool2d", "AvgPool2DBackward0", "avg_pool", avg_pool_forward, (avg_pool_vjp, r"\frac{1}{k}"),
      saves=False, params=Params("keywords", ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                              "divisor_override"),
                                 defaults=(("stride", SameAs("kernel_size")), ("padding", 0), ("ceil_mode", False),
                                           ("count_include_pad", True), ("divisor_override", None))), sizes=_avg_pool_sizes)


defop("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", "adaptive_avg_pool", adaptive_avg_forward,
      (adaptive_avg_vjp, r"\frac{1}{k}"), saves=False, params=Params("keywords", ("output_size",)), sizes=_adaptive_avg_sizes)
