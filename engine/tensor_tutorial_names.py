"""Tensor methods and torch functions tutorials call that the engine lacked (issue 21 §3: every line PyTorch
accepts): addmm (+ addmm_), index_add (+ index_add_), masked_select, unflatten as a function, the logical family,
hstack/vstack, broadcast_to, tile, count_nonzero and torch's aliases (multiply, subtract, divide, ...)."""
from __future__ import annotations

import numpy as np

from . import creation, dtypes, registry
from .boundary import expect_tensor
from .dispatch import _broadcast_message, _dim, _dims, apply
from .functional import cat
from .ops import OPS
from .product_errors import check_addmm_dtypes
from .tensor_core import Tensor
from .tensor_funcs import _in_bounds

# ---------------------------------------------------------------- addmm: beta * input + alpha * (mat1 @ mat2)


def _check_addmm(input, mat1, mat2):  # noqa: A002 — torch's names
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        expect_tensor(m, "addmm", name, 2 if name == "mat1" else 3)
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    (n, k), (k2, p) = mat1.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    check_addmm_dtypes(input._data.dtype, mat1._data.dtype, mat2._data.dtype)
    target = (n, p)
    if input.ndim > 2:
        raise RuntimeError(f"expand: the requested shape has too few dimensions! Target sizes: {list(target)}. "
                           f"Tensor sizes: {list(input.shape)}")
    lead = 2 - input.ndim
    for i, size in enumerate(input.shape):
        if size not in (1, target[lead + i]):
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match the existing size "
                               f"({size}) at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(input.shape)}")


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), one AddmmBackward0 node (input broadcasts to the product's shape)."""
    expect_tensor(input, "addmm", "input", 1)
    _check_addmm(input, mat1, mat2)
    if beta == 1 and alpha == 1:
        result = apply(OPS["addmm"], (input, mat1, mat2))
    else:
        result = apply(OPS["addmm_scaled"], (input, mat1, mat2), (beta, alpha))
    return result


def _grad_operand(*tensors):
    """The operand that tells Tensor._inplace whether the result needs a graph (the first that requires grad)."""
    return next((t for t in tensors if isinstance(t, Tensor) and t._requires_grad), tensors[0])


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    for name, m, position in (("mat1", mat1, 1), ("mat2", mat2, 2)):
        expect_tensor(m, "addmm_", name, position)
    if mat1.ndim == 2 and mat2.ndim == 2 and self.shape != (mat1.shape[0], mat2.shape[1]):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{[mat1.shape[0], mat2.shape[1]]} should match")
    _check_addmm(self, mat1, mat2)
    return self._inplace("addmm_", lambda a, b: addmm(a, mat1, mat2, beta=beta, alpha=alpha), _grad_operand(mat1, mat2))


Tensor.addmm = lambda self, mat1, mat2, *, beta=1, alpha=1: addmm(self, mat1, mat2, beta=beta, alpha=alpha)
Tensor.addmm_ = _addmm_


# ---------------------------------------------------------------- index_add: source's slices added at index along dim

def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    expect_tensor(input, "index_add", "input", 1)
    expect_tensor(source, "index_add", "source", 4)
    d = _dim(dim, input.ndim)
    expect_tensor(index, "index_add", "index", 3)
    if index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           + dtypes.scalar_type_name(index._data.dtype))
    idx = np.asarray(index._data, dtype=np.int64)
    if idx.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{dtypes.scalar_type_name(idx.dtype)} and size: {list(idx.shape)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"index_add_(): self ({dtypes.scalar_type_name(input._data.dtype)}) and source "
                           f"({dtypes.scalar_type_name(source._data.dtype)}) must have the same scalar type")
    source_shape = source.shape if source.ndim else (1,)
    self_shape = input.shape if input.ndim else (1,)
    source_size = source_shape[d] if d < len(source_shape) else 1
    if idx.size != source_size:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({source_size}), for dim: {d}")
    if len(source_shape) != len(self_shape) or any(a != b for i, (a, b) in enumerate(zip(self_shape, source_shape))
                                                   if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    _in_bounds(idx, self_shape[d], d, "index_add_")
    flat_index = registry.new_tensor(idx.reshape(-1))
    if input.ndim == 0:
        return apply(OPS["index_add"], (input.reshape(1), flat_index, source.reshape(1)), (0, alpha)).reshape(())
    return apply(OPS["index_add"], (input, flat_index, source.reshape(source_shape)), (d, alpha))


def _index_add_(self, dim, index, source, *, alpha=1):
    index_add(self, dim, index, source, alpha=alpha)  # checks before the write: a refused call leaves self alone
    return self._inplace("index_add_", lambda a, b: index_add(a, dim, index, source, alpha=alpha), source)


Tensor.index_add = lambda self, dim, index, source, *, alpha=1: index_add(self, dim, index, source, alpha=alpha)
Tensor.index_add_ = _index_add_


# ---------------------------------------------------------------- masked_select: a vector of the masked elements

def masked_select(input, mask):  # noqa: A002
    expect_tensor(input, "masked_select", "input", 1)
    expect_tensor(mask, "masked_select", "mask", 2)
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        np.broadcast_shapes(mask.shape, input.shape)
    except ValueError:  # PyTorch expands the mask against input: the mask is "tensor a" in its message
        raise RuntimeError(_broadcast_message([mask._data, input._data])) from None
    return apply(OPS["masked_select"], (input, mask))


Tensor.masked_select = lambda self, mask: masked_select(self, mask)


def unflatten(input, dim, sizes):  # noqa: A002
    expect_tensor(input, "unflatten", "input", 1)
    return input.unflatten(dim, sizes)


# ---------------------------------------------------------------- logical family (bool results, no gradient)

def _logical_operand(other, name):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return other


def logical_and(input, other):  # noqa: A002
    expect_tensor(input, "logical_and", "input", 1)
    return apply(OPS["logical_and"], (input, _logical_operand(other, "logical_and")))


def logical_or(input, other):  # noqa: A002
    expect_tensor(input, "logical_or", "input", 1)
    return apply(OPS["logical_or"], (input, _logical_operand(other, "logical_or")))


def logical_not(input):  # noqa: A002
    expect_tensor(input, "logical_not", "input", 1)
    return apply(OPS["eq"], (input, 0))  # NOTE: == 0 is logical_not for every real value (NaN is "true": False)


def logical_xor(input, other):  # noqa: A002
    expect_tensor(input, "logical_xor", "input", 1)
    other = _logical_operand(other, "logical_xor")
    return apply(OPS["ne"], (apply(OPS["ne"], (input, 0)), apply(OPS["ne"], (other, 0))))


for _name in ("logical_and", "logical_or", "logical_xor"):
    setattr(Tensor, _name, globals()[_name])
Tensor.logical_not = logical_not


# ---------------------------------------------------------------- joining and repeating

def _tensors_arg(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def hstack(tensors):
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in _tensors_arg(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    tensors = [t.reshape(1, 1) if t.ndim == 0 else t.unsqueeze(0) if t.ndim == 1 else t
               for t in _tensors_arg(tensors, "vstack")]
    return cat(tensors, 0)


row_stack = vstack


def broadcast_to(input, size):  # noqa: A002
    expect_tensor(input, "broadcast_to", "input", 1)
    return input.expand(size)


def broadcast_tensors(*tensors):
    """Each tensor expanded to the shape they broadcast to (ExpandBackward0 where a shape changes, as in PyTorch)."""
    for i, item in enumerate(tensors):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(item).__name__}")
    try:
        shape = np.broadcast_shapes(*(item.shape for item in tensors))
    except ValueError:
        raise RuntimeError(_broadcast_message([item._data for item in tensors])) from None
    return tuple(item if item.shape == shape else item.expand(shape) for item in tensors)


def tile(input, dims):  # noqa: A002
    """input repeated dims times: PyTorch's repeat, with dims padded by leading 1s to input's rank."""
    expect_tensor(input, "tile", "input", 1)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return input.repeat(*dims)


Tensor.tile = lambda self, *dims: tile(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list))
                                       else dims)


def count_nonzero(input, dim=None):  # noqa: A002
    expect_tensor(input, "count_nonzero", "input", 1)
    dims = _dims(dim, input.ndim)
    counted = np.count_nonzero(input._data, axis=dims)
    return registry.new_tensor(np.asarray(counted, dtype=np.int64))


Tensor.count_nonzero = lambda self, dim=None: count_nonzero(self, dim)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):  # noqa: A002
    expect_tensor(input, "empty_like", "input", 1)
    return creation.empty(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def is_floating_point(input):  # noqa: A002
    expect_tensor(input, "is_floating_point", "input", 1)
    return input.is_floating_point()


# ---------------------------------------------------------------- trace, lerp, diff, logspace, unique, half

def trace(input):  # noqa: A002
    expect_tensor(input, "trace", "input", 1)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(OPS["trace"], (input,))


Tensor.trace = trace


def _c_name(t):
    """PyTorch's C type name of a tensor's dtype in its messages: float, double, long, ..."""
    return dtypes.scalar_type_name(t._data.dtype).lower()


def lerp(input, end, weight):  # noqa: A002
    """input + weight * (end - input): LerpBackward0 for a number weight, LerpBackward1 for a tensor one."""
    expect_tensor(input, "lerp", "input", 1)
    expect_tensor(end, "lerp", "end", 2)
    for name, other in (("end", end), ("weight", weight)):
        if isinstance(other, Tensor) and other.dtype != input.dtype:
            raise RuntimeError(f"expected dtype {_c_name(input)} for `{name}` but got dtype {_c_name(other)}")
    if isinstance(weight, Tensor):
        return apply(OPS["lerp_tensor"], (input, end, weight))
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        raise TypeError(f"lerp() received an invalid combination of arguments - got (Tensor, Tensor, "
                        f"{type(weight).__name__}), but expected one of:\n * (Tensor input, Tensor end, Tensor weight)"
                        "\n * (Tensor input, Tensor end, Number weight)")
    return apply(OPS["lerp_scalar"], (input, end), (float(weight),))


Tensor.lerp = lerp
Tensor.lerp_ = lambda self, end, weight: self._inplace("lerp_", lambda a, b: lerp(a, end, weight),
                                                        _grad_operand(end, weight))


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    """n-th forward differences along dim: PyTorch composes it of narrow and sub too (SubBackward0)."""
    expect_tensor(input, "diff", "input", 1)
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    out = cat(parts, d) if len(parts) > 1 else input
    if 0 < n and out.shape[d] <= n:  # every difference is taken away: one step to the empty result, not n of them
        return out.narrow(d, 0, 0) - out.narrow(d, 0, 0)
    for _ in range(n):
        size = out.shape[d]
        out = out.narrow(d, 1, size - 1) - out.narrow(d, 0, size - 1)
    return out


Tensor.diff = diff


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps), computed in float64 and rounded once, as PyTorch's kernel does."""
    exponents = creation.linspace(start, end, steps, dtype=dtypes.float64)._data
    values = np.power(float(base), exponents)
    return creation.tensor(values, dtype=dtype or dtypes.float32, requires_grad=requires_grad)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values (sorted, as PyTorch's CPU kernel returns them either way), with the index of each input
    element among them and their counts when asked; no gradient, as in PyTorch."""
    expect_tensor(input, "unique", "input", 1)
    axis = None if dim is None else _dim(dim, input.ndim)
    values, inverse, counts = np.unique(np.asarray(input._data), return_inverse=True, return_counts=True, axis=axis)
    if axis is None:
        inverse = inverse.reshape(input.shape)
    out = [registry.new_tensor(values)]
    if return_inverse:
        out.append(registry.new_tensor(inverse.astype(np.int64)))
    if return_counts:
        out.append(registry.new_tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


Tensor.unique = lambda self, sorted=True, return_inverse=False, return_counts=False, dim=None: unique(  # noqa: A002
    self, sorted, return_inverse, return_counts, dim)
Tensor.half = lambda self: self.to(dtypes.float16)


def relu_(input):  # noqa: A002
    expect_tensor(input, "relu_", "input", 1)
    return input.relu_()


def sigmoid_(input):  # noqa: A002
    expect_tensor(input, "sigmoid_", "input", 1)
    return input.sigmoid_()


def tanh_(input):  # noqa: A002
    expect_tensor(input, "tanh_", "input", 1)
    return input.tanh_()
