"""torch functions and Tensor methods programs bring that the engine lacked (issue 21, names past §3): median,
nansum / nanmean, dist, bincount, addcmul / addcdiv (and their in-place forms), movedim / moveaxis,
take_along_dim, repeat_interleave, tril_indices / triu_indices and Tensor.multinomial. Each builds the nodes
PyTorch builds (MedianBackward0/1, NansumBackward0, DistBackward0, AddcmulBackward0, PermuteBackward0, ...)."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from . import creation, dtypes
from .boundary import expect_tensor, type_name
from .dispatch import _as_tensor_operand, _dim, _dims, apply
from .grad_mode import STATE
from .linalg_solve import old_cholesky, old_qr, old_slogdet, old_svd, pinverse
from .ops import OPS
from .tensor_core import Tensor
from .tensor_funcs import return_type
from .tensor_tutorial_names import _grad_operand

median_result = return_type("median")  # prints as torch.return_types.median(values=..., indices=...)


def _int_arg(value, fn, name, position):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not {type_name(value)}")
    return operator.index(value)


# ---------------------------------------------------------------- median
def median(input, dim=None, keepdim=False):  # noqa: A002 — torch's names
    """The lower of the two middle values: of all elements (0-d), or per row of `dim` with the index it came from."""
    expect_tensor(input, "median", "input", 1)
    if input._data.dtype == np.bool_:
        raise RuntimeError('"median_cpu" not implemented for \'Bool\'')
    if dim is None:
        if input.numel() == 0:
            return creation.tensor(float("nan"), dtype=input.dtype)
        return apply(OPS["median"], (input,))
    d = _dim(_int_arg(dim, "median", "dim", 2), input.ndim)
    if input.ndim == 0:
        return median_result(input.clone(), creation.tensor(0))
    if input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    keep = bool(keepdim)
    return median_result(apply(OPS["median_dim"], (input,), (d, keep)), apply(OPS["median_indices"], (input,), (d, keep)))


# ---------------------------------------------------------------- nansum / nanmean
def nansum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    expect_tensor(input, "nansum", "input", 1)
    x = input if dtype is None else input.to(dtype)
    dims = _dims(dim, x.ndim)
    return apply(OPS["nansum"], (x,), (dims, bool(keepdim)))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """nansum / the count of non-NaN elements: PyTorch's composite (its node is DivBackward0)."""
    expect_tensor(input, "nanmean", "input", 1)
    if input._data.dtype.kind != "f" and dtype is None:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{dtypes.scalar_type_name(input._data.dtype)}")
    x = input if dtype is None else input.to(dtype)
    count = nansum((~x.isnan()).to(x.dtype), dim, keepdim)
    return nansum(x, dim, keepdim) / count


# ---------------------------------------------------------------- dist
def dist(input, other, p=2):  # noqa: A002
    """‖input − other‖_p over all elements (broadcast), one DistBackward0 node."""
    expect_tensor(input, "dist", "input", 1)
    expect_tensor(other, "dist", "other", 2)
    if not isinstance(p, (numbers.Real, Tensor)) or isinstance(p, bool):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not {type_name(p)}")
    if input._data.dtype.kind != "f" or other._data.dtype.kind != "f":
        raise RuntimeError("dist only supports floating-point dtypes")
    return apply(OPS["dist"], (input, other), (float(p.item() if isinstance(p, Tensor) else p),))


# ---------------------------------------------------------------- bincount
def bincount(input, weights=None, minlength=0):  # noqa: A002
    expect_tensor(input, "bincount", "input", 1)
    minlength = _int_arg(minlength, "bincount", "minlength", 3)
    data = input._data
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if data.size and data.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:  # (its op's size rule bounds the bins by the largest value, before they are made)
        return apply(OPS["bincount"], (input,), (minlength,))
    expect_tensor(weights, "bincount", "weights", 2)
    if weights.shape != input.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return apply(OPS["bincount_weighted"], (input, weights.detach()), (minlength,))


# ---------------------------------------------------------------- addcmul / addcdiv
def _addc(name, input, tensor1, tensor2, value):  # noqa: A002
    for i, (arg, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        expect_tensor(t, name, arg, i)
    if not isinstance(value, numbers.Number) or isinstance(value, complex):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type_name(value)}")
    if name == "addcdiv" and tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
                           "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    return apply(OPS[name], (input, tensor1, tensor2), (value,))


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """input + value * tensor1 * tensor2, one AddcmulBackward0 node."""
    return _addc("addcmul", input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """input + value * tensor1 / tensor2, one AddcdivBackward0 node."""
    return _addc("addcdiv", input, tensor1, tensor2, value)


# ---------------------------------------------------------------- movedim / take_along_dim / repeat_interleave
def movedim(input, source, destination):  # noqa: A002
    """The dims `source` moved to `destination`, the others in their order: a permute (PermuteBackward0)."""
    expect_tensor(input, "movedim", "input", 1)
    src = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    dst = (destination,) if isinstance(destination, numbers.Integral) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    n = input.ndim
    src = [_dim(_int_arg(s, "movedim", "source", 2), n) for s in src]
    dst = [_dim(_int_arg(s, "movedim", "destination", 3), n) for s in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o is None else o for o in order]
    return input.permute(*order) if n else input.view(())


def take_along_dim(input, indices, dim=None):  # noqa: A002
    """input's values at `indices` along `dim` (the two broadcast first), or of the flattened input: a gather."""
    expect_tensor(input, "take_along_dim", "input", 1)
    expect_tensor(indices, "take_along_dim", "indices", 2)
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{dtypes.scalar_type_name(indices._data.dtype)}")
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    d = _dim(_int_arg(dim, "take_along_dim", "dim", 3), input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    shape_in, shape_ix = list(input.shape), list(indices.shape)
    shape_in[d] = shape_ix[d] = 1
    try:
        common = list(np.broadcast_shapes(tuple(shape_in), tuple(shape_ix)))
    except ValueError:
        raise RuntimeError(f"shape mismatch: objects cannot be broadcast to a single shape. Mismatch is between "
                           f"arg 0 with shape {list(input.shape)} and arg 1 with shape {list(indices.shape)}") from None
    to_in, to_ix = list(common), list(common)
    to_in[d], to_ix[d] = input.shape[d], indices.shape[d]
    x = input if list(input.shape) == to_in else input.expand(*to_in)
    ix = indices if list(indices.shape) == to_ix else indices.expand(*to_ix)
    return x.gather(d, ix)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002
    """Each element (or slice along `dim`) repeated: an int count through unsqueeze, expand and a copy (PyTorch's
    ViewBackward0 on top), a tensor of counts through index_select (IndexSelectBackward0)."""
    if repeats is None:  # torch.repeat_interleave(repeats): the indices, each repeated its own count
        expect_tensor(input, "repeat_interleave", "repeats", 1)
        counts = input
        return repeat_interleave(creation.arange(counts.numel()), counts, 0)
    expect_tensor(input, "repeat_interleave", "input", 1)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _dim(_int_arg(dim, "repeat_interleave", "dim", 3), x.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1 and repeats._data.dtype.kind in "iu":
        repeats = int(repeats.item())
    if isinstance(repeats, Tensor):
        counts = repeats._data
        if counts.dtype.kind not in "iu":
            raise RuntimeError("repeats has to be Long or Int tensor")
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.shape[0] != x.shape[d]:
            raise RuntimeError("repeats must have the same size as input along dim")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        limits = STATE.limits
        if limits is not None:
            limits.before_alloc((int(counts.sum()),))
        index = creation.tensor(np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts))
        return x.index_select(d, index)
    n = _int_arg(repeats, "repeat_interleave", "repeats", 2)
    if n < 0:
        raise RuntimeError("repeats can not be negative")
    if x.ndim == 0:
        x, d = x.reshape(1), 0
    shape = list(x.shape)
    expanded = shape[:d + 1] + [n] + shape[d + 1:]
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc(tuple(expanded))
    out_shape = shape[:d] + [shape[d] * n] + shape[d + 1:]
    return x.unsqueeze(d + 1).expand(*expanded).clone().view(*out_shape)


# ---------------------------------------------------------------- tril_indices / triu_indices
def _tri_indices(name, row, col, offset, dtype, lower):
    row, col = _int_arg(row, name, "row", 1), _int_arg(col, name, "col", 2)
    offset = _int_arg(offset, name, "offset", 3)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc((2, row * col))
    mask = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1, dtype=bool)
    rows, cols = np.nonzero(mask)
    return creation.tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype or dtypes.int64)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("tril_indices", row, col, offset, dtype, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("triu_indices", row, col, offset, dtype, False)


# ---------------------------------------------------------------- stride / unfold
def _stride(self, dim=None):
    """Elements to step in each dim (numpy's byte strides over the item size): PyTorch's for the views it shares."""
    data = self._data
    strides = tuple(s // data.itemsize for s in data.strides) if isinstance(data, np.ndarray) else ()
    if dim is None:
        return strides
    return strides[_dim(_int_arg(dim, "stride", "dim", 1), self.ndim)] if self.ndim else 1


def _unfold_method(self, dimension, size, step):
    d = _dim(_int_arg(dimension, "unfold", "dimension", 1), self.ndim) if self.ndim else 0
    size, step = _int_arg(size, "unfold", "size", 2), _int_arg(step, "unfold", "step", 3)
    length = self.shape[d] if self.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(OPS["unfold"], (self,), (d, size, step))


# ---------------------------------------------------------------- the Tensor methods
def _addcmul_(self, tensor1, tensor2, *, value=1):
    return self._inplace("addcmul_", lambda a, b: addcmul(a, tensor1, tensor2, value=value),
                         _grad_operand(tensor1, tensor2))


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    return self._inplace("addcdiv_", lambda a, b: addcdiv(a, tensor1, tensor2, value=value),
                         _grad_operand(tensor1, tensor2))


Tensor.stride = _stride
Tensor.unfold = _unfold_method
Tensor.median = lambda self, dim=None, keepdim=False: median(self, dim, keepdim)
Tensor.nansum = lambda self, dim=None, keepdim=False, *, dtype=None: nansum(self, dim, keepdim, dtype=dtype)
Tensor.nanmean = lambda self, dim=None, keepdim=False, *, dtype=None: nanmean(self, dim, keepdim, dtype=dtype)
Tensor.dist = lambda self, other, p=2: dist(self, _as_tensor_operand(other), p)
Tensor.bincount = lambda self, weights=None, minlength=0: bincount(self, weights, minlength)
Tensor.addcmul = lambda self, tensor1, tensor2, *, value=1: addcmul(self, tensor1, tensor2, value=value)
Tensor.addcdiv = lambda self, tensor1, tensor2, *, value=1: addcdiv(self, tensor1, tensor2, value=value)
Tensor.addcmul_ = _addcmul_
Tensor.addcdiv_ = _addcdiv_
Tensor.movedim = lambda self, source, destination: movedim(self, source, destination)
Tensor.moveaxis = Tensor.movedim
Tensor.take_along_dim = lambda self, indices, dim=None: take_along_dim(self, indices, dim)
Tensor.repeat_interleave = lambda self, repeats=None, dim=None, *, output_size=None: repeat_interleave(
    self, repeats, dim, output_size=output_size)
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: creation.multinomial(
    self, num_samples, replacement, generator=generator)
moveaxis = movedim
# the linear-algebra methods (engine/linalg_solve.py sits below Tensor)
Tensor.svd = lambda self, some=True, compute_uv=True: old_svd(self, some, compute_uv)
Tensor.cholesky = lambda self, upper=False: old_cholesky(self, upper)
Tensor.qr = lambda self, some=True: old_qr(self, some)
Tensor.slogdet = lambda self: old_slogdet(self)
Tensor.pinverse = lambda self, rcond=1e-15: pinverse(self, rcond)

__all__ = ["addcdiv", "addcmul", "bincount", "dist", "median", "moveaxis", "movedim", "nanmean", "nansum",
           "repeat_interleave", "take_along_dim", "tril_indices", "triu_indices"]
