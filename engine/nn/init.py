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

from ..autograd import STATE
from ..boundary import expect_attribute, plain_text


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
    import numpy as np

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
