"""torch.nn.functional for the layers: convolution, pooling, padding (re-exported by nn/functional.py).

Shape checks raise PyTorch's messages before any op runs; the ops themselves are op-table entries
(engine/ops.py; their numpy in engine/ops_conv.py, ops_nn.py, ops_rnn.py) so the graph shows PyTorch's nodes.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import batch_norm_cpu, ops_conv
from ..creation import zeros
from ..dispatch import apply
from ..dtypes import legacy_tensor_type
from ..grad_mode import no_grad as _no_grad
from ..ops import OPS
from ..product_errors import check_conv_dtypes
from ..random import dropout_noise
from ..tensor_core import Tensor


def _tuple(v, n, name="value"):
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _size(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


# ---------------------------------------------------------------- convolution
def _conv(x, weight, bias, stride, padding, dilation, groups, nd):
    name = f"conv{nd}d"
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {_size(x.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError("weight should have at least three dimensions" if weight.ndim < 3 else
                           f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional weight {_size(weight.shape)}, "
                           f"but got {x.ndim}-dimensional input of size {_size(x.shape)} instead")
    for pname, v in (("stride", stride), ("dilation", dilation)) + ((("padding", padding),)
                                                                    if not isinstance(padding, str) else ()):
        if isinstance(v, (list, tuple)) and len(v) != nd:
            raise RuntimeError(f"expected {pname} to be a single integer value or a list of {nd} values to match the "
                               f"convolution dimensions, but got {pname}={list(v)}")
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    batched = x.ndim == nd + 2
    xb = x if batched else x.unsqueeze(0)
    groups = int(groups)
    o = weight.shape[0]
    if o % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got "
                           f"weight of size [{_size(weight.shape)}] instead")
    if xb.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_size(weight.shape)}, expected "
                           f"input{_size(xb.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{xb.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise RuntimeError(f"Given weight of size {_size(weight.shape)}, expected bias to be 1-dimensional with {o} "
                           f"elements, but got bias of size {_size(bias.shape)} instead")
    check_conv_dtypes(x._data.dtype, weight._data.dtype, None if bias is None else bias._data.dtype)
    k = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (k[i] - 1) for i in range(nd)]
            padding = tuple(t // 2 for t in total)
            extra = [t - 2 * (t // 2) for t in total]
            if any(extra):
                # PyTorch pads the odd remainder on the far side with a separate pad node, then convolves.
                pad = []
                for e in reversed(extra):
                    pad += [0, e]
                xb = apply(OPS["constant_pad_nd"], (xb,), (tuple(pad), 0.0))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    padding = _tuple(padding, nd)
    spatial = xb.shape[2:]
    padded = tuple(spatial[i] + 2 * padding[i] for i in range(nd))
    eff = tuple(dilation[i] * (k[i] - 1) + 1 for i in range(nd))
    if any(padded[i] < eff[i] for i in range(nd)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    out = apply(OPS["convolution"], (xb, weight, bias), (stride, padding, dilation, groups))
    return out if batched else apply(OPS["squeeze_dim"], (out,), (0,))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002 — torch's names
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


_MODE_OPS = {"reflect": "reflection_pad", "replicate": "replication_pad", "circular": "circular_pad"}


def _mode_pad(input, pad, mode):  # noqa: A002
    """reflect / replicate / circular, with PyTorch's checks: 2 values pad the last dim of a 2-D/3-D input,
    4 the last two of a 3-D/4-D one (5-D inputs and 6 values, volumetric padding, are not supported)."""
    if mode not in _MODE_OPS:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode in ("reflect", "replicate"):
        return _pad_modes(input, tuple(int(p) for p in pad), mode)
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    pad = tuple(int(p) for p in pad)
    dims = len(pad) // 2
    if len(pad) == 6 and input.ndim in (4, 5):
        raise NotImplementedError(f"F.pad: 3-D (volumetric) {mode} padding is not supported by flowgrad")
    if len(pad) % 2 or dims not in (1, 2) or input.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    shape = list(input.shape)
    for i in range(dims):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= shape[d] or hi >= shape[d]):
            raise RuntimeError(f"Argument #{2 * dims + 2}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input {shape}")
        if mode == "circular" and (lo > shape[d] or hi > shape[d]):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if shape[d] + lo + hi < 1:
            raise RuntimeError(f"input (H: {shape[d]}) is too small. Calculated output H: {shape[d] + lo + hi}")
    name = "circular_pad" if mode == "circular" else f"{_MODE_OPS[mode]}{dims}d"
    return apply(OPS[name], (input,), (pad, mode))


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    if mode != "constant":
        return _mode_pad(input, pad, mode)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length must be divisible by 2" if len(pad) % 2 else
                           "Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    return apply(OPS["constant_pad_nd"], (input,), (tuple(int(p) for p in pad), 0.0 if value is None else value))


_PAD_MODES = ("Supported combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_modes(x, pad, mode):
    """Reflect / replicate padding of the last 1, 2 or 3 dims: PyTorch's ReflectionPad{1,2,3}D /
    ReplicationPad{1,2,3}D nodes, with their checks."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    if k not in (1, 2, 3) or x.ndim not in (k + 1, k + 2):
        if k > x.ndim:
            raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                               f"padding length {len(pad)} and input of dimension {x.ndim}")
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {x.ndim}D input tensor.\n{_PAD_MODES}")
    if any(n == 0 for n in (x.shape[1:] if x.ndim == k + 2 else x.shape)):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(x.shape)}")
    if mode == "reflect":
        for i in range(k):
            left, right, n = pad[2 * i], pad[2 * i + 1], x.shape[-1 - i]
            if left >= n or right >= n:
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({left}, {right}) at dimension {x.ndim - 1 - i} of "
                                   f"input {list(x.shape)}")
    for i in range(k):  # negative pads crop: never below one element (PyTorch's check)
        n, out = x.shape[-1 - i], x.shape[-1 - i] + pad[2 * i] + pad[2 * i + 1]
        if out < 1:
            raise RuntimeError(f"input (H: {n}) is too small. Calculated output H: {out}")
    name = ("reflection_pad" if mode == "reflect" else "replication_pad") + f"{k}d"
    return apply(OPS[name], (x,), (pad,))


# ---------------------------------------------------------------- pooling
def _pool_args(kernel_size, stride, padding, dilation, nd):
    k = _tuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _tuple(stride, nd)
    return k, s, _tuple(padding, nd), _tuple(dilation, nd)


def _check_pool(x, k, s, p, d, ceil_mode):
    for i in range(2):
        if p[i] > ((k[i] - 1) * d[i] + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    oh = ops_conv.pool_size(x.shape[-2], k[0], s[0], p[0], d[0], ceil_mode)
    ow = ops_conv.pool_size(x.shape[-1], k[1], s[1], p[1], d[1], ceil_mode)
    if oh < 1 or ow < 1:
        c = x.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{x.shape[-2]}x{x.shape[-1]}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")


def _max_pool_indices(x, k, s, p, d, ceil_mode):
    """PyTorch's indices: each maximum's flat position in its (unpadded) input plane."""
    _, _, arg = ops_conv.max_pool_indices(x._data, k, s, p, d, ceil_mode)
    oh, ow = arg.shape[2:]
    i, j = np.divmod(arg, k[1])
    h = np.arange(oh)[:, None] * s[0] - p[0] + i * d[0]
    w = np.arange(ow)[None, :] * s[1] - p[1] + j * d[1]
    idx = (h * x.shape[-1] + w).astype(np.int64)
    return Tensor._wrap(idx if x.ndim == 4 else idx[0])


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    if input.ndim not in (3, 4) or input.numel() == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, 2)
    _check_pool(input, k, s, p, d, ceil_mode)
    out = apply(OPS["max_pool2d"], (input,), (k, s, p, d, bool(ceil_mode)))
    return (out, _max_pool_indices(input, k, s, p, d, ceil_mode)) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    if input.ndim not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{_size(input.shape)}")
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, 1)
    x2 = input.unsqueeze(-2)
    res = max_pool2d(x2, (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), Tensor._wrap(res[1]._data.squeeze(-2))
    return res.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, 2)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool(input, k, s, p, (1, 1), ceil_mode)
    return apply(OPS["avg_pool2d"], (input,), (k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D input to avg_pool1d, but got input of size: {_size(input.shape)}")
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, 1)
    out = avg_pool2d(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, ceil_mode, count_include_pad)
    return out.squeeze(-2)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_size(input.shape)}")
    size = _tuple(output_size, 2)  if not isinstance(output_size, (list, tuple)) else tuple(output_size)
    size = tuple(int(input.shape[-2 + i]) if v is None else int(v) for i, v in enumerate(size))
    if size == (1, 1):
        return input.mean((-1, -2), keepdim=True)  # PyTorch's shortcut: a MeanBackward1 node
    return apply(OPS["adaptive_avg_pool2d"], (input,), (size,))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """Resizing of (N, C, L) or (N, C, H, W): 'nearest' (each output the input element ATen's nearest_idx picks),
    'linear' (3-D), 'bilinear' and 'bicubic' (4-D): weighted taps (engine/ops_upsample.py). One node each, named
    as PyTorch's (UpsampleBilinear2DBackward0, ...)."""
    weighted = {"linear": 3, "bilinear": 4, "bicubic": 4}
    if mode not in ("nearest", *weighted):
        if mode in ("trilinear", "area", "nearest-exact"):
            raise NotImplementedError(f"F.interpolate: mode={mode!r} is not available in flowgrad (nearest, linear, "
                                      "bilinear and bicubic are)")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
                                  f"(got {mode})")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias:
        raise NotImplementedError("F.interpolate(antialias=True) is not available in flowgrad")
    if mode in ("linear", "bilinear") and input.ndim != weighted[mode] and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {weighted[mode]}D input")
    if input.ndim not in (3, 4) or (mode == "bicubic" and input.ndim != 4):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
                                  f"modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
                                  f"(got {mode})")
    spatial = input.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * spatial
        if len(sizes) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {list(sizes)}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        sizes = tuple(int(s) for s in sizes)
        scales = (None,) * spatial
    else:
        factors = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * spatial
        if len(factors) != spatial:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                             f"{list(factors)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "scale_factor in (s1, s2, ...,sK) format.")
        factors = tuple(float(f) for f in factors)
        sizes = tuple(int(np.floor(n * f)) for n, f in zip(input.shape[2:], factors))
        scales = (None,) * spatial if recompute_scale_factor else factors
    if any(s <= 0 for s in sizes):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(f'{d}: {n}' for d, n in enumerate(input.shape[2:], 1))}) and output "
                           f"({', '.join(f'{d}: {n}' for d, n in enumerate(sizes, 1))})")
    if mode == "nearest":
        return apply(OPS["upsample_nearest1d" if spatial == 1 else "upsample_nearest2d"], (input,), (sizes, scales))
    name = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d", "bicubic": "upsample_bicubic2d"}[mode]
    return apply(OPS[name], (input,), (sizes, bool(align_corners), scales))


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """PyTorch's composite: the 2-d pool of input.unsqueeze(-2) to (1, output_size), squeezed back (its nodes:
    SqueezeBackward1 over AdaptiveAvgPool2DBackward0, or MeanBackward1 for one output)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {_size(input.shape)}")
    size = output_size[0] if isinstance(output_size, (list, tuple)) and len(output_size) == 1 else output_size
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"adaptive_avg_pool1d(): argument 'output_size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


# ---------------------------------------------------------------- normalisation
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,  # noqa: A002
               eps=1e-05):
    c = input.shape[1] if input.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _check_same_dtype(input, running_mean, running_var, weight, bias)
    if training:
        size = input.numel() // c if c else 0
        if size == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"torch.Size({list(input.shape)})")
    x = input._data
    if training and running_mean is not None:
        # The running statistics move outside the graph, as PyTorch's kernel updates them in place.
        if x.dtype == np.float32 and running_mean._data.dtype == running_var._data.dtype == np.float32:
            running_mean._data, running_var._data = batch_norm_cpu.running_update(
                x, running_mean._data, running_var._data, momentum)
        else:
            axes = (0,) + tuple(range(2, x.ndim))
            n = x.size // c
            mean = x.mean(axis=axes)
            var = x.var(axis=axes) * (n / max(n - 1, 1))
            m = momentum
            running_mean._data = ((1 - m) * running_mean._data + m * mean).astype(running_mean._data.dtype)
            running_var._data = ((1 - m) * running_var._data + m * var).astype(running_var._data.dtype)
    stats = (None, None) if training else (running_mean, running_var)
    return apply(OPS["batch_norm"], (input, weight, bias) + stats, (bool(training), float(eps)))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):  # noqa: A002
    shape = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    _check_same_dtype(input, weight, bias)
    return apply(OPS["layer_norm"], (input, weight, bias), (shape, float(eps)))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,  # noqa: A002
                  momentum=0.1, eps=1e-05):
    """ATen's composite: batch_norm over the input seen as one sample of N * C channels (the weight, bias and running
    statistics repeated N times), then the running statistics the mean of their N copies (the graph ends in
    ViewBackward0 over NativeBatchNormBackward0)."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(input.shape)})")
    n, c = input.shape[0], input.shape[1]
    copies = [None if t is None else t.repeat(n) for t in (running_mean, running_var, weight, bias)]
    out = batch_norm(input.contiguous().view(1, n * c, *input.shape[2:]), *copies[:2], *copies[2:], use_input_stats,
                     momentum, eps)
    with _no_grad():
        for kept, copy in zip((running_mean, running_var), copies[:2]):
            if kept is not None:
                kept.copy_(copy.view(n, c).mean(0))
    return out.view(*input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """ATen's composite: x * rsqrt(mean(x ** 2 over the normalized dims) + eps), times weight; eps None is the
    dtype's machine epsilon (the graph: PowBackward0, MeanBackward1, AddBackward0, RsqrtBackward0, MulBackward0)."""
    shape = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:  # (no comma after the *: rms_norm's words)
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps) if input._data.dtype.kind == "f" else float(np.finfo(np.float32).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    scale = (input ** 2).mean(dims, keepdim=True)
    scale.add_(eps)  # (in place, as ATen's add_)
    out = input * scale.rsqrt()
    return out if weight is None else out * weight


def _check_same_dtype(input, *params):  # noqa: A002
    """batch_norm / layer_norm: PyTorch's CPU kernels take float16 input with float32 parameters, nothing else mixed."""
    dtype = input._data.dtype
    for t in params:
        if t is not None and t._data.dtype != dtype and not (dtype == np.float16 and t._data.dtype == np.float32):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


# ---------------------------------------------------------------- dropout
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input, p, training, noise_shape):  # noqa: A002
    _check_p(p)
    if not training or p == 0:
        return input

    # PyTorch's CPU dropout: input * (bernoulli(1 - p) / (1 - p)), one MulBackward0 node.
    return input * Tensor._wrap(dropout_noise(noise_shape, p, input._data.dtype))


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    return _dropout(input, p, training, input.shape)


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    lead = input.shape[:-1]
    return _dropout(input, p, training, tuple(lead) + (1,))


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002

    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    elif input.ndim != 4:
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    # NOTE: PyTorch reads a 3-D input as (N, C, L) here (with a warning), so the noise is (N, C, 1).
    return _dropout(input, p, training, tuple(input.shape[:2]) + (1,) * (input.ndim - 2))


# ---------------------------------------------------------------- embedding
def check_indices(data, fn):
    """`data` as indices of rows: integers only, in ATen's words (embedding and embedding_bag check alike)."""
    if data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                           f"Int; but got torch.{legacy_tensor_type(data.dtype)} instead (while checking arguments for "
                           f"{fn})")
    return data


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,  # noqa: A002
              sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding's max_norm, scale_grad_by_freq and sparse are not supported by flowgrad")
    idx = check_indices(input._data if isinstance(input, Tensor) else np.asarray(input), "embedding")
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return apply(OPS["embedding"], (weight, input), (padding_idx,))


# ---------------------------------------------------------------- activations
def _act(name, x, *params):
    return apply(OPS[name], (x,), params)


def gelu(input, approximate="none"):  # noqa: A002
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _act("gelu", input, approximate)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    return _act("leaky_relu", input, negative_slope)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    return _act("elu", input, alpha, 1.0, 1.0)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):  # noqa: A002
    return _act("elu", input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    return _act("celu", input, alpha)


def silu(input, inplace=False):  # noqa: A002
    return _act("silu", input)


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    return _act("softplus", input, beta, threshold)


def mish(input, inplace=False):  # noqa: A002
    return _act("mish", input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    return _act("hardtanh", input, min_val, max_val)


def relu6(input, inplace=False):  # noqa: A002
    return _act("hardtanh", input, 0.0, 6.0)


def logsigmoid(input):  # noqa: A002
    return _act("logsigmoid", input)


def hardswish(input, inplace=False):  # noqa: A002
    return _act("hardswish", input)


def hardsigmoid(input, inplace=False):  # noqa: A002
    return _act("hardsigmoid", input)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    return _act("threshold", input, threshold, value)


def softsign(input):  # noqa: A002
    return input / (input.abs() + 1)


def tanhshrink(input):  # noqa: A002
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    return (-input).softmax(dim if dim is not None else -1)


def conv_transpose(x, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    """F.conv_transpose1d / 2d composed from table ops: the input spread out by the stride (zeros between its
    elements), padded by dilation * (kernel - 1) - padding on each side (+ output_padding after; a negative pad crops),
    then a stride-1 convolution with each group's weight transposed and flipped. The same numbers as PyTorch's kernel
    up to the order of its sums; the graph shows those primitives' nodes, not one ConvolutionBackward0."""
    name = f"conv_transpose{nd}d"
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{name}(): argument 'input' and 'weight' must be Tensor")
    if x.ndim not in (nd + 1, nd + 2) or weight.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(x.shape)}")
    stride, padding = _tuple(stride, nd), _tuple(padding, nd)
    output_padding, dilation = _tuple(output_padding, nd), _tuple(dilation, nd)
    groups = int(groups)
    batched = x.ndim == nd + 2
    xb = x if batched else x.unsqueeze(0)
    c_in, c_out_g, kernel = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if xb.shape[1] != c_in or c_in % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(xb.shape)} "
                           f"to have {c_in} channels, but got {xb.shape[1]} channels instead")
    for i in range(nd):
        if output_padding[i] >= max(stride[i], dilation[i]) or min(stride[i], dilation[i]) < 1 or padding[i] < 0:
            raise RuntimeError("output padding must be smaller than either stride or dilation, stride and dilation "
                               "positive and padding non-negative")
    spatial = xb.shape[2:]
    spread = tuple((spatial[i] - 1) * stride[i] + 1 for i in range(nd))
    if any(s > 1 for s in stride):
        up = zeros((xb.shape[0], c_in, *spread), dtype=xb.dtype)
        index = (slice(None), slice(None), *(slice(None, None, s) for s in stride))
        up[index] = xb
    else:
        up = xb
    pads = []
    for i in reversed(range(nd)):  # F.pad's order: last dim first
        edge = dilation[i] * (kernel[i] - 1) - padding[i]
        pads += [edge, edge + output_padding[i]]
    up = pad(up, pads)
    w = weight.reshape(groups, c_in // groups, c_out_g, *kernel).transpose(1, 2)
    w = w.reshape(groups * c_out_g, c_in // groups, *kernel).flip(list(range(2, nd + 2)))
    out = _conv(up, w, bias, 1, 0, dilation, groups, nd)
    return out if batched else out.squeeze(0)
