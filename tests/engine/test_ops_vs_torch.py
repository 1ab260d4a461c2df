"""Every op-table entry against PyTorch: forward value, input gradients and the grad_fn name.

Reuses the gradcheck cases; each op names the PyTorch call that builds the same node.
"""
from functools import partial

import numpy as np
import pytest
from test_gradcheck import CASES  # noqa: I001 — the gradcheck cases, shared

from engine.ops import OPS
from engine.tensor_core import Tensor, apply

torch = pytest.importorskip("torch")
F = torch.nn.functional

RED = {"mean": "mean", "sum": "sum", "none": "none"}


def _upsample(name, a, size, corners, scales):
    return getattr(torch.ops.aten, name)(a, list(size), corners, *scales)


def _upsample_backward(name, g, shape, size, corners, scales):
    return getattr(torch.ops.aten, name + "_backward")(g, list(size), list(shape), corners, *scales)

# op name -> function(torch inputs..., *params) building PyTorch's node for the same primitive
TORCH = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "where": torch.where,
    "pow_scalar": lambda a, c: a ** c,
    "rpow": lambda a, c: c ** a,
    "rsub": lambda a, c: c - a,
    "neg": lambda a: -a,
    "exp": torch.exp, "log": torch.log, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "relu": torch.relu, "abs": torch.abs, "sqrt": torch.sqrt,
    "reciprocal": torch.reciprocal,
    "clamp": lambda a, lo, hi: torch.clamp(a, lo, hi),
    "to_copy": lambda a, dt: a.to(torch.float32),  # float64 -> float64 would be no node at all in torch
    "sum": lambda a: a.sum(),
    "sum_dim": lambda a, dims, keep: a.sum(dims, keepdim=keep),
    "mean": lambda a: a.mean(),
    "mean_dim": lambda a, dims, keep: a.mean(dims, keepdim=keep),
    "norm": lambda a: a.norm(),
    "max": lambda a: a.max(),
    "min": lambda a: a.min(),
    "max_dim": lambda a, d, keep: a.max(d, keepdim=keep).values,
    "min_dim": lambda a, d, keep: a.min(d, keepdim=keep).values,
    "view": lambda a, shape: a.view(shape),
    "unsafe_view": lambda a, shape: a.transpose(0, 1).reshape(shape),  # a copy-then-view reshape
    "clone": lambda a: a.clone(),
    "t": lambda a: a.t(),
    "transpose": lambda a, d0, d1: a.transpose(d0, d1),
    "permute": lambda a, dims: a.permute(dims),
    "squeeze": lambda a: a.squeeze(),
    "squeeze_dim": lambda a, d: a.squeeze(d),
    "squeeze_dims": lambda a, dims: a.squeeze(dims),
    "matmul_squeeze": lambda a, dims: a.squeeze(dims),
    "unsqueeze": lambda a, d: a.unsqueeze(d),
    "expand": lambda a, shape: a.expand(shape),
    "select": lambda a, key: a[key],
    "slice": lambda a, key: a[key],
    "index": lambda a, key: a[tuple(torch.as_tensor(k) for k in key)] if isinstance(key, tuple) else a[torch.as_tensor(key)],
    "cat": lambda arrays, d: torch.cat(arrays, d),
    "stack": lambda arrays, d: torch.stack(arrays, d),
    "mm": torch.mm, "mv": torch.mv, "dot": torch.dot,
    "bmm": lambda a, b: torch.bmm(a, b.expand(a.shape[0], *b.shape[1:])),
    "addmm": lambda c, a, b: torch.addmm(c, a, b),
    "softmax": lambda a, d: torch.softmax(a, d),
    "log_softmax": lambda a, d: torch.log_softmax(a, d),
    "mse_loss": lambda a, b, r: F.mse_loss(a, b, reduction=r),
    "nll_loss": lambda a, t, r, w=None, ig=-100: F.nll_loss(a, t, None if w is None else torch.tensor(w),
                                                           ignore_index=ig, reduction=r),
    "binary_cross_entropy": lambda p, y, r, w=None: F.binary_cross_entropy(p, y, _opt(w), reduction=r),
    "binary_cross_entropy_with_logits": lambda x, y, r, w=None, pw=None: F.binary_cross_entropy_with_logits(
        x, y, _opt(w), reduction=r, pos_weight=_opt(pw)),
    "convolution": lambda x, w, b, s, p, d, g: (F.conv2d if x.ndim == 4 else F.conv1d)(x, w, b, s, p, d, g),
    "constant_pad_nd": lambda a, pad, v: F.pad(a, pad, value=v),
    "max_pool2d": lambda a, k, s, p, d, c: F.max_pool2d(a, k, s, p, d, c),
    "avg_pool2d": lambda a, k, s, p, c, i, o: F.avg_pool2d(a, k, s, p, c, i, o),
    "adaptive_avg_pool2d": lambda a, size: F.adaptive_avg_pool2d(a, size),
    "batch_norm": lambda x, w, b, rm, rv, training, eps: F.batch_norm(
        x, None if rm is None else rm.double(), None if rv is None else rv.double(), w, b, training, 0.0, eps),
    "layer_norm": lambda x, w, b, shape, eps: F.layer_norm(x, shape, w, b, eps),
    "gelu": lambda a, ap: F.gelu(a, approximate=ap),
    "leaky_relu": F.leaky_relu,
    "elu": lambda a, alpha, scale, inp: F.selu(a) if scale != 1 else F.elu(a, alpha),
    "celu": F.celu,
    "silu": F.silu,
    "softplus": F.softplus,
    "mish": F.mish,
    "hardtanh": F.hardtanh,
    "logsigmoid": F.logsigmoid,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "threshold": F.threshold,
    "mul_scalar": lambda a, c: a * c,  # (the C++ Tensor-Scalar overload: top node checked by name below)
    "div_scalar": lambda a, c: a / c,
    "masked_fill": lambda a, m, v: a.masked_fill(m, v),
    "smooth_l1_loss": lambda a, b, r, beta: F.smooth_l1_loss(a, b, reduction=r, beta=beta),
    "huber_loss": lambda a, b, r, delta: F.huber_loss(a, b, reduction=r, delta=delta),
    "unsafe_chunk": lambda a, i, n, d: a.unsafe_chunk(n, d)[i],
    "lstm_layer": lambda *a: _lstm(*a)[0],
    "lstm_cell_state": lambda *a: _lstm(*a)[2][0],
    "embedding": lambda w, idx, padding_idx: F.embedding(idx, w, padding_idx),
    "embedding_bag": lambda w, idx, offsets, mode, padding_idx, last: F.embedding_bag(
        idx, w, offsets, mode=mode, padding_idx=padding_idx, include_last_offset=last),
}


def _placed(g, shape, key, accumulate):
    """The backward of indexing: g written (added, for repeated indices) at key into zeros."""
    z = torch.zeros(shape, dtype=g.dtype)
    if accumulate:
        key = key if isinstance(key, tuple) else (key,)
        return z.index_put(tuple(torch.as_tensor(k) for k in key), g, accumulate=True)
    z[key] = g
    return z


# The % / fmod operators and the rest of the elementwise family (issue 21)
TORCH.update({
    "remainder": torch.remainder, "remainder_scalar": torch.remainder,
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"), "fmod": torch.fmod, "fmod_scalar": torch.fmod,
    **{n: getattr(torch, n) for n in ("exp2 log2 log10 rsqrt tan asin acos atan sinh cosh asinh acosh atanh trunc "
                                      "frac deg2rad rad2deg").split()},
})

# Ops that appear inside create_graph backward passes (engine/graphed.py).
TORCH.update({
    "select_backward": _placed, "slice_backward": _placed, "index_backward": _placed,
    "grad_copy": lambda a: torch.empty_like(a).copy_(a),  # what AccumulateGrad does under create_graph
})



def _put(a, v, key):
    """t[key] = v on a tensor with history (IndexPutBackward0, CopySlices, CopyBackwards by the key)."""
    y = a.clone()
    y[tuple(torch.as_tensor(k) if isinstance(k, np.ndarray) else k for k in key) if isinstance(key, tuple)
      else torch.as_tensor(key) if isinstance(key, np.ndarray) else key] = v
    return y


TORCH.update({"index_put": _put, "copy_slices": _put, "copy_into": _put})


def _overwrite(method, *args):
    """a.clone().zero_() and the like: the node PyTorch records, holding the values the engine's case wrote."""
    def run(a, values):
        y = a.clone()
        made = tuple(torch.full(a.shape, 0.5, dtype=a.dtype) if x == "p_tensor" else x for x in args)
        getattr(y, method)(*([float(values.flat[0])] if method == "fill_" else made))
        with torch.no_grad():
            y.copy_(torch.as_tensor(values))
        return y
    return run


TORCH.update({"overwrite_zero": _overwrite("zero_"), "overwrite_fill": _overwrite("fill_"),
              "overwrite_normal": _overwrite("normal_"), "overwrite_uniform": _overwrite("uniform_"),
              "overwrite_fill_tensor": lambda a, v: a.clone().fill_(v),
              "overwrite_bernoulli": _overwrite("bernoulli_", 0.5),
              "overwrite_bernoulli_tensor": lambda a, p, values: _drawn(a.clone().bernoulli_(p), values),
              "bernoulli_draw": lambda p, values: _drawn(torch.bernoulli(p), values),
              "as_strided_view": lambda a, key, strides: _as_strided(a, key),
              "overwrite_random_full": _overwrite("random_"), "overwrite_random_to": _overwrite("random_", 5),
              "overwrite_random_from_to": _overwrite("random_", 1, 5)})

def _drawn(y, values):
    """A random op's node (BernoulliBackward0/1) holding the values the engine's case drew."""
    with torch.no_grad():
        y.copy_(torch.as_tensor(values))
    return y


def _as_strided(a, key):
    """torch.as_strided at the elements `key` picks from a (a line of them: one stride)."""
    flat = np.ravel_multi_index(key, a.shape)
    return a.as_strided(flat.shape, (int(flat[1] - flat[0]),), int(flat[0]))


# Tensor functions tutorials use (issue 9 section 5)
_PADDED = {1: "1d", 2: "2d", 3: "3d"}
TORCH.update({
    "logsumexp": lambda a, dims, keep: torch.logsumexp(a, dims if dims is not None else tuple(range(a.ndim)), keep),
    "gather": lambda a, i, d: a.gather(d, i),
    "scatter": lambda a, i, src, d: a.scatter(d, i, src),
    "scatter_value": lambda a, i, d, v: a.scatter(d, i, v),
    "scatter_add": lambda a, i, src, d: a.scatter_add(d, i, src),
    "masked_fill_tensor": lambda a, m, v: a.masked_fill(m, v),
    "cumsum": lambda a, d: a.cumsum(d),
    "cumprod": lambda a, d: a.cumprod(d),
    "prod": lambda a: a.prod(),
    "prod_dim": lambda a, d, keep: a.prod(d, keepdim=keep),
    "sort": lambda a, d, desc: a.sort(dim=d, descending=desc).values,
    "sort_stable": lambda a, d, desc: a.sort(dim=d, descending=desc, stable=True).values,
    "topk": lambda a, k, d, largest: a.topk(k, d, largest).values,
    "repeat": lambda a, reps: a.repeat(reps),
    "split": lambda a, d, start, stop: a.split(stop - start, d)[start // (stop - start)],
    "split_with_sizes": lambda a, d, start, stop: a.split([start, stop - start, a.shape[d] - stop], d)[1],
    "tril": lambda a, k: a.tril(k),
    "triu": lambda a, k: a.triu(k),
    "diag_embed": lambda a, k: torch.diag(a, k),
    "diag": lambda a, k: torch.diag(a, k),
    "diagonal": lambda a, k, d1, d2: a.diagonal(k, d1, d2),
    "flip": lambda a, dims: a.flip(dims),
    "roll": lambda a, shifts, dims: a.roll(shifts, dims) if dims is not None else a.roll(shifts[0]),
    "index_select": lambda a, i, d: a.index_select(d, i),
    "clamp_min": lambda a, lo: a.clamp_min(lo),
    "clamp_max": lambda a, hi: a.clamp_max(hi),
    "erf": torch.erf, "log1p": torch.log1p, "expm1": torch.expm1, "atan2": torch.atan2,
    "hypot": torch.hypot, "xlogy": torch.xlogy,  # issue 21 §3
    "fmax": torch.fmax, "fmin": torch.fmin, "copysign": torch.copysign, "sinc": torch.sinc, "logaddexp": torch.logaddexp,
    "copysign_scalar": lambda a, c: torch.copysign(a, c), "take": torch.take, "rot90": torch.rot90,
    "logit": lambda a, eps: torch.logit(a, eps),
    "take_backward": lambda g, shape, index: torch.zeros(shape, dtype=g.dtype).put(torch.as_tensor(index), g,
                                                                                 accumulate=True),
    "baddbmm": lambda c, a, b, beta, alpha: torch.baddbmm(c, a, b, beta=beta, alpha=alpha),
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "sign": torch.sign,
    "nan_to_num": lambda a, nan, posinf, neginf: torch.nan_to_num(a, nan, posinf, neginf),
    "round_decimals": lambda a, dec: torch.round(a, decimals=dec),
    "var": lambda a, dims, c, keep: a.var(dims, correction=c, keepdim=keep),
    "std": lambda a, dims, c, keep: a.std(dims, correction=c, keepdim=keep),
    "vector_norm": lambda a, p, dims, keep: torch.linalg.vector_norm(a, p, dims, keep),
    # F.pairwise_distance's at::norm (NormBackward1): torch.norm itself now calls linalg.vector_norm
    "norm_dim": lambda a, p, dims, keep: torch._VF.norm(a, p, dims, keep),
    **{f"reflection_pad{_PADDED[n]}": lambda a, pad: F.pad(a, pad, mode="reflect") for n in (1, 2, 3)},
    **{f"replication_pad{_PADDED[n]}": lambda a, pad: F.pad(a, pad, mode="replicate") for n in (1, 2, 3)},
})

# issue 10: circular padding, NLL over (N, C, H, W), one step of an unbound sequence
TORCH.update({
    "circular_pad": lambda a, pad, mode: F.pad(a, pad, mode=mode),
    "nll_loss2d": lambda a, t, r, w=None, ig=-100: F.nll_loss(a, t, None if w is None else torch.tensor(w),
                                                              ignore_index=ig, reduction=r),
    "unbind_step": lambda a, i: a.unbind(0)[i],
})
# torch.linalg (engine/linalg_ops.py): singular values and vectors, amax/amin. A singular vector's sign is
# LAPACK's choice: torch's are flipped (constant signs) to numpy's before comparing values and gradients.


def _svd_signs(a, which):
    U, _, Vh = np.linalg.svd(a.detach().numpy(), full_matrices=False)
    t = torch.linalg.svd(a, full_matrices=False)
    if which == "U":
        return t.U * torch.tensor(np.sign((U * t.U.detach().numpy()).sum(-2, keepdims=True)))
    return t.Vh * torch.tensor(np.sign((Vh * t.Vh.detach().numpy()).sum(-1, keepdims=True)))


TORCH.update({
    "svdvals": torch.linalg.svdvals,
    "svd_u": lambda a: _svd_signs(a, "U"),
    "svd_vh": lambda a: _svd_signs(a, "Vh"),
    "amax": lambda a, dims, keep: torch.amax(a, dims, keep),
    "amin": lambda a, dims, keep: torch.amin(a, dims, keep),
})
# issue 21: the rows of engine/tensor_tutorial_names.py and tensor_shape.py's in-place shape ops
TORCH.update({
    "addmm_scaled": lambda c, a, b, beta, alpha: torch.addmm(c, a, b, beta=beta, alpha=alpha),
    "index_add": lambda a, i, s, d, alpha: a.index_add(d, i, s, alpha=alpha),
    "masked_select": torch.masked_select,
    "clone_contiguous": lambda a: a.clone(),
    "trace": torch.trace,
    "lerp_scalar": lambda s, e, w: torch.lerp(s, e, w),
    "lerp_tensor": torch.lerp,
    "squeeze_inplace": lambda a: (a * 1).squeeze_(),
    "squeeze_dim_inplace": lambda a, d: (a * 1).squeeze_(d),
    "squeeze_dims_inplace": lambda a, dims: (a * 1).squeeze_(dims),
    "unsqueeze_inplace": lambda a, d: (a * 1).unsqueeze_(d),
})
# issue 21 §3: engine/ops_linalg_more.py (cdist's cases have at most 25 rows: torch's direct CdistBackward0)
TORCH.update({
    "linalg_det": torch.linalg.det,
    "linalg_inv": torch.linalg.inv,
    "linalg_cross": lambda a, b, dim: torch.linalg.cross(a, b, dim=dim),
    "cdist": lambda a, b, p: torch.cdist(a, b, p=p),
    "euclidean_dist": torch._euclidean_dist,
    "cummax": lambda a, dim: torch.cummax(a, dim).values,
    "cummin": lambda a, dim: torch.cummin(a, dim).values,
})
# issue 21 §3: torch.std_mean / var_mean, one row per output of torch's one node
def _spread_and_mean(fn, output):
    return lambda a, dims, c, keep: getattr(torch, fn)(a, dims, correction=c, keepdim=keep)[output]


TORCH.update({f"{fn}_{part}": _spread_and_mean(fn, i) for fn in ("std_mean", "var_mean")
              for i, part in enumerate((fn[:3], "mean"))})
# issue 21 (engine/ops_stats.py): medians, nansum, dist, the fused products, add / sub with alpha
TORCH.update({
    "median": torch.median,
    "erfc": torch.erfc, "erfinv": torch.erfinv,  # issue 21 §3 (engine/ops_extra_names.py, engine/ops_gamma.py)
    "lgamma": torch.lgamma, "digamma": torch.digamma, "polygamma": lambda a, n: torch.polygamma(n, a),
    "kthvalue": lambda a, k, dim, keep: torch.kthvalue(a, k, dim, keepdim=keep).values,
    "mode": lambda a, dim, keep: torch.mode(a, dim, keepdim=keep).values,
    "aminmax_min": lambda a, dims, keep: torch.aminmax(a, dim=dims[0] if len(dims) == 1 else None, keepdim=keep).min,
    "aminmax_max": lambda a, dims, keep: torch.aminmax(a, dim=dims[0] if len(dims) == 1 else None, keepdim=keep).max,
    "median_dim": lambda a, dim, keep: torch.median(a, dim, keepdim=keep).values,
    "nansum": lambda a, dims, keep: torch.nansum(a, dims, keepdim=keep) if dims is not None else torch.nansum(a),
    "dist": lambda a, b, p: torch.dist(a, b, p),
    "addcmul": lambda a, t1, t2, v: torch.addcmul(a, t1, t2, value=v),
    "addcdiv": lambda a, t1, t2, v: torch.addcdiv(a, t1, t2, value=v),
    "add_scaled": lambda a, b, alpha: torch.add(a, b, alpha=alpha),
    "unfold": lambda a, dim, size, step: a.unfold(dim, size, step),
    "upsample_nearest1d": lambda a, size, scales: torch._C._nn.upsample_nearest1d(a, list(size), *scales),
    "upsample_nearest2d": lambda a, size, scales: torch._C._nn.upsample_nearest2d(a, list(size), *scales),
    "unfold_backward": lambda g, shape, dim, size, step: torch.ops.aten.unfold_backward(g, list(shape), dim, size, step),
    "pack_padded_sequence": lambda a, sizes, batch_first: torch._VF._pack_padded_sequence(
        a, torch.tensor([sum(1 for b in sizes if b > i) for i in range(sizes[0])]), batch_first)[0],
    **{name: partial(_upsample, name) for name in ("upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d")},
    **{name + "_backward": partial(_upsample_backward, name)
       for name in ("upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d")},
    "sub_scaled": lambda a, b, alpha: torch.sub(a, b, alpha=alpha),
})
# issue 21 (engine/ops_linalg_solve.py): vectors compared up to sign (np.linalg's choice, as _svd_signs)
def _eigh_signs(a, upper):
    _, V = np.linalg.eigh(a.detach().numpy(), UPLO="U" if upper else "L")
    t = torch.linalg.eigh(a, UPLO="U" if upper else "L").eigenvectors
    return t * torch.tensor(np.sign((V * t.detach().numpy()).sum(-2, keepdims=True)))


def _full_svd_signs(a, which):
    U, _, Vh = np.linalg.svd(a.detach().numpy(), full_matrices=True)
    t = torch.linalg.svd(a, full_matrices=True)
    # (the cases leave one column past min(m, n): unique up to sign as well; the gradient ignores it, as torch's does)
    if which == "U":
        return t.U * torch.tensor(np.sign((U * t.U.detach().numpy()).sum(-2, keepdims=True)))
    return t.Vh * torch.tensor(np.sign((Vh * t.Vh.detach().numpy()).sum(-1, keepdims=True)))


TORCH.update({
    "linalg_solve": lambda a, b, vector, left: torch.linalg.solve(a, b, left=left),
    "linalg_pinv": lambda a, rtol: torch.linalg.pinv(a, rtol=rtol),
    "linalg_lstsq": lambda a, b, vector: torch.linalg.lstsq(a, b).solution,
    "linalg_eigh_values": lambda a, upper: torch.linalg.eigvalsh(a, UPLO="U" if upper else "L"),
    "linalg_eigh_vectors": _eigh_signs,
    "linalg_qr_q": lambda a, mode: torch.linalg.qr(a, mode=mode)[0],
    "linalg_qr_r": lambda a, mode: torch.linalg.qr(a, mode=mode)[1],
    "linalg_cholesky": lambda a, upper: torch.linalg.cholesky(a, upper=upper),
    "cholesky": lambda a, upper: torch.cholesky(a, upper=upper),
    "linalg_slogdet": lambda a: torch.linalg.slogdet(a).logabsdet,
    "svd_u_full": lambda a: _full_svd_signs(a, "U"),
    "svd_vh_full": lambda a: _full_svd_signs(a, "Vh"),
})
TOP_NODE_SOLVE = {"linalg_eigh_vectors": "LinalgEighBackward0", "svd_u_full": None, "svd_vh_full": None,
                  "linalg_eigh_values": "LinalgEighBackward0"}
# Where the torch expression above reaches the primitive through a different top node.
TOP_NODE = {"lstm_cell_state": None, "lstm_layer": None,  # flip/select around torch's fused layer: checked in test_layers
            "select_backward": None, "slice_backward": None,  # torch: CopySlices of a written zeros tensor
            "mul_scalar": "MulBackward1", "div_scalar": "DivBackward1", "unsafe_view": "UnsafeViewBackward0", "bmm": None, "matmul_squeeze": "SqueezeBackward4"}
TOP_NODE.update({"svd_u": "LinalgSvdBackward0", "svd_vh": "LinalgSvdBackward0"})
TOP_NODE.update(TOP_NODE_SOLVE)  # torch's side ends in the sign flip


def _rrelu_given_noise(a, noise, lower, upper, training):
    """In training torch draws its own noise: the given one applied by hand (the node's name: TOP_NODE)."""
    if training:
        return a * torch.where(a > 0, torch.ones((), dtype=a.dtype), noise.to(a.dtype))
    return torch.ops.aten.rrelu_with_noise(a, torch.empty_like(a), lower, upper, False)


# nn.PixelShuffle, AdaptiveMaxPool, Bilinear, RReLU (engine/ops_more_modules.py)
TORCH.update({
    "pixel_shuffle": lambda a, r: F.pixel_shuffle(a, r),
    "pixel_unshuffle": lambda a, r: F.pixel_unshuffle(a, r),
    "adaptive_max_pool2d": lambda a, size: F.adaptive_max_pool2d(a, size),
    "trilinear": lambda a, b, c, e1, e2, e3, sd: torch.ops.aten._trilinear(a, b, c, list(e1), list(e2), list(e3), list(sd)),
    "rrelu_with_noise": _rrelu_given_noise,
    "add_scalar": lambda a, c: torch.ops.aten.add.Scalar(a, c),
})
TOP_NODE.update({"rrelu_with_noise": "RreluWithNoiseBackward0"})

def _lstm(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    """PyTorch's fused CPU LSTM layer (what nn.LSTM calls): (output, h_n, c_n); reverse runs backwards in time."""
    xs = x.flip(0) if reverse else x
    out, h, c = torch._VF.lstm(xs, (h0[None], c0[None]), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, False, False, False)
    return (out.flip(0) if reverse else out), h, c


def _opt(w):
    return None if w is None else torch.tensor(w)


CASE_IDS = [(n, i) for n in sorted(TORCH) for i in range(len(CASES[n]))]


def test_every_differentiable_op_is_cross_checked():
    # (grad_fn=<NotImplemented> ops have no gradient to compare: tests/engine/test_surface_ops_vs_torch.py)
    missing = sorted(n for n, op in OPS.items() if op.grad_fn not in (None, "NotImplemented") and n not in TORCH)
    assert not missing, f"add a PyTorch equivalent for: {missing}"


def _pair(x):
    if isinstance(x, list):
        pairs = [_pair(a) for a in x]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    if x is None:
        return None, None  # an optional input left out
    arr = np.asarray(x)
    if arr.dtype == np.float64:
        e = Tensor._wrap(arr.copy(), requires_grad=True)
        t = torch.tensor(arr.copy(), requires_grad=True)
    else:
        e = Tensor._wrap(arr.copy())
        t = torch.tensor(arr.copy())
    return e, t


@pytest.mark.parametrize("name,case", CASE_IDS, ids=[f"{n}-{i}" for n, i in CASE_IDS])
def test_op_matches_pytorch(name, case):
    op = OPS[name]
    inputs, params = CASES[name][case]
    pairs = [_pair(x) for x in inputs]
    e_in = [p[0] for p in pairs]
    t_in = [p[1] for p in pairs]
    out_e = apply(op, e_in[0], params) if op.variadic else apply(op, tuple(e_in), params)
    if name == "unsafe_view":
        out_t = TORCH[name](t_in[0], *params)
        out_e = apply(op, (e_in[0].transpose(0, 1).clone(),), params)
    else:
        out_t = TORCH[name](*t_in, *params)
    np.testing.assert_allclose(np.asarray(out_e._data), out_t.detach().numpy(), rtol=1e-6, atol=1e-8)
    expected_node = TOP_NODE.get(name, type(out_t.grad_fn).__name__)
    if expected_node is not None:
        assert type(out_e.grad_fn).__name__ == expected_node
    w = np.random.default_rng(2).normal(size=out_t.shape)
    (out_e * Tensor._wrap(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    flat_e = [t for x in e_in for t in (x if isinstance(x, list) else [x])]
    flat_t = [t for x in t_in for t in (x if isinstance(x, list) else [x])]
    for te, tt in zip(flat_e, flat_t):
        if tt is not None and tt.requires_grad:
            assert te.grad is not None
            np.testing.assert_allclose(te.grad._data, tt.grad.numpy(), rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("shape", [(), (13,), (3, 7), (4099,)])
def test_tanh_backward_is_atens_bit_for_bit_in_float32(shape):
    # ATen rounds 1 - y*y once (an fma); karpathy's manual backprop compares gradients with ==
    rng = np.random.default_rng(0)
    y = np.tanh(rng.standard_normal(shape)).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    y, g = np.asarray(y), np.asarray(g)
    theirs = torch.ops.aten.tanh_backward(torch.from_numpy(g), torch.from_numpy(y)).numpy()
    from engine.ops_math import _tanh_vjp

    assert np.array_equal(_tanh_vjp(g, y, None), theirs)
