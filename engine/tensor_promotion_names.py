"""torch.result_type, torch.promote_types and torch.can_cast: the type promotion every binary op runs
(engine/promotion.py), asked directly, with PyTorch's argument errors."""
from __future__ import annotations

import numpy as np

from . import dtypes, promotion
from .tensor_core import Tensor

_NUMBER = (bool, int, float, complex, np.number, np.bool_)
_SIGNATURES = ("\n * (Tensor tensor, Tensor other)\n * (Number scalar, Tensor tensor)\n * (Tensor tensor, Number other)"
               "\n * (Number scalar1, Number scalar2)\n")


def result_type(*args, **kwargs):
    """The dtype `tensor op other` gives: dim > 0 tensors, then 0-dim tensors, then numbers, each tier counting only
    when of a higher category (bool < integer < float)."""
    operands = list(args) + [kwargs.pop(name) for name in ("tensor", "other", "scalar", "scalar1", "scalar2")
                             if name in kwargs]
    if kwargs or len(operands) != 2 or not all(isinstance(x, (Tensor, *_NUMBER)) for x in operands):
        got = ", ".join(type(x).__name__ if not isinstance(x, Tensor) else "Tensor" for x in operands)
        raise TypeError(f"result_type() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:{_SIGNATURES}")
    dims, zero_dims, scalars = [], [], []
    for x in operands:
        if isinstance(x, Tensor):
            (dims if x._data.ndim else zero_dims).append(x._data.dtype)
        else:
            scalars.append(promotion.scalar_dtype(x))
    return dtypes.from_numpy_dtype(promotion.result_dtype(dims, zero_dims, scalars))


def _expect_dtype(value, fn, name, position):
    if not isinstance(value, dtypes.dtype):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be torch.dtype, not {type(value).__name__}")


def promote_types(type1, type2):
    """The smallest dtype both cast to; an integer meeting a float gives the float (int32, float16 -> float16)."""
    _expect_dtype(type1, "promote_types", "type1", 1)
    _expect_dtype(type2, "promote_types", "type2", 2)
    return dtypes.from_numpy_dtype(promotion.promote_types(type1.np, type2.np))


def can_cast(from_, to):
    """Whether PyTorch casts `from_` to `to` in an in-place op or `out=`: never to a lower category."""
    _expect_dtype(from_, "can_cast", "from_", 1)
    _expect_dtype(to, "can_cast", "to", 2)
    return promotion.can_cast(from_.np, to.np)
