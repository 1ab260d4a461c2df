"""Pooling modules: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool2d, with PyTorch's printouts."""
from __future__ import annotations

from . import functional_layers as FL
from .modules import Module


class _PoolNd(Module):
    def _window(self, kernel_size, stride, padding):
        """kernel_size, stride (the kernel's size when None) and padding, as given."""
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding


class _MaxPoolNd(_PoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self._window(kernel_size, stride, padding)
        self.dilation = dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):  # noqa: A002
        return FL.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                             self.return_indices)


class MaxPool2d(_MaxPoolNd):
    def forward(self, input):  # noqa: A002
        return FL.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                             self.return_indices)


class _AvgPoolNd(_PoolNd):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = FL._tuple(kernel_size, 1)
        self.stride = FL._tuple(stride if stride is not None else kernel_size, 1)
        self.padding = FL._tuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):  # noqa: A002
        return FL.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self._window(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):  # noqa: A002
        return FL.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):  # noqa: A002
        return FL.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):  # noqa: A002
        return FL.adaptive_avg_pool1d(input, self.output_size)


class Upsample(Module):
    """nn.Upsample: F.interpolate with the sizes, mode and align_corners it was made with."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else \
            (tuple(float(f) for f in scale_factor) if scale_factor is not None else None)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"

    def forward(self, input):  # noqa: A002
        return FL.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                              recompute_scale_factor=self.recompute_scale_factor)


class UpsamplingNearest2d(Upsample):
    """nn.UpsamplingNearest2d: Upsample(mode='nearest') (deprecated in PyTorch, still run as it runs)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """nn.UpsamplingBilinear2d: Upsample(mode='bilinear', align_corners=True)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
