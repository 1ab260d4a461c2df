"""Where program values meet engine code: checks that arguments are what PyTorch requires before the
engine calls anything on them, and the bounded text of program-set values the engine prints.

Programs run in a sandbox, but the engine is where their values end up: a "tensor" that is really a
module would answer `x.zero_` with one of its submodules (program code, run from inside engine code),
a list of objects would become a numpy object array, and `str()` of a value a program stored in a
module or an optimizer is C code that can print a server address or gigabytes (shared nested lists).
So, as PyTorch does: tensors are tensors before anything is called on them (`expect_tensor`), tensors
hold numbers only (`not_numeric`), and configuration values are printed by `plain_text`, never `str()`.
"""
from __future__ import annotations

import numpy as np

from . import registry
from .dtypes import dtype

NUMERIC_KINDS = "biuf"  # numpy dtype kinds a tensor may hold: bool, int, uint, float
_NUMBERS = (int, float, np.integer, np.floating, np.bool_)  # bool is an int
_TEXT_LIMIT = 200


def type_name(x) -> str:
    """The name PyTorch's messages give a value's type: a module's class name, else the type's name."""
    get_name = getattr(type(x), "_get_name", None)  # nn.Module (a program's subclass names itself)
    if get_name is not None and not isinstance(x, type):
        try:
            return str(get_name(x))[:_TEXT_LIMIT]
        except Exception:  # noqa: BLE001 - a name is only for a message
            pass
    return type(x).__name__


def is_tensor(x) -> bool:
    return isinstance(x, registry.Tensor)  # engine/tensor_core.py registers the class (it is defined above this layer)


def expect_tensor(x, fn: str, arg: str, position: int) -> None:
    """PyTorch's argument check: `relu(): argument 'input' (position 1) must be Tensor, not Linear`."""
    if not is_tensor(x):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be Tensor, not {type_name(x)}")


def expect_attribute(x, attribute: str) -> None:
    """Where PyTorch's Python code calls a tensor method on an argument (`nn.init.zeros_(m)` calls
    `m.zero_()`), a non-tensor gets its AttributeError, raised here before anything is called on it."""
    if not is_tensor(x):
        raise AttributeError(f"'{type_name(x)}' object has no attribute '{attribute}'")


def not_numeric(arr) -> TypeError:
    """PyTorch's refusal of data it cannot hold: tensors hold numbers, never objects or text."""
    dt = getattr(arr, "dtype", None)
    name = dt.type.__name__ if isinstance(dt, np.dtype) else "object_"
    return TypeError(f"can't convert np.ndarray of type numpy.{name}. The only supported types are: float64, "
                     "float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, "
                     "uint8, and bool.")


def is_number(x) -> bool:
    return isinstance(x, _NUMBERS)


def plain_text(value, limit: int = _TEXT_LIMIT) -> str:
    """A value a program may have stored where the engine prints its configuration (a module's
    `in_features`, an optimizer's `lr`): numbers, bools, None, strings, dtypes, small tensors and
    lists/tuples of these as Python prints them, cut at `limit` characters; anything else as its type's
    name. Never `str()` of a program object: in C, that can print a server address, or expand shared
    nested lists into gigabytes."""
    out: list[str] = []
    room = [limit]

    def put(s: str) -> bool:
        if len(s) > room[0]:
            out.append(s[:room[0]])
            room[0] = -1
            return False
        out.append(s)
        room[0] -= len(s)
        return True

    def walk(v, depth: int) -> bool:
        t = type(v)
        if v is None or t is bool or t is int or t is float or isinstance(v, _NUMBERS):
            return put(repr(v.item() if isinstance(v, np.generic) else v))
        if t is str:
            return put(repr(v[:limit + 1]) if depth else v[:limit + 1])
        if t in (list, tuple) and depth < 8:
            if not put("[" if t is list else "("):
                return False
            for i, x in enumerate(v):
                if (i and not put(", ")) or not walk(x, depth + 1):
                    return False
            return put("]" if t is list else ",)" if len(v) == 1 else ")")
        if isinstance(v, dtype):
            return put(repr(v))
        if is_tensor(v) and v._data.size <= 16:
            return put(repr(v))
        if isinstance(v, type):
            return put(f"<class '{v.__qualname__}'>")
        return put(type_name(v))

    complete = walk(value, 0)
    text = "".join(out)
    return text if complete else text + "…"


def check_where(condition, input, other) -> None:  # noqa: A002 - torch's names
    """torch.where(condition, input, other): a condition tensor, and tensors or numbers to pick from (a
    list of objects would make numpy build an object array)."""
    kinds = [is_tensor(condition), is_tensor(input) or is_number(input), is_tensor(other) or is_number(other)]
    if all(kinds):
        return
    got = ", ".join(_arg_name(a) for a in (condition, input, other))
    expected = ("Tensor", "Tensor", "Tensor"), ("Tensor", "Number", "Tensor"), ("Tensor", "Tensor", "Number"), \
        ("Tensor", "Number", "Number")
    lines = [f"where() received an invalid combination of arguments - got ({got}), but expected one of:",
             " * (Tensor condition)", " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)"]
    for sig, names in zip(expected[1:], (("self", "other"), ("input", "other"), ("self", "other"))):
        lines.append(f" * (Tensor condition, {sig[1]} {names[0]}, {sig[2]} {names[1]})")
        marks = [_arg_name(a) if _matches(a, want) else f"!{_arg_name(a)}!"
                 for a, want in zip((condition, input, other), sig)]
        lines.append(f"      didn't match because some of the arguments have invalid types: ({', '.join(marks)})")
    raise TypeError("\n".join(lines) + "\n")


def _matches(x, want: str) -> bool:
    return is_tensor(x) if want == "Tensor" else is_number(x) and not is_tensor(x)


def _arg_name(x) -> str:
    """How PyTorch's argument parser names a value: `Tensor`, `float`, `list of [bool]`."""
    if is_tensor(x):
        return "Tensor"
    if type(x) is list and x:
        seen = []
        for v in x[:16]:
            n = type_name(v)
            if n not in seen:
                seen.append(n)
        return f"list of [{', '.join(seen)}]"
    return type_name(x)


def infer_error(data) -> Exception:
    """PyTorch's error for data `torch.tensor` cannot hold: `Could not infer dtype of dict`,
    `new(): invalid data type 'str'`, or `too many dimensions 'str'` (a string where it expects a number
    at the innermost level of the first row)."""
    first = data
    while type(first) in (list, tuple) and first:
        first = first[0]
    if type(first) is str and first is not data:
        return ValueError("too many dimensions 'str'")
    stack = [data]
    seen = 0
    while stack and seen < 1_000_000:
        v = stack.pop()
        seen += 1
        if type(v) in (list, tuple):
            stack.extend(reversed(v))
        elif type(v) is str:
            return TypeError("new(): invalid data type 'str'")
        elif not (is_number(v) or is_tensor(v)):
            return RuntimeError(f"Could not infer dtype of {type_name(v)}")
    return RuntimeError(f"Could not infer dtype of {type_name(data)}")
