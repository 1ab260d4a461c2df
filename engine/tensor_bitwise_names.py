"""torch.bitwise_and / or / xor / not / left_shift / right_shift, their Tensor methods and in-place forms, the
in-place augmented operators (&= |= ^= <<= >>=) and the logical family's in-place forms: integer and bool dtypes
only, floats refused in PyTorch's words (the operators themselves: engine/tensor_math.py)."""
from __future__ import annotations

from .boundary import expect_tensor
from .dispatch import _REAL, apply
from .ops import OPS
from .tensor_core import Tensor
from .tensor_math import _bitwise
from .tensor_tutorial_names import logical_and, logical_not, logical_or, logical_xor

_SIGNATURES = ("\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor other)"
               "\n * (Tensor input, Number other, *, Tensor out = None)\n")


def _binary_name(word):
    name = f"bitwise_{word}"

    def function(input, other):  # noqa: A002 — torch's names
        if isinstance(input, Tensor) and isinstance(other, (Tensor, *_REAL)):
            return _bitwise(word, input, other)
        if isinstance(input, _REAL) and not isinstance(input, complex) and isinstance(other, Tensor):
            return _bitwise(word, other, input, reflected=True)  # torch.bitwise_and(3, t): 3 is a number
        got = ", ".join("Tensor" if isinstance(x, Tensor) else type(x).__name__ for x in (input, other))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:{_SIGNATURES}")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}: elementwise on integer and bool tensors (a Python int wraps to the dtype)."
    return function


bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift = (
    _binary_name(w) for w in ("and", "or", "xor", "left_shift", "right_shift"))


def bitwise_not(input):  # noqa: A002
    """~input: bit complement of integers, logical not of bools."""
    expect_tensor(input, "bitwise_not", "input", 1)
    return apply(OPS["invert"], (input,))


def _method(function):
    def method(self, other):
        return function(self, other)
    method.__name__ = method.__qualname__ = function.__name__
    return method


def _inplace(name, function):
    """`t.name_(other)`: the out-of-place result written into t, in t's dtype (a wider integer wraps, a result of a
    higher category is refused: `bool_t.bitwise_and_(int8_t)`)."""
    def method(self, *other):
        operand = other[0] if other else None  # _inplace reads whether it requires grad
        return self._inplace(name + "_", lambda a, _: function(a, *other), operand)
    method.__name__ = method.__qualname__ = name + "_"
    return method


for _function in (bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift):
    setattr(Tensor, _function.__name__, _method(_function))
    setattr(Tensor, _function.__name__ + "_", _inplace(_function.__name__, _function))
Tensor.bitwise_not = bitwise_not
Tensor.bitwise_not_ = _inplace("bitwise_not", bitwise_not)
for _function in (logical_and, logical_or, logical_xor, logical_not):
    setattr(Tensor, _function.__name__ + "_", _inplace(_function.__name__, _function))
Tensor.__iand__ = Tensor.bitwise_and_
Tensor.__ior__ = Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_
del _function
