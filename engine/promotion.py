"""PyTorch's type promotion (torch.result_type, torch.promote_types, torch.can_cast) over numpy dtypes.

Within a category (bool < integer < float < complex) operands rank in three tiers: tensors with dim > 0, then 0-dim
tensors, then Python scalars. A lower tier changes the result only when it is of a higher category:
`tensor(5) - int8_tensor` is int8 and `float64 scalar tensor + float32 tensor` float32, where numpy widens both.
Between two dtypes, an integer meeting a float gives the float (int32 + float16 is float16, numpy's float32).
"""
from __future__ import annotations

import numpy as np

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)
_C64 = np.dtype(np.complex64)
_NUMBERS = (bool, int, float, complex, np.number, np.bool_)


def promote_types(a, b) -> np.dtype:
    """torch.promote_types on numpy dtypes: the smallest dtype both cast to, a float winning over an integer."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb and not (ca == 3 and cb == 2 or ca == 2 and cb == 3):
        return a if ca > cb else b  # bool meets anything, an integer meets a float: the higher category's dtype
    return np.promote_types(a, b)  # same category (uint8 + int8 is int16) or float with complex: numpy agrees


def can_cast(src, dst) -> bool:
    """torch.can_cast: only a cast to a lower category is refused (float to integer, anything but bool to bool)."""
    return _CATEGORY[np.dtype(src).kind] <= _CATEGORY[np.dtype(dst).kind]


def scalar_dtype(value) -> np.dtype:
    """The dtype a Python (or numpy) number takes in promotion: bool, int64, the default float32, complex64."""
    if isinstance(value, (bool, np.bool_)):
        return _BOOL
    if isinstance(value, (int, np.integer)):
        return _I64
    if isinstance(value, (float, np.floating)):
        return _F32
    if isinstance(value, (complex, np.complexfloating)):
        return _C64
    raise TypeError(f"result_type: unsupported operand {type(value).__name__}")


def _combine(higher, lower):
    """ATen's combine_categories: a lower tier counts only where it is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _CATEGORY[higher.kind] >= 2:
        return higher
    if higher.kind == "b" or _CATEGORY[lower.kind] >= 2:
        return promote_types(higher, lower)
    return higher


def result_dtype(dims, zero_dims, scalars) -> np.dtype:
    """The result dtype of operands given as the dtypes of dim > 0 tensors, of 0-dim tensors and of Python numbers."""
    tiers = []
    for group in (dims, zero_dims, scalars):
        best = None
        for d in group:
            best = d if best is None else promote_types(best, d)
        tiers.append(best)
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


def operands_dtype(values, tensor_flags):
    """The result dtype of operands given as arrays (tensors' data, flagged) and numbers; None for anything else."""
    dims, zero_dims, scalars = [], [], []
    for a, is_tensor in zip(values, tensor_flags):
        if is_tensor or type(a) is np.ndarray:  # an engine-internal call may pass an array: a tensor's
            (dims if a.ndim else zero_dims).append(a.dtype)
        elif isinstance(a, _NUMBERS):
            scalars.append(scalar_dtype(a))
        else:
            return None
    return result_dtype(dims, zero_dims, scalars)


def promote_operands(arrays, tensor_flags, positions):
    """`arrays` with the operands at `positions` cast to their torch result dtype, as ATen casts a binary op's inputs
    before it computes: a tensor's array by astype, a numpy number (read as a Python number) by .item(), so that numpy
    casts it weakly. Other positions (a where's condition) are left alone. The list itself when nothing changes."""
    common = operands_dtype([arrays[i] for i in positions], [tensor_flags[i] for i in positions])
    if common is None:
        return arrays  # not an operand promotion knows (an object list): the op reports it as before
    out = None
    for i in positions:
        a = arrays[i]
        if tensor_flags[i] or type(a) is np.ndarray:
            if a.dtype == common:
                continue
            a = a.astype(common)
        elif isinstance(a, np.generic):
            a = a.item()
        else:
            continue
        if out is None:
            out = list(arrays)
        out[i] = a
    return arrays if out is None else out
