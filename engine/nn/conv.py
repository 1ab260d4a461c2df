"""Conv1d / Conv2d: PyTorch's _ConvNd (parameters, default initialisation, printout)."""
from __future__ import annotations

import math

from .. import creation
from ..devices import resolve as resolve_device
from . import functional_layers as FL
from . import init
from .modules import Module, Parameter


class _ConvNd(Module):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid:
            raise ValueError(f"padding_mode must be one of {valid}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = FL._tuple(kernel_size, nd)
        self.stride = FL._tuple(stride, nd)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = FL._tuple(padding, nd)
        self.dilation = FL._tuple(dilation, nd)
        self.transposed = False
        self.output_padding = (0,) * nd
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(creation.empty(*self._weight_shape(), dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _weight_shape(self):
        return (self.out_channels, self.in_channels // self.groups, *self.kernel_size)

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform(a=√5) on the weight, then U(±1/√fan_in) on the bias.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def forward(self, input):  # noqa: A002
        if self.padding_mode != "zeros":  # PyTorch's: pad in that mode first, then convolve unpadded
            return FL._conv(FL.pad(input, self._reversed_padding_repeated_twice(), mode=self.padding_mode),
                            self.weight, self.bias, self.stride, 0, self.dilation, self.groups, self._nd)
        return FL._conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups, self._nd)

    def _reversed_padding_repeated_twice(self):
        """F.pad's (last lo, last hi, ...) from the conv's padding; 'same' splits the total as PyTorch does."""
        if self.padding == "valid":
            return [0, 0] * self._nd
        out = []
        for i in reversed(range(self._nd)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                out += [total // 2, total - total // 2]
            else:
                out += [self.padding[i], self.padding[i]]
        return out


class Conv1d(_ConvNd):
    _nd = 1


class Conv2d(_ConvNd):
    _nd = 2


class _ConvTransposeNd(_ConvNd):
    """nn.ConvTranspose1d / 2d: the weight is (in_channels, out_channels // groups, *kernel), initialised as
    PyTorch's (kaiming_uniform_ with a = √5, then the bias from the weight's fan-in)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError("padding must be an int or a tuple of ints for transposed convolutions")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)
        self.transposed = True
        self.output_padding = FL._tuple(output_padding, self._nd)

    def _weight_shape(self):
        return (self.in_channels, self.out_channels // self.groups, *self.kernel_size)

    def extra_repr(self):
        s = super().extra_repr()
        if self.output_padding != (0,) * self._nd:
            head, sep, tail = s.partition(", groups=") if ", groups=" in s else (s, "", "")
            s = head + f", output_padding={self.output_padding}" + sep + tail
        return s

    def forward(self, input, output_size=None):  # noqa: A002
        if output_size is not None:
            raise NotImplementedError(f"{type(self).__name__}(output_size=...) is not available in flowgrad yet: "
                                      "set output_padding when the layer is made")
        return FL.conv_transpose(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                              self.groups, self.dilation, self._nd)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
