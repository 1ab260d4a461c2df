"""Tensor methods the sandbox allowed but the engine lacked (issue 21: programs as written): the comparison
methods and functions (eq, ne, lt, ...), new_zeros and the other new_* factories, unbind, select, where,
maximum/minimum as methods, and the in-place forms of the common elementwise functions (exp_, sigmoid_, ...)."""
from __future__ import annotations

import operator

from . import creation
from .boundary import expect_tensor
from .dispatch import _as_tensor_operand, _dim, apply, wrapped_scalar
from .functional import maximum as _maximum
from .functional import minimum as _minimum
from .functional import where as _where
from .ops import OPS
from .tensor_core import Tensor


def _comparison(name):
    def method(self, other):
        operand = _as_tensor_operand(other)
        if operand is NotImplemented:
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(other).__name__}), "
                            "but expected one of:\n * (Tensor other)\n * (Number other)")
        return apply(OPS[name], (self, wrapped_scalar(self, operand)))

    def function(input, other, *, out=None):  # noqa: A002 — torch's names
        expect_tensor(input, name, "input", 1)
        result = method(input, other)
        if out is not None:
            out.copy_(result)
            return out
        return result

    method.__name__ = function.__name__ = name
    return method, function


(eq, Tensor.eq), (ne, Tensor.ne), (lt, Tensor.lt), (le, Tensor.le), (gt, Tensor.gt), (ge, Tensor.ge) = (
    (f, m) for m, f in (_comparison(n) for n in ("eq", "ne", "lt", "le", "gt", "ge")))
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne


def _new(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        return factory(*size, dtype=dtype or self.dtype, requires_grad=requires_grad, **kwargs)
    return method


Tensor.new_zeros = _new(creation.zeros)
Tensor.new_ones = _new(creation.ones)
Tensor.new_empty = _new(creation.empty)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return creation.full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return creation.tensor(data, dtype=dtype or (None if isinstance(data, Tensor) else self.dtype),
                           requires_grad=requires_grad)


Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor


def unbind(input, dim=0):  # noqa: A002 — torch's name
    """The slices along dim, each PyTorch's UnbindBackward0 output."""
    expect_tensor(input, "unbind", "input", 1)
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _dim(dim, input.ndim)
    before = (slice(None),) * d
    return tuple(apply(OPS["unbind_step"], (input,), (before + (i,),)) for i in range(input.shape[d]))


def _select(self, dim, index):
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d, i = _dim(dim, self.ndim), operator.index(index)
    size = self.shape[d]
    if not -size <= i < size:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(self.shape)} at dimension {d}")
    return self[(slice(None),) * d + (i,)]


Tensor.unbind = unbind
Tensor.select = _select
Tensor.where = lambda self, condition, other: _where(condition, self, other)
Tensor.maximum = lambda self, other: _maximum(self, other)
Tensor.minimum = lambda self, other: _minimum(self, other)


def _inplace_unary(name):
    def method(self):
        return self._inplace(name + "_", lambda a, b: getattr(a, name)())
    method.__name__ = name + "_"
    return method


for _name in ("exp", "log", "abs", "neg", "sqrt", "sigmoid", "tanh", "relu", "sign"):
    setattr(Tensor, _name + "_", _inplace_unary(_name))
Tensor.pow_ = lambda self, exponent: self._inplace("pow_", lambda a, b: a.pow(b), exponent)
Tensor.clip_ = Tensor.clamp_
