"""Tensor's operators, arithmetic methods and elementwise functions."""
from __future__ import annotations

import numpy as np

from . import registry
from .boundary import expect_tensor
from .dispatch import _REAL, _as_tensor_operand, _binary, _dim, apply, refused, wrapped_scalar
from .dtypes import scalar_type_name
from .ops import OPS
from .product_errors import check_bmm, check_dot, check_matmul, check_matmul_dtypes, check_mm, check_mv, check_product_dtypes
from .promotion import operands_dtype

_BITWISE_KERNELS = {"and": "bitwise_and_cpu", "or": "bitwise_or_cpu", "xor": "bitwise_xor_cpu",
                    "left_shift": "lshift_cpu", "right_shift": "rshift_cpu"}


def _bitwise(word, a, b, reflected=False):
    """`a & b`, `a | b`, `a ^ b`, `a << b`, `a >> b` (`b op a` when reflected): bitwise on integers (an out-of-range
    int wraps first), logical & and | on two bools, refused on floats (and shifts on bools) in PyTorch's words."""
    b = wrapped_scalar(a, b) if type(b) is int else b if isinstance(b, _REAL) else _as_tensor_operand(b)
    if b is NotImplemented:
        return NotImplemented
    b_is_tensor = isinstance(b, registry.Tensor)
    common = operands_dtype((a._data, b._data if b_is_tensor else b), (True, b_is_tensor))
    if common.kind in "fc" or common.kind == "b" and word.endswith("shift"):
        raise NotImplementedError(f'"{_BITWISE_KERNELS[word]}" not implemented for \'{scalar_type_name(common)}\'')
    if common.kind == "b" and word != "xor":
        return apply(OPS[f"logical_{word}"], (a, b))
    return apply(OPS[f"bitwise_{word}"], (b, a) if reflected else (a, b))


class MathMixin:
    """Operators (+, *, **, @, ==, &...), add/mul/matmul..., exp/log/relu/clamp/softmax..."""

    __slots__ = ()

    # ----- arithmetic -----
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", self, other) if isinstance(other, _REAL) else NotImplemented

    def __sub__(self, other):
        return _binary("sub", self, other)

    def __rsub__(self, other):
        if not isinstance(other, _REAL):
            return NotImplemented
        return apply(OPS["rsub"], (self,), (wrapped_scalar(self, other),))

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return _binary("mul", self, other) if isinstance(other, _REAL) else NotImplemented

    def __truediv__(self, other):
        if type(other) is int and self._data.dtype.kind in "biu":
            # true division computes integers in float32: the int is not wrapped to the tensor's dtype (uint8 / -2)
            return _binary("div", self, float(other))
        return _binary("div", self, other)

    def __rtruediv__(self, other):
        if not isinstance(other, _REAL):
            return NotImplemented
        # PyTorch computes c / x as reciprocal(x) * c, so the node is MulBackward0.
        return _binary("mul", self.reciprocal(), other)

    def __pow__(self, other):
        if isinstance(other, _REAL):
            return apply(OPS["pow_scalar"], (self,), (other,))
        return _binary("pow", self, other)

    def __rpow__(self, other):
        if not isinstance(other, _REAL):
            return NotImplemented
        return apply(OPS["rpow"], (self,), (other,))

    def __mod__(self, other):
        return self.remainder(other)

    def __rmod__(self, other):
        if not isinstance(other, _REAL):
            return NotImplemented
        return apply(OPS["rremainder"], (self,), (wrapped_scalar(self, other),))  # PyTorch: grad_fn=<NotImplemented>

    def __floordiv__(self, other):
        return self.floor_divide(other)

    def __rfloordiv__(self, other):
        if not isinstance(other, _REAL):
            return NotImplemented
        return apply(OPS["rfloor_divide"], (self,), (wrapped_scalar(self, other),))

    def remainder(self, other):
        if _scalar_keeps_dtype(self, other):
            return apply(OPS["remainder_scalar"], (self,), (wrapped_scalar(self, other),))
        return _binary("remainder", self, other)

    def fmod(self, other):
        if _scalar_keeps_dtype(self, other):
            return apply(OPS["fmod_scalar"], (self,), (wrapped_scalar(self, other),))
        return _binary("fmod", self, other)

    def floor_divide(self, other):
        return _binary("floor_divide", self, other)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __neg__(self):
        return apply(OPS["neg"], (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __eq__(self, other):
        return _binary("eq", self, other)

    def __ne__(self, other):
        return _binary("ne", self, other)

    def __lt__(self, other):
        return _binary("lt", self, other)

    def __le__(self, other):
        return _binary("le", self, other)

    def __gt__(self, other):
        return _binary("gt", self, other)

    def __ge__(self, other):
        return _binary("ge", self, other)

    def __and__(self, other):
        return _bitwise("and", self, other)

    def __or__(self, other):
        return _bitwise("or", self, other)

    def __xor__(self, other):
        return _bitwise("xor", self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, other):
        return _bitwise("left_shift", self, other)

    def __rshift__(self, other):
        return _bitwise("right_shift", self, other)

    def __rlshift__(self, other):
        return _bitwise("left_shift", self, other, reflected=True) if isinstance(other, _REAL) else NotImplemented

    def __rrshift__(self, other):
        return _bitwise("right_shift", self, other, reflected=True) if isinstance(other, _REAL) else NotImplemented

    def __invert__(self):
        if self._data.dtype.kind in "fc":  # the operator's own refusal (bitwise_not's is the kernel's)
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return apply(OPS["invert"], (self,))

    def add(self, other, alpha=1):
        return self + other if type(alpha) is int and alpha == 1 else _scaled(self, other, alpha, "add_scaled")

    def sub(self, other, alpha=1):
        return self - other if type(alpha) is int and alpha == 1 else _scaled(self, other, alpha, "sub_scaled")

    def mul(self, other):
        return self * other

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                               f"'{rounding_mode}'")
        return _binary("div_" + rounding_mode, self, other)

    def pow(self, exponent):
        return self ** exponent

    def square(self):
        return self ** 2

    def neg(self):
        return -self

    def matmul(self, other):
        return self @ other

    def mm(self, other):
        check_mm(self._data.shape, np.shape(getattr(other, "_data", other)))
        if isinstance(other, registry.Tensor):
            check_product_dtypes("mm", self._data.dtype, other._data.dtype)
        return apply(OPS["mm"], (self, other))

    def dot(self, other):
        check_dot(self._data.shape, np.shape(getattr(other, "_data", other)))
        if isinstance(other, registry.Tensor):
            check_product_dtypes("dot", self._data.dtype, other._data.dtype)
        return apply(OPS["dot"], (self, other))

    def mv(self, vec):
        expect_tensor(vec, "mv", "vec", 2)
        check_mv(self._data.shape, np.shape(getattr(vec, "_data", vec)))
        if isinstance(vec, registry.Tensor):
            check_product_dtypes("mv", self._data.dtype, vec._data.dtype)
        return apply(OPS["mv"], (self, vec))

    def bmm(self, mat2):
        expect_tensor(mat2, "bmm", "mat2", 2)
        check_bmm(self._data.shape, np.shape(getattr(mat2, "_data", mat2)))
        if isinstance(mat2, registry.Tensor):
            check_product_dtypes("bmm", self._data.dtype, mat2._data.dtype)
        return apply(OPS["bmm"], (self, mat2))

    # ----- elementwise: the one-argument ops are made from _UNARY, below the class -----
    def clamp(self, min=None, max=None):  # noqa: A002 — torch's keyword names
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        return apply(OPS["clamp"], (self,), (min, max))

    clip = clamp

    def clamp_min(self, min):  # noqa: A002
        return apply(OPS["clamp_min"], (self,), (min,))  # its own node in PyTorch: ClampMinBackward0

    def clamp_max(self, max):  # noqa: A002
        return apply(OPS["clamp_max"], (self,), (max,))

    def softmax(self, dim):
        return apply(OPS["softmax"], (self,), (_dim(dim, self.ndim),))

    def log_softmax(self, dim):
        return apply(OPS["log_softmax"], (self,), (_dim(dim, self.ndim),))


_UNARY = ("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sqrt", "reciprocal", "sign", "exp2", "log2",
          "log10", "rsqrt", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "trunc", "frac",
          "deg2rad", "rad2deg", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal")
# numpy's and PyTorch's other names for the same functions (Tensor.arcsin is Tensor.asin, fix is trunc)
UNARY_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
                 "arctanh": "atanh", "fix": "trunc"}


def _scalar_keeps_dtype(t, other):
    """A Python number the tensor's dtype absorbs: PyTorch's Tensor-Scalar overload (its own grad_fn)."""
    return isinstance(other, _REAL) and (t._data.dtype.kind == "f" or not isinstance(other, (float, np.floating)))


def _unary(name):
    """MathMixin's method `name`: `def name(self): return apply(OPS[name], (self,))`."""
    def method(self):
        return apply(OPS[name], (self,))
    method.__name__ = name
    method.__qualname__ = f"MathMixin.{name}"
    return method


for _name in _UNARY:
    setattr(MathMixin, _name, _unary(_name))
for _alias, _name in UNARY_ALIASES.items():
    setattr(MathMixin, _alias, getattr(MathMixin, _name))
del _name, _alias


def _operand(x):
    """A product's operand as a tensor (torch.matmul takes lists and arrays too)."""
    return x if isinstance(x, registry.Tensor) else registry.new_tensor(x)


def matmul(a, b):
    a, b = _operand(a), _operand(b)
    da, db = a.ndim, b.ndim
    try:
        check_matmul(a.shape, b.shape)  # torch's message for each case (engine/product_errors.py)
        check_matmul_dtypes(da, db, a._data.dtype, b._data.dtype)  # PyTorch never promotes a product's operands
    except RuntimeError as e:  # recorded as the product that failed: the page draws it red with both shapes
        raise refused(OPS["mm"], (a, b), e) from None
    if da == 1 and db == 1:
        return apply(OPS["dot"], (a, b))
    if da == 2 and db == 2:
        return apply(OPS["mm"], (a, b))
    if da == 2 and db == 1:
        return apply(OPS["mv"], (a, b))
    if da == 1 and db == 2:
        return apply(OPS["matmul_squeeze"], (apply(OPS["mm"], (a.unsqueeze(0), b)),), ((0,),))
    if db == 2:
        # PyTorch folds the batch dims into one matrix: view → mm → view back.
        lead = a.shape[:-1]
        folded = a.reshape(-1, a.shape[-1])
        return apply(OPS["unsafe_view"], (apply(OPS["mm"], (folded, b)),), (lead + (b.shape[-1],),))
    if da == 1:
        return apply(OPS["squeeze_dim"], (matmul(a.unsqueeze(0), b),), (-2 % (db),))
    if db == 1:
        return apply(OPS["squeeze_dim"], (matmul(a, b.unsqueeze(-1)),), (da - 1,))
    out = apply(OPS["bmm"], (a, b))
    return apply(OPS["unsafe_view"], (out,), (out.shape,))


def _scaled(self, other, alpha, op):
    """self ± alpha * other as PyTorch computes it: one AddBackward0 / SubBackward0 node, one fused multiply-add
    (engine/ops_stats.py `_scaled_sum`), not a product then a sum."""
    if isinstance(alpha, registry.Tensor) or not isinstance(alpha, _REAL):
        raise TypeError(f"{op[:3]}(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    operand = _as_tensor_operand(other)
    if operand is NotImplemented:
        raise TypeError(f"{op[:3]}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    integral = all(getattr(getattr(x, "_data", x), "dtype", np.dtype(type(x))).kind in "biu"
                   for x in (self, operand) if x is not None)
    if integral and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    return apply(OPS[op], (self, operand), (alpha,))

