"""nn.ReflectionPad1d/2d, ReplicationPad1d/2d, ZeroPad1d/2d, ConstantPad1d/2d: F.pad with the sizes they were made
with (an int pads every side of the padded dims, as PyTorch's _ntuple does)."""
from __future__ import annotations

from . import functional_layers as FL
from .modules import Module


def _padding_tuple(padding, sides, cls_name):
    if isinstance(padding, bool) or not isinstance(padding, (int, tuple, list)):
        raise TypeError(f"{cls_name}(): padding must be an int or a tuple of {sides} ints, got "
                        f"{type(padding).__name__}")
    if isinstance(padding, int):
        return (padding,) * sides
    if len(padding) != sides or not all(isinstance(p, int) and not isinstance(p, bool) for p in padding):
        raise TypeError(f"{cls_name}(): padding must be an int or a tuple of {sides} ints, got {tuple(padding)!r}")
    return tuple(padding)


class _PadNd(Module):
    _sides = 2
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding_tuple(padding, self._sides, type(self).__name__)

    def extra_repr(self):
        return f"{self.padding}"

    def forward(self, input):  # noqa: A002
        return FL.pad(input, self.padding, self._mode)


class ReflectionPad1d(_PadNd):
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    _sides, _mode = 4, "reflect"


class ReplicationPad1d(_PadNd):
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    _sides, _mode = 4, "replicate"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{type(self).__name__}(): value must be a number, got {type(value).__name__}")
        self.value = value  # kept as given: PyTorch prints value=-1 for an int

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"

    def forward(self, input):  # noqa: A002
        return FL.pad(input, self.padding, "constant", float(self.value))


class ConstantPad1d(_ConstantPadNd):
    pass


class ConstantPad2d(_ConstantPadNd):
    _sides = 4


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
