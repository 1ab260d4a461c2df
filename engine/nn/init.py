"""torch.nn.init: in-place initialisers drawing from the engine's generator.

Each one checks that its argument is a tensor before calling anything on it (PyTorch's AttributeError
otherwise): they run with grad mode and the recorder off, and a module's submodule named `zero_` must
not run program code in that window.

The bounds and standard deviations are computed with PyTorch's own expressions (same float
rounding), so with the same seed every initialiser gives PyTorch's numbers.
"""
import contextlib
import math
import warnings

import numpy as np

from ..autograd import STATE
from ..boundary import expect_attribute, plain_text
from ..random import fill_normal, fill_uniform


@contextlib.contextmanager
def no_grad():
    """Initialisation is setup, not part of the program's graph: no grad and nothing recorded."""
    prev = STATE.grad_enabled, STATE.recorder
    STATE.grad_enabled, STATE.recorder = False, None
    try:
        yield
    finally:
        STATE.grad_enabled, STATE.recorder = prev


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {plain_text(param)} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {plain_text(nonlinearity)}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    expect_attribute(tensor, "uniform_")
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    expect_attribute(tensor, "normal_")
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def zeros_(tensor):
    expect_attribute(tensor, "zero_")
    with no_grad():
        return tensor.zero_()


def ones_(tensor):
    expect_attribute(tensor, "fill_")
    with no_grad():
        return tensor.fill_(1.0)


def constant_(tensor, val):
    expect_attribute(tensor, "fill_")
    with no_grad():
        return tensor.fill_(val)


def eye_(tensor):
    expect_attribute(tensor, "ndimension")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")

    with no_grad():
        return tensor.copy_(np.eye(*tensor.shape, dtype=tensor._data.dtype))


def _calculate_fan_in_and_fan_out(tensor):
    expect_attribute(tensor, "dim")
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.shape[1] * receptive_field_size, tensor.shape[0] * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """PyTorch's He standard deviation; None for a zero-element tensor (a no-op with a warning, as in torch)."""
    expect_attribute(tensor, "shape")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0, std, generator)


# NOTE: PyTorch's rejection loops never give up (a = 10, b = 1e6 never accepts); here a call stops after
# this many rounds, or once it has drawn TRUNC_NORMAL_MAX_DRAWS numbers (each round redraws the whole tensor).
# The first branch accepts > 0.3 a round: 200 rounds leave ~1e-31 of the elements.
TRUNC_NORMAL_MAX_ROUNDS = 200
TRUNC_NORMAL_MAX_DRAWS = 1 << 26


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """PyTorch 2.13's sampler, draw for draw (so its numbers): redraw N(mean, std) outside [a, b] when the
    interval holds > 0.3 of the mass, else uniform proposals on [a, b] accepted against the peak density.
    Its tensor arithmetic is done here on the arrays, in the tensor's dtype, as ATen does it."""
    expect_attribute(tensor, "normal_")

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    arr = tensor._data
    dt = arr.dtype
    rounds = max(1, min(TRUNC_NORMAL_MAX_ROUNDS, TRUNC_NORMAL_MAX_DRAWS // max(arr.size, 1)))
    p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
    if p > 0.3:
        lo, hi = dt.type(a), dt.type(b)  # the bounds as the tensor's dtype holds them
        result = fill_normal(arr, mean, std, generator)
        for _ in range(rounds):
            mask = (result < lo) | (result > hi)
            if not mask.any():
                break
            result = np.where(mask, fill_normal(np.empty_like(result), mean, std, generator), result)
        else:
            raise RuntimeError(f"trunc_normal_: values still outside [{a}, {b}] after {rounds} "
                               "rounds of redraws")
    else:
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def log_density(x):  # candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            z = (x - dt.type(mean)) / dt.type(std)
            return z * z * dt.type(-0.5) - dt.type(log_peak)

        def accept_draw():
            return np.log(fill_uniform(np.empty_like(arr), 0.0, 1.0, generator))

        result = fill_uniform(arr, a, b, generator)
        pending = accept_draw() > log_density(result)
        for _ in range(rounds):
            if not pending.any():
                break
            candidates = fill_uniform(np.empty_like(arr), a, b, generator)
            result = np.where(pending, candidates, result)
            pending = np.where(pending, accept_draw() > log_density(candidates), pending)
        else:
            raise RuntimeError(f"trunc_normal_: proposals on [{a}, {b}] still rejected after {rounds} "
                               "rounds")
    with no_grad():
        return tensor.copy_(result.astype(dt, copy=False))


def orthogonal_(tensor, gain=1, generator=None):
    """PyTorch's: QR of a N(0, 1) matrix (transposed when wide), Q's columns signed by R's diagonal."""
    expect_attribute(tensor, "ndimension")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flattened = fill_normal(np.empty((rows, cols), dtype=tensor._data.dtype), 0.0, 1.0, generator)
        m = flattened.T if rows < cols else flattened
        q, r = np.linalg.qr(m)  # LAPACK geqrf + orgqr, as torch.linalg.qr
        q = q * np.sign(np.diagonal(r)).astype(q.dtype)
        if rows < cols:
            q = q.T
        tensor.view(rows, cols).copy_(np.ascontiguousarray(q, dtype=tensor._data.dtype))
        tensor.mul_(gain)
    return tensor
