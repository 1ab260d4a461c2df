"""PyTorch's legacy typed tensor classes: torch.FloatTensor, LongTensor, DoubleTensor, IntTensor, BoolTensor...

Each is a class only in name, as in PyTorch: calling it builds a tensor of its dtype (from data, from sizes or from a
torch.Size, as torch.Tensor does), `isinstance(x, torch.FloatTensor)` asks for x's dtype, and `x.type(torch.LongTensor)`
casts.
"""
from __future__ import annotations

from . import dtypes
from .grad_mode import STATE
from .tensor_core import Tensor, legacy_array


class LegacyTensorType(type):
    """The metaclass of the legacy classes (PyTorch's `torch.tensortype`)."""

    def __call__(cls, *args, requires_grad=False):
        t = Tensor._wrap(legacy_array(args, cls.dtype.np))
        limits = STATE.limits
        if limits is not None:
            limits.track(t)  # counted among the run's live elements, as every factory's result is
        return t.requires_grad_(True) if requires_grad else t

    def __instancecheck__(cls, obj):
        # Tensor is an ordinary class: this check never comes back here
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_class(name, dtype):
    return LegacyTensorType(name, (), {"dtype": dtype, "__module__": "torch", "__slots__": ()})


FloatTensor = _legacy_class("FloatTensor", dtypes.float32)
DoubleTensor = _legacy_class("DoubleTensor", dtypes.float64)
HalfTensor = _legacy_class("HalfTensor", dtypes.float16)
LongTensor = _legacy_class("LongTensor", dtypes.int64)
IntTensor = _legacy_class("IntTensor", dtypes.int32)
ByteTensor = _legacy_class("ByteTensor", dtypes.uint8)
BoolTensor = _legacy_class("BoolTensor", dtypes.bool_)

__all__ = ["LegacyTensorType", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor",
           "BoolTensor"]
