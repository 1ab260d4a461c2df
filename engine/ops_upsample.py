"""F.interpolate's weighted modes: linear (N, C, L), bilinear and bicubic (N, C, H, W).

Each output is a weighted sum of input taps along each spatial dim (2 taps linear, 4 cubic), the last dim first
(ATen's nesting: the width sums are combined along the height). Source indices and weights are ATen's
(area_pixel_compute_source_index, guard_index_and_lambda, the cubic convolution with A = -0.75), computed in the
tensor's dtype as its kernel computes them. The backward adds each output's gradient times its taps' weight
product into the taps, output by output, as ATen's backward loop does; it is an op itself (its derivative is the
forward again), so gradients of gradients work.
"""
from __future__ import annotations

import numpy as np

from .graphed import Graphed
from .graphed import op as _graphed_op
from .op_table import Params, defop

CUBIC_A = -0.75  # ATen's (and OpenCV's) bicubic kernel parameter
CHANNELS_LAST_OUTPUT = 128  # bilinear outputs up to this height + width take ATen's channels-last kernel (torch on one
# thread takes it at every size; on two or more, as on users' machines, larger outputs take the generic one)
MAX_ROUNDS = 4096  # an input taking more adds than this (a resize by > ~30x): its gradient is summed unfused


def _fma(a, b, c):
    """a * b + c rounded once, as ATen's kernels compile (FMA contraction); float32 through float64, where the product
    is exact. NOTE: float64 tensors get the two roundings (numpy has no fused multiply-add)."""
    dtype = np.result_type(a, b, c)
    if dtype == np.float32:
        return (np.asarray(a, np.float64) * b + np.asarray(c, np.float64)).astype(np.float32)
    return a * b + c


def _scale(n_in, n_out, align_corners, scale, dtype):
    """area_pixel_compute_scale: input pixels per output pixel."""
    if align_corners:
        return dtype.type(n_in - 1) / dtype.type(n_out - 1) if n_out > 1 else dtype.type(0)
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(n_in) / dtype.type(n_out)


def _taps(n_in, n_out, align_corners, scale, cubic, dtype, fused=True):
    """(indices (n_out, k), weights (n_out, k)) of each output along one dim; `fused`: as the forward kernels compute
    them (with fused multiply-adds), else as ATen's bicubic backward does (built without)."""
    dtype = np.dtype(dtype)
    fma = _fma if fused else (lambda x, y, z: x * y + z)
    i = np.arange(n_out).astype(dtype)
    if not cubic and n_in == n_out:  # ATen copies: weights 1 and 0 on the same index
        idx = np.arange(n_out)
        return np.stack([idx, idx], 1), np.stack([np.ones(n_out, dtype), np.zeros(n_out, dtype)], 1)
    s = _scale(n_in, n_out, align_corners, scale, dtype)
    if align_corners:
        real = s * i
    else:
        real = fma(s, i + dtype.type(0.5), dtype.type(-0.5))
        if not cubic:
            real = np.maximum(real, dtype.type(0))
    index = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    t = np.clip(real - index.astype(dtype), dtype.type(0), dtype.type(1))
    if not cubic:
        upper = index + (index < n_in - 1)
        return np.stack([index, upper], 1), np.stack([dtype.type(1) - t, t], 1)
    a = dtype.type(CUBIC_A)

    # NOTE: which steps are fused is ATen's compiled kernel's (measured on torch 2.13's weights: 0 of 5 sizes differ)
    def near(x):  # |x| <= 1
        return fma(a + dtype.type(2), x, -(a + dtype.type(3))) * x * x + dtype.type(1)

    def far(x):  # 1 < |x| < 2
        return fma(fma(a, x, -(dtype.type(5) * a)), x, dtype.type(8) * a) * x - dtype.type(4) * a

    one = dtype.type(1)
    weights = np.stack([far(t + one), near(t), near(one - t), far((one - t) + one)], 1)  # (ATen: 1 - t, then + 1)
    idx = np.clip(index[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, weights.astype(dtype)


def _all_taps(shape, size, align_corners, scales, cubic, dtype):
    spatial = len(size)
    return [_taps(shape[-spatial + k], size[k], align_corners, scales[k], cubic, dtype) for k in range(spatial)]


def _flat_taps(shape, size, align_corners, scales, cubic, dtype):
    """Each output's taps as flat indices into the spatial block, (outputs, taps), height-major, with the products
    of their per-dim weights (rounded once, in the tensor's dtype)."""
    taps = _all_taps(shape, size, align_corners, scales, cubic, dtype)
    if len(taps) == 1:
        return taps[0]
    (ih, wh), (iw, ww) = taps
    n_w = shape[-1]
    index = (ih[:, None, :, None] * n_w + iw[None, :, None, :]).reshape(len(ih) * len(iw), -1)
    weight = (wh[:, None, :, None] * ww[None, :, None, :]).reshape(len(ih) * len(iw), -1)
    return index, weight


def _weighted_sum(terms):
    """Σ tap · weight over (tap, weight) pairs: the first product fused with the second (rounded), each next one
    fused in turn, as ATen's kernels compile (measured against torch 2.13: bit for bit)."""
    (t0, w0), (t1, w1) = terms[0], terms[1]
    total = _fma(t0, w0, t1 * w1)
    for t, w in terms[2:]:
        total = _fma(t, w, total)
    return total


def _interpolate(a, size, align_corners, scales, cubic=False):
    """Linear, and bilinear to outputs with height + width <= 128 (ATen's channels-last kernel): one sum over each
    output's taps (bilinear: 4, with weight products). Bicubic, and larger bilinear outputs (ATen's generic kernel):
    separable, along the width first, then the height."""
    spatial = len(size)
    lead = a.shape[:a.ndim - spatial]
    if not cubic and (spatial == 1 or sum(size) <= CHANNELS_LAST_OUTPUT):
        index, weight = _flat_taps(a.shape, size, align_corners, scales, cubic, a.dtype)
        block = a.reshape(lead + (-1,))
        terms = [(block[..., index[:, j]], weight[:, j]) for j in range(index.shape[1])]
        out = _weighted_sum(terms).reshape(lead + tuple(size))
        vector = a.shape[1] - a.shape[1] % 8 if spatial == 2 else 0
        if vector:  # NOTE: ATen's channels-last kernel takes 8 channels a vector, its taps summed in another order
            (x00, w00), (x01, w01), (x10, w10), (x11, w11) = [(t[:, :vector], w) for t, w in terms]
            out[:, :vector] = _fma(x00, w00, _fma(x01, w01, _fma(x11, w11, x10 * w10))).reshape(
                (a.shape[0], vector) + tuple(size))
        return out
    out = a
    taps = _all_taps(a.shape, size, align_corners, scales, cubic, a.dtype)
    for k in reversed(range(spatial)):
        index, weight = taps[k]
        axis = a.ndim - spatial + k
        view = (-1,) + (1,) * (spatial - 1 - k)  # the weights along `axis`
        out = _weighted_sum([(np.take(out, index[:, j], axis=axis), weight[:, j].reshape(view))
                             for j in range(index.shape[1])])
    return out


def _interpolate_backward(g, shape, size, align_corners, scales, cubic=False):
    """Each output's gradient times its taps' weight, added into its taps output by output (ATen's backward loop,
    each add a fused multiply-add)."""
    if type(g) is Graphed:
        return _graphed_op(_BACKWARD[len(size), cubic], (g,), (tuple(shape), size, align_corners, scales))
    spatial = len(size)
    lead = tuple(shape[:len(shape) - spatial])
    grads = g.reshape(lead + (-1,))
    if cubic:  # ATen's bicubic backward: unfused; the width's taps outer, the height's inner; each add (g · w_h) · w_w
        (ih, wh), (iw, ww) = (_taps(shape[-2 + k], size[k], align_corners, scales[k], True, g.dtype, fused=False)
                              for k in range(2))
        n_w = shape[-1]
        target = (ih[:, None, None, :] * n_w + iw[None, :, :, None]).reshape(-1)  # (oh, ow, tap_w, tap_h)
        g4 = grads.reshape(lead + (len(ih), len(iw), 1, 1)) * wh[:, None, None, :]  # (…, oh, ow, 1, tap_h)
        values = (g4 * ww[None, :, :, None]).reshape(lead + (-1,))
        out = np.zeros(lead + (int(np.prod(shape[-spatial:], dtype=np.int64)),), g.dtype)
        np.add.at(out, (Ellipsis, target), values)
        return out.reshape(shape)
    else:
        index, weight = _flat_taps(shape, size, align_corners, scales, False, g.dtype)
        target = index.reshape(-1)  # (outputs, taps): the order the loop adds them in
        a = np.repeat(grads, index.shape[1], axis=-1)
        b = weight.reshape(-1)
    out = np.zeros(lead + (int(np.prod(shape[-spatial:], dtype=np.int64)),), g.dtype)
    # the adds in order, in rounds: round r is each input's r-th add (distinct inputs: one vector op)
    order = np.argsort(target, kind="stable")
    sorted_target = target[order]
    starts = np.flatnonzero(np.r_[True, sorted_target[1:] != sorted_target[:-1]])
    counts = np.diff(np.r_[starts, len(order)])
    if len(counts) and counts.max() > MAX_ROUNDS:  # a huge resize: one unfused sum (last bits may differ)
        np.add.at(out, (Ellipsis, target), a * b)
        return out.reshape(shape)
    busiest = np.argsort(-counts, kind="stable")
    for r in range(int(counts.max(initial=0))):
        groups = busiest[:np.searchsorted(-counts[busiest], -r, side="left")]  # the inputs with more than r adds
        k = order[starts[groups] + r]
        t = target[k]
        out[..., t] = _fma(a[..., k], b[k], out[..., t])
    return out.reshape(shape)


def _vjp(cubic):
    def vjp(g, ans, a, size, align_corners, scales):
        return _interpolate_backward(g, a.shape, size, align_corners, scales, cubic)
    return vjp


def _forward(cubic):
    def forward(a, size, align_corners, scales):
        return _interpolate(a, size, align_corners, scales, cubic)
    return forward


def _backward_forward(cubic):
    def backward(g, shape, size, align_corners, scales):
        return _interpolate_backward(g, shape, size, align_corners, scales, cubic)
    return backward


def _backward_vjp(cubic):
    def vjp(gg, ans, g, shape, size, align_corners, scales):
        if type(gg) is Graphed:
            return _graphed_op(_FORWARD[len(size), cubic], (gg,), (size, align_corners, scales))
        return _interpolate(gg, size, align_corners, scales, cubic)
    return vjp


def _sizes(arrays, params):
    shape = np.shape(arrays[0])
    return (tuple(shape[:len(shape) - len(params[0])]) + tuple(params[0]),)


_PARAMS = Params("keywords", ("output_size", "align_corners", "scales"))
_BACKWARD_PARAMS = Params("keywords", ("input_size", "output_size", "align_corners", "scales"))
_FORWARD = {(1, False): "upsample_linear1d", (2, False): "upsample_bilinear2d", (2, True): "upsample_bicubic2d"}
_BACKWARD = {key: name + "_backward" for key, name in _FORWARD.items()}
_LATEX = {False: r"\sum_{\text{outputs}} w_{\text{linear}}", True: r"\sum_{\text{outputs}} w_{\text{cubic}}"}
for (_dims, _cubic), _name in _FORWARD.items():
    _grad_fn = {"upsample_linear1d": "UpsampleLinear1D", "upsample_bilinear2d": "UpsampleBilinear2D",
                "upsample_bicubic2d": "UpsampleBicubic2D"}[_name]
    defop(_name, _grad_fn + "Backward0", "upsample", _forward(_cubic), (_vjp(_cubic), _LATEX[_cubic]), saves=False,
          params=_PARAMS, sizes=_sizes)
    defop(_name + "_backward", _grad_fn + "BackwardBackward0", "upsample_backward", _backward_forward(_cubic),
          (_backward_vjp(_cubic), r"\operatorname{upsample}"), saves=False, params=_BACKWARD_PARAMS,
          sizes=lambda arrays, params: (tuple(params[0]),))
