"""torch.hypot / xlogy / heaviside and their Tensor methods (issue 21 §3), with PyTorch's argument errors."""
from __future__ import annotations

import numpy as np

from . import dtypes, registry
from .boundary import expect_tensor
from .dispatch import apply
from .ops import OPS
from .tensor_core import Tensor


def hypot(input, other):  # noqa: A002 — torch's names
    expect_tensor(input, "hypot", "input", 1)
    expect_tensor(other, "hypot", "other", 2)
    promoted = np.result_type(input._data.dtype, other._data.dtype)
    if input._data.dtype.kind != "f" and other._data.dtype.kind != "f":  # a float operand promotes the other
        raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{dtypes.scalar_type_name(promoted)}'")
    return apply(OPS["hypot"], (input, other))


def _operand(x, fn, what):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float)):  # a number is a 0-d tensor: it promotes like one (xlogy(2, int_t) -> float)
        return registry.new_tensor(np.asarray(x, dtype=np.float32 if isinstance(x, float) else np.int64))
    raise TypeError(f"{fn}(): argument '{what}' must be Tensor or Number, not {type(x).__name__}")


def xlogy(input, other):  # noqa: A002
    """x * log(y); a number on either side is a 0-d tensor; integer operands compute in float32, as in torch."""
    input, other = _operand(input, "xlogy", "self"), _operand(other, "xlogy", "other")  # noqa: A001
    if input._data.dtype.kind != "f" and other._data.dtype.kind != "f":
        input = input.float()  # noqa: A001
    return apply(OPS["xlogy"], (input, other))


def heaviside(input, values):  # noqa: A002
    """0 below zero, 1 above, `values` at zero."""
    expect_tensor(input, "heaviside", "input", 1)
    expect_tensor(values, "heaviside", "values", 2)
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input._data.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return apply(OPS["heaviside"], (input, values))  # backward raises PyTorch's "derivative ... not implemented"

Tensor.hypot = hypot
Tensor.xlogy = xlogy
Tensor.heaviside = heaviside
