"""torch.nn.functional: pixel_shuffle / pixel_unshuffle, adaptive_max_pool1d / 2d, margin_ranking_loss,
triplet_margin_loss, gaussian_nll_loss, bilinear and rrelu (re-exported by nn/functional.py).

Each checks its arguments as PyTorch does, in PyTorch's order and words (its Python code first, then its argument
parser, then ATen's checks), and is built as ATen builds it: the op-table primitives PyTorch gives a node of their own
are in engine/ops_more_modules.py, the rest composes existing ops so the graph ends in PyTorch's nodes.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import random as _random
from ..boundary import expect_attribute, expect_tensor, plain_text, type_name
from ..creation import _leaf
from ..dispatch import apply
from ..dtypes import c_type_name, scalar_type_name
from ..grad_mode import no_grad
from ..nodes import NODE_CLASSES
from ..ops import OPS
from ..ops_more_modules import adaptive_max_indices
from ..tensor_core import Tensor

_INT64_MAX = 2 ** 63 - 1
_RRELU_INPLACE_NODE = type("RreluWithNoiseBackward1", (NODE_CLASSES["RreluWithNoiseBackward0"],), {"__slots__": ()})


# ---------------------------------------------------------------- PyTorch's argument parser, for the few types here
def _int_arg(value, fn: str, arg: str, position: int) -> int:
    """An `int` argument: a Python or numpy integer, or a one-element integer tensor (never a bool or a float)."""
    if isinstance(value, Tensor) and value.ndim == 0 and value._data.dtype.kind in "iu":
        value = int(value._data)
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be int, not {type_name(value)}")
    value = int(value)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return value


def _float_arg(value, fn: str, arg: str, position: int) -> float:
    if isinstance(value, Tensor) and value.numel() == 1 and value._data.dtype.kind in "biuf":
        return float(value._data.reshape(-1)[0])
    if not isinstance(value, (numbers.Real, np.number)):  # (a bool is a Real: PyTorch takes margin=True as 1.0)
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be float, not {type_name(value)}")
    return float(value)


def _number_arg(value, fn: str, arg: str, position: int):
    if not isinstance(value, (numbers.Real, np.number)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be Number, not {type_name(value)}")
    return value.item() if isinstance(value, np.generic) else value


def _bool_arg(value, fn: str, arg: str, position: int) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be bool, not {type_name(value)}")
    return bool(value)


def _int_list(value, fn: str, arg: str, position: int, size: int) -> list:
    """An `int[size]` argument: one int (repeated) or a list or tuple whose first item is an int."""
    if not isinstance(value, (list, tuple)):
        if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
            raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be tuple of ints, not "
                            f"{type_name(value)}")
        return [_int_arg(value, fn, arg, position)] * size
    if value and (isinstance(value[0], bool) or not isinstance(value[0], (numbers.Integral, np.integer))):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be tuple of ints, but found element of "
                        f"type {type_name(value[0])} at pos 0")
    out = []
    for i, v in enumerate(value, 1):
        if not isinstance(v, (numbers.Integral, np.integer)):
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {i} with error \"type must "
                            f"be tuple of ints,but got {type_name(v)}\"")
        if not -_INT64_MAX - 1 <= int(v) <= _INT64_MAX:
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {i} with error \"Overflow "
                            "when unpacking long long\"")
        out.append(int(v))
    return out


def _truthy(flag) -> bool:
    """boolean_dispatch's `if return_indices:` on the values a program passes (never program code)."""
    if flag is None or isinstance(flag, (bool, numbers.Number, np.generic, str, list, tuple, dict)):
        return bool(flag)
    return bool(flag) if isinstance(flag, Tensor) else True


def _size_text(shape) -> str:
    return "[" + ", ".join(str(int(n)) for n in shape) + "]"


def _dim_size(t, d: int) -> int:
    """t.size(d), with PyTorch's IndexError for a dim t lacks."""
    n = t.ndim
    if n == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return int(t.shape[d])


def _negative_dims(shape):
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {_size_text(shape)}")


def _not_implemented(kernel: str, t):
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(t._data.dtype)}\'')


# ---------------------------------------------------------------- reductions (torch.nn._reduction)
def _reduction(size_average, reduce, reduction) -> str:
    """_Reduction.legacy_get_string / get_enum, with their warnings; the reduction's name, checked."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                      stacklevel=3)
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.", stacklevel=3)
        return "mean"
    if not isinstance(reduction, str) or reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{plain_text(reduction)} is not a valid value for reduction")
    return reduction


def _reduced(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


# ---------------------------------------------------------------- pixel shuffle
def _check_pixel(input, factor, fn, arg, noun):  # noqa: A002
    expect_tensor(input, fn, "input", 1)
    factor = _int_arg(factor, fn, arg, 2)
    if input.ndim < 3:
        raise RuntimeError(f"{fn} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           "dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{fn} expects a positive {noun}, but got {factor}")
    return factor


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r): one PixelShuffleBackward0 node."""
    r = _check_pixel(input, upscale_factor, "pixel_shuffle", "upscale_factor", "upscale_factor")
    if r * r > _INT64_MAX:
        raise ValueError(f"upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor={r}")
    c = int(input.shape[-3])
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return apply(OPS["pixel_shuffle"], (input,), (r,))


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W): one PixelUnshuffleBackward0 node."""
    r = _check_pixel(input, downscale_factor, "pixel_unshuffle", "downscale_factor", "downscale_factor")
    for dim, name in ((-2, "height"), (-1, "width")):
        if input.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={input.shape[dim]} is not divisible by {r}")
    return apply(OPS["pixel_unshuffle"], (input,), (r,))


# ---------------------------------------------------------------- adaptive max pooling
def _list_with_default(out_size, defaults):
    """torch.nn.modules.utils._list_with_default: None entries of the output size take the input's sizes."""
    if isinstance(out_size, (numbers.Integral, np.integer)):  # (a bool too: the argument parser refuses it next)
        return out_size
    if not isinstance(out_size, (list, tuple, str)):
        raise TypeError(f"object of type '{type_name(out_size)}' has no len()")
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _adaptive_max_pool(x, size, fn):
    """ATen's adaptive_max_pool2d on a 3-D or 4-D input, the (int64) indices beside: each maximum's position in its
    (H, W) plane."""
    if x.ndim not in (3, 4):
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got: {_size_text(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {_size_text(x.shape)} with dimension {i} being empty")
    if len(size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    _negative_dims(tuple(x.shape[:-2]) + tuple(size))
    if x._data.dtype.kind != "f":
        raise _not_implemented("adaptive_max_pool2d", x)
    out = apply(OPS["adaptive_max_pool2d"], (x,), (tuple(size),))
    return out, lambda: _leaf(adaptive_max_indices(x._data, tuple(size)).astype(np.int64), False)


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """One AdaptiveMaxPool2DBackward0 node; with return_indices, (output, indices)."""
    expect_attribute(input, "size")
    size = _list_with_default(output_size, tuple(input.shape))
    size = _int_list(size, "adaptive_max_pool2d", "output_size", 2, 2)
    out, indices = _adaptive_max_pool(input, size, "adaptive_max_pool2d")
    return (out, indices()) if _truthy(return_indices) else out


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """ATen's composite: the 2-d pool of input.unsqueeze(-2) to (1, output_size), squeezed back (SqueezeBackward1
    over AdaptiveMaxPool2DBackward0 over UnsqueezeBackward0)."""
    fn = "adaptive_max_pool1d"
    expect_tensor(input, fn, "input", 1)
    size = _int_list(output_size, fn, "output_size", 2, 1)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")
    for i in range(1, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {_size_text(input.shape)} with dimension {i} being empty")
    if len(size) != 1:
        raise RuntimeError(f"{fn}() argument 'output_size' should contain one int (got {len(size)})")
    out, indices = _adaptive_max_pool(input.unsqueeze(-2), [1, size[0]], "adaptive_max_pool2d")
    out = out.squeeze(-2)
    if not _truthy(return_indices):
        return out
    idx = indices()
    return out, _leaf(idx._data.squeeze(-2), False)


# ---------------------------------------------------------------- losses
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,  # noqa: A002
                        reduction="mean"):
    """ATen's: (-target * (input1 - input2) + margin).clamp_min_(0), then the reduction."""
    reduction = _reduction(size_average, reduce, reduction)
    expect_attribute(input1, "dim")
    expect_attribute(input2, "dim")
    if input1.ndim == input2.ndim:
        expect_attribute(target, "dim")
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        expect_attribute(target, "size")
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: torch.Size({list(input1.shape)}), input2: torch.Size({list(input2.shape)}), "
                           f"target: torch.Size({list(target.shape)}) ")
    margin = _float_arg(margin, "margin_ranking_loss", "margin", 4)
    out = apply(OPS["add_scalar"], (-target * (input1 - input2),), (margin,)).clamp_min(0)
    return _reduced(out, reduction)


def _distance(x1, x2, p, eps):
    """ATen's pairwise_distance: norm(x1 - x2 + eps, p, last dim) (NormBackward1 over AddBackward1)."""
    diff = apply(OPS["add_scalar"], (x1 - x2,), (eps,))
    last = max(x1.ndim, x2.ndim) - 1
    return apply(OPS["norm_dim"], (diff,), (p, (last % diff.ndim,) if diff.ndim else None, False))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """ATen's: clamp_min(margin + d(anchor, positive) - d(anchor, negative), 0) with d the pairwise distance (with
    swap, the smaller of d(anchor, negative) and d(positive, negative)), then the reduction."""
    fn = "triplet_margin_loss"
    reduction = _reduction(size_average, reduce, reduction)
    if isinstance(margin, (numbers.Real, np.number)):
        if margin <= 0:
            raise ValueError(f"margin must be greater than 0, got {margin}")
    elif not isinstance(margin, Tensor):
        raise TypeError(f"'<=' not supported between instances of '{type_name(margin)}' and 'int'")
    for position, (name, t) in enumerate((("anchor", anchor), ("positive", positive), ("negative", negative)), 1):
        expect_tensor(t, fn, name, position)
    margin = _float_arg(margin, fn, "margin", 4)
    p, eps = _float_arg(p, fn, "p", 5), _float_arg(eps, fn, "eps", 6)
    swap = _bool_arg(swap, fn, "swap", 7)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    dist_pos = _distance(anchor, positive, p, eps)
    dist_neg = _distance(anchor, negative, p, eps)
    if swap:
        dist_neg = apply(OPS["minimum"], (dist_neg, _distance(positive, negative, p, eps)))
    out = (apply(OPS["add_scalar"], (dist_pos,), (margin,)) - dist_neg).clamp_min(0)
    return _reduced(out, reduction)


_ANY_TYPES = ("any() received an invalid combination of arguments - got (bool), but expected one of:\n"
              " * (Tensor input, *, Tensor out = None)\n"
              " * (Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)\n"
              " * (Tensor input, int dim, bool keepdim = False, *, Tensor out = None)\n")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    """PyTorch's Python: var checked (no negative entry; its shape the input's, or one dim short, or with one dim of
    1), cloned and clamped below at eps without a gradient, then 0.5 * (log(var) + (input - target) ** 2 / var)
    (+ 0.5 log(2 pi) with full), then the reduction."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        expect_tensor(input, "ones_like", "input", 1)
        var = var * Tensor._wrap(np.ones(input.shape, dtype=input._data.dtype))
    elif isinstance(var, Tensor):
        if (var._data < 0).any():
            raise ValueError("var has negative entry/entries")
    elif isinstance(var, (numbers.Number, np.number)):  # (an int, a bool: `var < 0` is a bool, not a tensor)
        raise TypeError(_ANY_TYPES)
    else:
        raise TypeError(f"'<' not supported between instances of '{type_name(var)}' and 'int'")
    expect_attribute(input, "size")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):  # one dim short: one variance for the last dim
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        if not isinstance(reduction, str):
            raise TypeError(f"unsupported operand type(s) for +: '{type_name(reduction)}' and 'str'")
        raise ValueError(reduction + " is not valid")
    if not isinstance(eps, (numbers.Real, np.number, Tensor)):
        raise TypeError(f"clamp_() received an invalid combination of arguments - got (min={type_name(eps)}, ), but "
                        "expected one of:\n * (Tensor min = None, Tensor max = None)\n"
                        " * (Number min = None, Number max = None)\n")
    if var._data.dtype.kind != "f" and isinstance(eps, (float, np.floating)):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{c_type_name(var._data.dtype)}")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _reduced(loss, reduction)


# ---------------------------------------------------------------- bilinear
def bilinear(input1, input2, weight, bias=None):
    """ATen's: _trilinear(input1 as (-1, in1), weight, input2 as (-1, in2)) viewed to input1's batch dims and
    out_features (ViewBackward0 over TrilinearBackward0), plus bias (AddBackward0)."""
    for position, (name, t) in enumerate((("input1", input1), ("input2", input2), ("weight", weight)), 1):
        expect_tensor(t, "bilinear", name, position)
    if bias is not None:
        expect_tensor(bias, "bilinear", "bias", 4)
    named = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    if len({t._data.dtype for _, t in named}) > 1:
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{name}: {c_type_name(t._data.dtype)}" for name, t in named))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    for name, t, d in (("input1", input1, 1), ("input2", input2, 2)):
        got, expected = _dim_size(t, t.ndim - 1), _dim_size(weight, d)
        if got != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {got} but expected {expected}")
    if bias is not None and _dim_size(bias, 0) != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    if weight.ndim != 3:
        raise RuntimeError("number of dimensions must match")
    flat = []
    for t in (input1, input2):
        if t.numel() == 0 and t.shape[-1] == 0:
            raise RuntimeError("cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
                               "dimension size -1 can be any value and is ambiguous")
        flat.append(t.reshape(-1, t.shape[-1]))
    out = apply(OPS["trilinear"], (flat[0], weight, flat[1]), ((1, 3), (0,), (1, 2), (2, 3)))
    out = out.reshape(*input1.shape[:-1], weight.shape[0])
    return out if bias is None else out + bias


# ---------------------------------------------------------------- rrelu
def _rrelu_noise(x, lower, upper):
    """The slopes ATen's CPU kernel draws, in memory order, one uniform_real_distribution<double> per element <= 0:
    53 bits of a 64-bit draw scaled to [lower, upper) (the bounds first in the op math type), then that type;
    1 elsewhere."""
    data = x._data
    op_dt = np.dtype(np.float64) if data.dtype == np.float64 else np.dtype(np.float32)
    lo, hi = float(op_dt.type(lower)), float(op_dt.type(upper))
    hit = data <= 0
    n = int(np.count_nonzero(hit))
    noise = np.ones(data.shape, dtype=data.dtype)
    if n:
        bits = _random.default_generator._u64(n) & np.uint64((1 << 53) - 1)
        u = bits.astype(np.float64) * 2.0 ** -53
        u *= hi - lo  # NOTE: two roundings (no fused multiply-add): ATen's kernel is compiled without FMA
        u += lo
        noise[hit] = u.astype(op_dt).astype(data.dtype)
    return Tensor._wrap(noise)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """One RreluWithNoiseBackward0 node (RreluWithNoiseBackward1 in place): in training, x times a slope drawn from
    U(lower, upper) where x <= 0 (PyTorch's draws, bit for bit); in eval, leaky_relu by (lower + upper) / 2."""
    fn = "rrelu_" if inplace else "rrelu"
    expect_tensor(input, fn, "input", 1)
    lower, upper = _number_arg(lower, fn, "lower", 2), _number_arg(upper, fn, "upper", 3)
    training = _bool_arg(training, fn, "training", 4)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    kind = input._data.dtype
    if kind.kind != "f" or (training and kind == np.float16):
        raise _not_implemented("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu", input)
    params = (lower, upper, training)
    if not inplace:
        return apply(OPS["rrelu_with_noise"], (input, _rrelu_noise(input, lower, upper) if training else None), params)
    noise = _rrelu_noise(input, lower, upper) if training else None
    input._inplace("rrelu_", lambda t, _: apply(OPS["rrelu_with_noise"], (t, noise), params))
    if type(input._grad_fn) is NODE_CLASSES["RreluWithNoiseBackward0"]:
        input._grad_fn.__class__ = _RRELU_INPLACE_NODE  # PyTorch's name for the in-place form's node
    return input


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):  # noqa: A002
    return rrelu(input, lower, upper, training, inplace=True)
