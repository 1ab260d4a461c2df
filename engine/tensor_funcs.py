"""Tensor's methods for the functions tutorials use: gather/scatter, cumulative ops, sort/topk, repeat/chunk/split,
triangles and diagonals, flip/roll/index_select, nonzero, closeness, rounding, prod/std/var, p-norms."""
from __future__ import annotations

import builtins
import operator
from collections import namedtuple

import numpy as np

from . import dispatch, dtypes, registry
from .boundary import is_number, type_name
from .dispatch import _binary, _dim, _dims, _shape_arg, apply
from .ops import OPS


def return_type(name, fields=("values", "indices")):
    """A torch.return_types named tuple: it prints as PyTorch prints `x.max(1)` or `x.sort()`."""
    base = namedtuple(name, fields)

    def __repr__(self):  # noqa: N807
        parts = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{parts})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                                "__module__": "torch.return_types"})


sort_result = return_type("sort")
topk_result = return_type("topk")


def _long_index(index, fn):
    """The index tensor's int64 array, with PyTorch's dtype message."""
    if not isinstance(index, registry.Tensor):
        raise TypeError(f"{fn}(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    arr = np.asarray(index._data)
    if arr.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{fn}(): Expected dtype int32 or int64 for index" if fn == "index_select" else
                           f"{fn}(): Expected dtype int32/int64 for index")
    return arr.astype(np.int64, copy=False)


def _in_bounds(index, size, dim, fn):
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index[(index < 0) | (index >= size)].flat[0])
        if fn == "index_select":
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_gather_shapes(self, index, dim, fn, src=None):
    if index.ndim != builtins.max(self.ndim, 1) and not (index.ndim == 0 and self.ndim == 0):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input tensor" if fn == "gather" else "self tensor"))
    shape = self._data.shape or (1,)
    ishape = index.shape or (1,)
    too_big = any(ishape[d] > shape[d] for d in range(len(ishape)) if d != dim)
    if fn == "gather":
        if too_big:
            bad = next(d for d in range(len(ishape)) if d != dim and ishape[d] > shape[d])
            raise RuntimeError(f"Size does not match at dimension {bad} "
                               f"expected index {list(index.shape)} to be no larger than self {list(self.shape)} apart "
                               f"from dimension {dim}")
        return
    sshape = None if src is None else (np.shape(src._data) or (1,))
    if too_big or (sshape is not None and (len(sshape) != len(ishape) or any(i > s for i, s in zip(ishape, sshape)))):
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} apart from "
                           f"dimension {dim}" + ("" if src is None else f" and to be no larger size than src {list(src.shape)}"))


class FuncsMixin:
    """The functions tutorials reach for beyond arithmetic (torch.gather, x.sort(), x.cumsum(1), ...)."""

    __slots__ = ()

    # ----- reductions -----
    def logsumexp(self, dim=None, keepdim=False):
        x = self if self._data.dtype.kind == "f" else self.float()
        dims = tuple(range(self.ndim)) if dim is None or dim == () else _dims(dim, self.ndim)
        return apply(OPS["logsumexp"], (x,), (dims if self.ndim else None, keepdim))

    def prod(self, dim=None, keepdim=False, dtype=None):
        x = self if dtype is None else self.to(dtype)
        if dim is None:
            return apply(OPS["prod"], (x,))
        return apply(OPS["prod_dim"], (x,), (_dim(dim, self.ndim), keepdim))

    def _spread(self, name, dim, unbiased, keepdim, correction, with_mean=False):
        if self._data.dtype.kind != "f":
            what = f"{name}_mean" if with_mean else "std and var"
            raise RuntimeError(f"{what} only support floating point and complex dtypes")
        if isinstance(dim, bool):  # x.std(False): the old positional `unbiased`
            dim, unbiased = None, dim
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        dims = None if dim is None else _dims(dim, self.ndim)
        if dims is not None and len(set(dims)) != len(dims):  # numpy's words would be "duplicate value in 'axis'"
            raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple times in the list of dims")
        if with_mean:  # torch.std_mean / var_mean: (spread, mean), each carrying its gradient back
            params = (dims, correction, keepdim)
            return apply(OPS[f"{name}_mean_{name}"], (self,), params), apply(OPS[f"{name}_mean_mean"], (self,), params)
        return apply(OPS[name], (self,), (dims, correction, keepdim))

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return self._spread("var", dim, unbiased, keepdim, correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return self._spread("std", dim, unbiased, keepdim, correction)

    # ----- cumulative -----
    def cumsum(self, dim, dtype=None):
        x = self if dtype is None else self.to(dtype)
        return apply(OPS["cumsum"], (x,), (_dim(dim, self.ndim),))

    def cumprod(self, dim, dtype=None):
        x = self if dtype is None else self.to(dtype)
        return apply(OPS["cumprod"], (x,), (_dim(dim, self.ndim),))

    # ----- gather / scatter / select -----
    def gather(self, dim, index, *, sparse_grad=False):
        idx = _long_index(index, "gather")
        d = _dim(dim, self.ndim)
        _check_gather_shapes(self, idx, d, "gather")
        _in_bounds(idx, (self._data.shape or (1,))[d], d, "gather")
        return apply(OPS["gather"], (self, index), (d,))

    def _scatter(self, name, dim, index, src, value, reduce):
        if reduce is not None:
            raise NotImplementedError("flowgrad's scatter does not take reduce= (use scatter_add)")
        if src is None and value is None:
            raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
        fn = "scatter"  # PyTorch names scatter in scatter_add's messages too
        idx = _long_index(index, fn)
        d = _dim(dim, self.ndim)
        if isinstance(src, registry.Tensor):
            if src._data.dtype != self._data.dtype:
                raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
            _check_gather_shapes(self, idx, d, fn, src)
            _in_bounds(idx, (self._data.shape or (1,))[d], d, fn)
            return apply(OPS[name], (self, index, src), (d,))
        if name == "scatter_add":
            raise TypeError("scatter_add(): argument 'src' (position 3) must be Tensor, not "
                            f"{type(src).__name__}")
        v = value if src is None else src
        v = v.item() if isinstance(v, registry.Tensor) else v
        _check_gather_shapes(self, idx, d, fn)
        _in_bounds(idx, (self._data.shape or (1,))[d], d, fn)
        return apply(OPS["scatter_value"], (self, index), (d, v))

    def scatter(self, dim, index, src=None, value=None, *, reduce=None):
        return self._scatter("scatter", dim, index, src, value, reduce)

    def scatter_add(self, dim, index, src):
        return self._scatter("scatter_add", dim, index, src, None, None)

    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        return self._inplace("scatter_", lambda a, b: a._scatter("scatter", dim, index, src, value, reduce), src)

    def scatter_add_(self, dim, index, src):
        return self._inplace("scatter_add_", lambda a, b: a._scatter("scatter_add", dim, index, src, None, None), src)

    def index_select(self, dim, index):
        idx = _long_index(index, "index_select")
        if idx.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        d = _dim(dim, self.ndim)
        _in_bounds(idx, (self._data.shape or (1,))[d], d, "index_select")
        if self.ndim == 0:
            return apply(OPS["index_select"], (self.reshape(1), index.reshape(-1)), (0,)).reshape(())
        return apply(OPS["index_select"], (self, index.reshape(-1) if idx.ndim == 0 else index), (d,))

    def masked_fill(self, mask, value):
        if not isinstance(mask, registry.Tensor) or mask._data.dtype != np.bool_:
            got = dtypes.scalar_type_name(mask._data.dtype).lower() if isinstance(mask, registry.Tensor) else type(mask).__name__
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {got}")
        try:
            np.broadcast_shapes(self._data.shape, mask._data.shape)
        except ValueError:  # PyTorch expands the mask against self: the mask is "tensor a" in its message
            raise RuntimeError(dispatch._broadcast_message([mask._data, self._data])) from None
        if not isinstance(value, registry.Tensor) and not is_number(value):
            bad = f"(Tensor, !{type_name(value)}!)"
            raise TypeError(f"masked_fill() received an invalid combination of arguments - got (Tensor, {type_name(value)}), "
                            f"but expected one of:\n * (Tensor mask, Tensor value)\n      didn't match because some of the "
                            f"arguments have invalid types: {bad}\n * (Tensor mask, Number value)\n      didn't match "
                            f"because some of the arguments have invalid types: {bad}\n")
        if isinstance(value, registry.Tensor):
            if value.ndim:
                raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                                   f"{value.ndim} dimension(s).")
            return apply(OPS["masked_fill_tensor"], (self, mask, value))  # the Tensor-value overload: MaskedFillBackward1
        return apply(OPS["masked_fill"], (self, mask), (value,))

    def masked_fill_(self, mask, value):
        return self._inplace("masked_fill_", lambda a, b: a.masked_fill(mask, value))

    def nonzero(self, *, as_tuple=False):
        found = apply(OPS["nonzero"], (self,))
        if not as_tuple:
            return found
        if self.ndim == 0:
            return (found.reshape(-1),)
        return tuple(found[:, i] for i in range(self.ndim))

    def argwhere(self):
        return self.nonzero()

    # ----- sorting -----
    def sort(self, dim=-1, descending=False, *, stable=None):
        d = _dim(dim, self.ndim) if self.ndim else 0
        values = apply(OPS["sort" if stable is None else "sort_stable"], (self,), (d, descending))
        return sort_result(values, apply(OPS["argsort"], (self,), (d, descending)))

    def argsort(self, dim=-1, descending=False, stable=False):
        return apply(OPS["argsort"], (self,), (_dim(dim, self.ndim) if self.ndim else 0, descending))

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
        k = operator.index(k)
        d = _dim(dim, self.ndim) if self.ndim else 0
        if not 0 <= k <= (self._data.shape[d] if self.ndim else 1):
            raise RuntimeError("selected index k out of range")
        return topk_result(apply(OPS["topk"], (self,), (k, d, largest)),
                           apply(OPS["topk_indices"], (self,), (k, d, largest)))

    # ----- shape -----
    def repeat(self, *sizes):
        reps = _shape_arg(sizes)
        if len(reps) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
        if any(r < 0 for r in reps):
            shape = [r * s for r, s in zip(reps, (1,) * (len(reps) - self.ndim) + self.shape)]
            raise RuntimeError(f"Trying to create tensor with negative dimension {next(n for n in shape if n < 0)}: {shape}")
        return apply(OPS["repeat"], (self,), (reps,))

    def split(self, split_size_or_sections, dim=0):
        if self.ndim == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        d = _dim(dim, self.ndim)
        size = self._data.shape[d]
        if isinstance(split_size_or_sections, (list, tuple)):
            sizes = [operator.index(s) for s in split_size_or_sections]
            if builtins.sum(sizes) != size or any(s < 0 for s in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                                   f"at dimension {d}), but got split_sizes={sizes}")
            starts = np.cumsum([0] + sizes).tolist()
            return tuple(apply(OPS["split_with_sizes"], (self,), (d, a, b)) for a, b in zip(starts, starts[1:]))
        step = operator.index(split_size_or_sections)
        if step <= 0 and not (step == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                               if step == 0 else f"split expects split_size be non-negative, but got split_size={step}")
        starts = list(range(0, size, step)) or [0]
        return tuple(apply(OPS["split"], (self,), (d, a, builtins.min(a + step, size))) for a in starts)

    def narrow(self, dim, start, length):
        """PyTorch's view of `length` entries from `start` along dim (SliceBackward0)."""
        if self.ndim == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        d = _dim(dim, self.ndim)
        start = operator.index(start.item() if isinstance(start, registry.Tensor) else start)
        length, size = operator.index(length), self._data.shape[d]
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
        start = start + size if start < 0 else start
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return apply(OPS["slice"], (self,), ((slice(None),) * d + (slice(start, start + length),),))

    def chunk(self, chunks, dim=0):
        chunks = operator.index(chunks)
        if chunks <= 0:
            raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
        if self.ndim == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        size = self._data.shape[_dim(dim, self.ndim)]
        return self.split(builtins.max(-(-size // chunks), 1), dim)

    def tril(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError("tril: input tensor must have at least 2 dimensions")
        return apply(OPS["tril"], (self,), (operator.index(diagonal),))

    def triu(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError("triu: input tensor must have at least 2 dimensions")
        return apply(OPS["triu"], (self,), (operator.index(diagonal),))

    def tril_(self, diagonal=0):
        return self._inplace("tril_", lambda a, b: a.tril(diagonal))

    def triu_(self, diagonal=0):
        return self._inplace("triu_", lambda a, b: a.triu(diagonal))

    def diag(self, diagonal=0):
        k = operator.index(diagonal)
        if self.ndim == 1:
            return apply(OPS["diag_embed"], (self,), (k,))
        if self.ndim == 2:
            return apply(OPS["diag"], (self,), (k,))
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")

    def diagonal(self, offset=0, dim1=0, dim2=1):
        d1, d2 = _dim(dim1, self.ndim), _dim(dim2, self.ndim)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        return apply(OPS["diagonal"], (self,), (operator.index(offset), d1, d2))

    def outer(self, vec2):
        if not isinstance(vec2, registry.Tensor):
            raise TypeError(f"outer(): argument 'vec2' (position 1) must be Tensor, not {type_name(vec2)}")
        if self.ndim != 1 or vec2.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument self, but got {self.ndim}-D" if self.ndim != 1 else
                               f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
        return self.reshape(self.shape[0], 1) * vec2  # PyTorch's: a view of self times vec2 (MulBackward0)

    ger = outer

    def flip(self, *dims):
        dims = _shape_arg(dims)
        d = _dims(dims, self.ndim) if self.ndim else tuple(dims)
        if len(set(d)) != len(d):
            raise RuntimeError(f"dim {d[0]} appears multiple times in the list of dims")
        return apply(OPS["flip"], (self,), (d if self.ndim else (),))

    def fliplr(self):
        return self.flip(1)

    def flipud(self):
        return self.flip(0)

    def roll(self, shifts, dims=None):
        shifts = tuple(operator.index(s) for s in (shifts if isinstance(shifts, (list, tuple)) else (shifts,)))
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            return apply(OPS["roll"], (self,), ((shifts[0] % builtins.max(self._data.size, 1),), None))
        dims = _dims(dims, self.ndim)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        # reduced modulo the size: numpy takes C longs, a program any int
        shifts = tuple(s % builtins.max((self._data.shape or (1,))[d], 1) for s, d in zip(shifts, dims))
        return apply(OPS["roll"], (self,), (shifts, dims))

    # ----- elementwise -----
    def erf(self):
        return apply(OPS["erf"], (self._floating(),))

    def log1p(self):
        return apply(OPS["log1p"], (self._floating(),))

    def expm1(self):
        return apply(OPS["expm1"], (self._floating(),))

    def atan2(self, other):
        # integer operands compute in float32; a float operand (of any tier) already makes the result its float
        other_is_float = isinstance(other, float) or isinstance(other, registry.Tensor) and other._data.dtype.kind == "f"
        return _binary("atan2", self if other_is_float else self._floating(), other)

    arctan2 = atan2

    def floor(self):
        return apply(OPS["floor"], (self,))

    def ceil(self):
        return apply(OPS["ceil"], (self,))

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
            if not (value is None and name != "nan") and not isinstance(value, (int, float)) or isinstance(value, bool):
                raise TypeError(f"nan_to_num(): argument '{name}' must be float, not {type(value).__name__}")
        return apply(OPS["nan_to_num"], (self,), (float(nan), posinf if posinf is None else float(posinf),
                                                  neginf if neginf is None else float(neginf)))

    def round(self, *, decimals=0):
        if decimals:
            return apply(OPS["round_decimals"], (self,), (operator.index(decimals),))
        return apply(OPS["round"], (self,))

    def _floating(self):
        """Integer and bool inputs of float functions (erf, log1p...) compute in the default float32, as in torch."""
        return self if self._data.dtype.kind == "f" else self.float()

    # ----- comparisons -----
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        if not isinstance(other, registry.Tensor):
            raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
        if self._data.dtype != other._data.dtype:
            raise RuntimeError(f"{dtypes.scalar_type_name(self._data.dtype)} did not match "
                               f"{dtypes.scalar_type_name(other._data.dtype)}")
        return apply(OPS["isclose"], (self, other), (rtol, atol, equal_nan))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.all(self.isclose(other, rtol, atol, equal_nan)._data))

    def equal(self, other):
        if not isinstance(other, registry.Tensor):
            raise TypeError(f"equal(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return self.shape == other.shape and bool(np.array_equal(self._data, other._data))
