"""torch.finfo / torch.iinfo: the numerical limits of a dtype, as PyTorch reports and prints them."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .dtypes import dtype as _dtype
from .dtypes import float32

_FINFO = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
_IINFO = ("bits", "min", "max", "dtype")


class finfo(namedtuple("finfo", _FINFO)):  # noqa: N801 — torch's name
    """Floating-point limits: machine epsilon, the largest and smallest normal values, decimal resolution."""

    __slots__ = ()

    def __new__(cls, type=float32):  # noqa: A002 — torch's parameter name
        if not isinstance(type, _dtype) or type.np.kind != "f":
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = np.finfo(type.np)
        return super().__new__(cls, info.bits, float(info.eps), float(info.max), float(info.min),
                               float(info.tiny), float(info.smallest_normal),
                               10.0 ** -int(np.floor(-np.log10(float(info.eps)))), type.name)  # (torch's rounding)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(namedtuple("iinfo", _IINFO)):  # noqa: N801
    """Integer limits: bits, the smallest and largest values."""

    __slots__ = ()

    def __new__(cls, type):  # noqa: A002
        if not isinstance(type, _dtype) or type.np.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        return super().__new__(cls, info.bits, int(info.min), int(info.max), type.name)

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


finfo.__module__ = iinfo.__module__ = "torch"
