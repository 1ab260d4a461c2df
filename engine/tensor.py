"""Tensor: a numpy array with PyTorch's autograd semantics. Every op goes through `apply`."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import dtypes
from .autograd import FREED_MESSAGE, NODE_CLASSES, STATE, accumulator, carry_writes, note_write, run_backward
from .formatting import format_size, format_tensor
from .ops import OPS

_F32 = dtypes.NP_F32
_F64 = dtypes.NP_F64
_REAL = (int, float, bool, np.number, np.bool_)
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."

max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


class Size(tuple):
    """torch.Size: a tuple of ints that prints as PyTorch does."""

    def __repr__(self):
        return format_size(self)

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


def _edge(x):
    if isinstance(x, Tensor) and x._requires_grad:
        return (x._grad_fn if x._grad_fn is not None else accumulator(x), 0)
    return (None, 0)


def apply(op, inputs, params=()):
    """Run one op-table primitive: forward in numpy, then (if needed) its graph node and record."""
    arrays = []
    needs_grad = False
    wants_f64 = False
    for x in inputs:
        if isinstance(x, Tensor):
            a = x._data
            arrays.append(a)
            if x._requires_grad:
                needs_grad = True
            if a.dtype is _F64:
                wants_f64 = True
        else:
            arrays.append(x)
    limits = STATE.limits
    if limits is not None:
        limits.before_op(op, arrays, params)
    try:
        out = op.forward(arrays, *params) if op.variadic else op.forward(*arrays, *params)
    except ValueError as e:
        if "broadcast" in str(e):
            raise RuntimeError(_broadcast_message(arrays)) from None
        raise
    if out.dtype is _F64 and not wants_f64:
        # PyTorch's promotion: ints and Python floats meet in the default float32, not numpy's float64.
        out = out.astype(_F32)
    result = object.__new__(Tensor)
    result._data = out
    result._grad = result._grad_fn = result._acc = result._rid = None
    result._retains_grad = result._untracked = False
    if needs_grad and STATE.grad_enabled and op.grad_fn is not None:
        edges = []
        shapes = []
        for x, a in zip(inputs, arrays):
            if isinstance(x, Tensor) and x._requires_grad:
                fn = x._grad_fn
                edges.append((fn if fn is not None else accumulator(x), 0))
            else:
                edges.append(_NO_EDGE)
            shapes.append(a.shape if hasattr(a, "shape") else ())
        result._grad_fn = NODE_CLASSES[op.grad_fn](op, edges, (out, *arrays), params, shapes)
        result._requires_grad = True
        if limits is not None:
            limits.count_node()
    else:
        result._requires_grad = False
    if limits is not None:
        limits.track(result)
    rec = STATE.recorder
    if rec is not None:
        rec.on_op(op, inputs, params, result)
    return result


_NO_EDGE = (None, 0)


def _broadcast_message(arrays):
    """PyTorch's wording for shapes that don't broadcast, naming the first clashing dimension."""
    shapes = [np.shape(a) for a in arrays if np.ndim(a) > 0]
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and da != 1 and db != 1:
            return (f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton "
                    f"dimension {max(len(a), len(b)) - i}")
    return f"shapes {[list(s) for s in shapes]} cannot be broadcast together"


def _as_tensor_operand(x):
    if isinstance(x, Tensor) or isinstance(x, _REAL):
        return x
    if isinstance(x, (list, tuple)):
        from .creation import tensor

        return tensor(x)
    return NotImplemented


def _binary(name, a, b):
    b = _as_tensor_operand(b)
    if b is NotImplemented:
        return NotImplemented
    return apply(OPS[name], (a, b))


def _dim(d, ndim):
    if d is None:
        return None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def _dims(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(_dim(d, ndim) for d in dim)
    return (_dim(dim, ndim),)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel):
    """Resolve one -1 in a view shape; PyTorch's message when it can't fit."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Tensor:
    __slots__ = ("_data", "_grad", "_requires_grad", "_grad_fn", "_acc", "_retains_grad", "_rid", "_untracked",
                 "__weakref__")
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators

    def __init__(self, data=None, *, requires_grad=False, dtype=None):
        from .creation import _to_array

        self._set_fields(_to_array([] if data is None else data, dtype))
        if requires_grad:
            self.requires_grad_(True)

    def _set_fields(self, arr, requires_grad=False):
        self._data = arr
        self._grad = self._grad_fn = self._acc = self._rid = None
        self._requires_grad = requires_grad
        self._retains_grad = self._untracked = False

    @classmethod
    def _wrap(cls, arr, requires_grad=False):
        t = object.__new__(cls)
        t._set_fields(arr, requires_grad)
        return t

    # ----- autograd attributes -----
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                                   "computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        rec = STATE.recorder
        if rec is not None:
            rec.on_requires_grad(self)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
        if value is not None and value.shape != self.shape:
            raise RuntimeError("assigned grad has data of a different size")
        self._grad = value
        rec = STATE.recorder
        if rec is not None and value is None:
            rec.on_zero_grad([self], set_to_none=True)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and not self._retains_grad:
            import weakref

            self._retains_grad = True
            self._grad_fn._retain = weakref.ref(self)
            rec = STATE.recorder
            if rec is not None:
                rec.on_mark_retain(self)

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        if create_graph:
            raise NotImplementedError("create_graph=True (higher-order gradients) is not supported by flowgrad")
        if not self._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is None:
            if self._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = self._data.dtype.type(1) if self._data.ndim == 0 else np.ones(self._data.shape, dtype=self._data.dtype)
        else:
            g = gradient._data if isinstance(gradient, Tensor) else np.asarray(gradient, dtype=self._data.dtype)
            if g.shape != self._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {Size(g.shape)} and "
                                   f"output[0] has a shape of {self.shape}.")
        retain = bool(retain_graph)
        rec = STATE.recorder
        if rec is not None:
            rec.on_backward_begin(self, g, retain)
        try:
            run_backward(self, g, retain)
        except RuntimeError as e:
            if rec is not None:
                rec.on_backward_error(self, e)
            raise
        if rec is not None:
            rec.on_backward_end(retain)

    def detach(self):
        self._data = np.asarray(self._data)  # share storage, as torch's detach does
        out = Tensor._wrap(self._data)
        rec = STATE.recorder
        if rec is not None:
            rec.on_detach(self, out)
        return out

    def detach_(self):
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        self._data = np.asarray(self._data)
        out = Tensor._wrap(self._data)
        out._untracked = True  # as in torch, writes through .data bypass version checks
        rec = STATE.recorder
        if rec is not None:
            rec.alias(out, self)
        return out

    @data.setter
    def data(self, value):
        arr = np.asarray(value._data if isinstance(value, Tensor) else value)
        limits = STATE.limits
        if limits is not None:
            limits.before_alloc(arr.shape)
        carry_writes(self._data, arr)
        self._data = arr
        if limits is not None:
            limits.track(self)

    # ----- metadata -----
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return "cpu"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.item() if hasattr(self._data, "item") else self._data

    def tolist(self):
        return np.asarray(self._data).tolist()

    def numpy(self):
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        self._data = np.asarray(self._data)
        return self._data

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __repr__(self):
        fn = self._grad_fn
        return format_tensor(np.asarray(self._data), requires_grad=self._requires_grad and fn is None,
                             grad_fn=None if fn is None else type(fn).__name__)

    __str__ = __repr__
    __hash__ = object.__hash__

    # ----- conversions -----
    def to(self, dtype=None, *args, **kwargs):
        if isinstance(dtype, dtypes.dtype):
            return self._cast(dtype)
        return self  # device moves are no-ops on a CPU-only engine

    def _cast(self, dtype):
        if self._data.dtype == dtype.np:
            return self
        return _cast_op(self, dtype)

    def float(self):
        return self._cast(dtypes.float32)

    def double(self):
        return self._cast(dtypes.float64)

    def long(self):
        return self._cast(dtypes.int64)

    def int(self):
        return self._cast(dtypes.int32)

    def bool(self):
        return self._cast(dtypes.bool_)

    def type_as(self, other):
        return self._cast(other.dtype)

    def cpu(self):
        return self

    def contiguous(self):
        return self

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
        return apply(OPS["rsub"], (self,), (other,))

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return _binary("mul", self, other) if isinstance(other, _REAL) else NotImplemented

    def __truediv__(self, other):
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

    def __matmul__(self, other):
        from .functional import matmul

        return matmul(self, other)

    def __rmatmul__(self, other):
        from .functional import matmul

        return matmul(other, self)

    def __neg__(self):
        return apply(OPS["neg"], (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def _compare(self, name, other):
        other = _as_tensor_operand(other)
        if other is NotImplemented:
            return NotImplemented
        return apply(OPS[name], (self, other))

    def __eq__(self, other):
        return self._compare("eq", other)

    def __ne__(self, other):
        return self._compare("ne", other)

    def __lt__(self, other):
        return self._compare("lt", other)

    def __le__(self, other):
        return self._compare("le", other)

    def __gt__(self, other):
        return self._compare("gt", other)

    def __ge__(self, other):
        return self._compare("ge", other)

    def __and__(self, other):
        return self._compare("logical_and", other)

    def __or__(self, other):
        return self._compare("logical_or", other)

    def __invert__(self):
        return apply(OPS["invert"], (self,))

    def add(self, other, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, exponent):
        return self ** exponent

    def square(self):
        return self ** 2

    def neg(self):
        return -self

    def matmul(self, other):
        return self @ other

    def mm(self, other):
        return apply(OPS["mm"], (self, other))

    def dot(self, other):
        return apply(OPS["dot"], (self, other))

    # ----- elementwise -----
    def exp(self):
        return apply(OPS["exp"], (self,))

    def log(self):
        return apply(OPS["log"], (self,))

    def sin(self):
        return apply(OPS["sin"], (self,))

    def cos(self):
        return apply(OPS["cos"], (self,))

    def tanh(self):
        return apply(OPS["tanh"], (self,))

    def sigmoid(self):
        return apply(OPS["sigmoid"], (self,))

    def relu(self):
        return apply(OPS["relu"], (self,))

    def abs(self):
        return apply(OPS["abs"], (self,))

    def sqrt(self):
        return apply(OPS["sqrt"], (self,))

    def reciprocal(self):
        return apply(OPS["reciprocal"], (self,))

    def sign(self):
        return apply(OPS["sign"], (self,))

    def clamp(self, min=None, max=None):  # noqa: A002 — torch's keyword names
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        return apply(OPS["clamp"], (self,), (min, max))

    clip = clamp

    def clamp_min(self, min):  # noqa: A002
        return self.clamp(min=min)

    def clamp_max(self, max):  # noqa: A002
        return self.clamp(max=max)

    def softmax(self, dim):
        return apply(OPS["softmax"], (self,), (_dim(dim, self.ndim),))

    def log_softmax(self, dim):
        return apply(OPS["log_softmax"], (self,), (_dim(dim, self.ndim),))

    # ----- reductions -----
    def sum(self, dim=None, keepdim=False):
        if dim is None:
            return apply(OPS["sum"], (self,))
        return apply(OPS["sum_dim"], (self,), (_dims(dim, self.ndim), keepdim))

    def mean(self, dim=None, keepdim=False):
        if self._data.dtype.kind != "f":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {str(self.dtype)[6:].capitalize()}")
        if dim is None:
            return apply(OPS["mean"], (self,))
        return apply(OPS["mean_dim"], (self,), (_dims(dim, self.ndim), keepdim))

    def _extreme(self, name, dim, keepdim, result):
        if dim is None:
            if self._data.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return apply(OPS[name], (self,))
        if isinstance(dim, Tensor):
            from .functional import maximum_or_minimum

            return maximum_or_minimum(name, self, dim)
        d = _dim(dim, self.ndim)
        values = apply(OPS[name + "_dim"], (self,), (d, keepdim))
        indices = apply(OPS["arg" + name], (self,), (d, keepdim))
        return result(values, indices)

    def max(self, dim=None, keepdim=False):
        return self._extreme("max", dim, keepdim, max_result)

    def min(self, dim=None, keepdim=False):
        return self._extreme("min", dim, keepdim, min_result)

    def argmax(self, dim=None, keepdim=False):
        return apply(OPS["argmax"], (self,), (_dim(dim, self.ndim), keepdim))

    def argmin(self, dim=None, keepdim=False):
        return apply(OPS["argmin"], (self,), (_dim(dim, self.ndim), keepdim))

    def norm(self, p=2):
        if p != 2:
            raise NotImplementedError("flowgrad's norm supports p=2 only")
        return apply(OPS["norm"], (self,))

    # ----- shape -----
    def view(self, *shape):
        shape = _infer_shape(_shape_arg(shape), self._data.size)
        if not _viewable(self._data, shape):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return apply(OPS["view"], (self,), (shape,))

    def reshape(self, *shape):
        shape = _infer_shape(_shape_arg(shape), self._data.size)
        if _viewable(self._data, shape):
            return apply(OPS["view"], (self,), (shape,))
        # PyTorch copies a non-contiguous tensor first: CloneBackward0 under UnsafeViewBackward0.
        return apply(OPS["unsafe_view"], (apply(OPS["clone"], (self,)),), (shape,))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dim(start_dim, self.ndim), _dim(end_dim, self.ndim)
        if s == e:
            return self
        shape = self.shape[:s] + (-1,) + self.shape[e + 1:]
        return self.reshape(shape)

    def transpose(self, dim0, dim1):
        return apply(OPS["transpose"], (self,), (_dim(dim0, self.ndim), _dim(dim1, self.ndim)))

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return apply(OPS["t"], (self,))

    @property
    def T(self):  # noqa: N802
        if self.ndim < 2:
            return self
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):  # noqa: N802
        return self.transpose(-2, -1)

    def permute(self, *dims):
        dims = tuple(_dim(d, self.ndim) for d in _shape_arg(dims))
        if sorted(dims) != list(range(self.ndim)):
            raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               "length of the desired ordering of dimensions i.e. input.dim() = "
                               f"{self.ndim} is not equal to len(dims) = {len(dims)}")
        return apply(OPS["permute"], (self,), (dims,))

    def squeeze(self, dim=None):
        if dim is None:
            return apply(OPS["squeeze"], (self,))
        if isinstance(dim, (tuple, list)):
            dims = tuple(d for d in _dims(dim, self.ndim) if self._data.shape[d] == 1)
            return apply(OPS["squeeze_dims"], (self,), (dims,))
        return apply(OPS["squeeze_dim"], (self,), (_dim(dim, self.ndim),))

    def unsqueeze(self, dim):
        return apply(OPS["unsqueeze"], (self,), (_dim(dim, self.ndim + 1),))

    def expand(self, *shape):
        shape = _shape_arg(shape)
        lead = len(shape) - self.ndim
        shape = tuple(self._data.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        try:
            np.broadcast_shapes(self._data.shape, shape)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor must match the existing size at non-singleton "
                               f"dimension. Target sizes: {list(shape)}.  Tensor sizes: {list(self.shape)}") from None
        return apply(OPS["expand"], (self,), (shape,))

    def expand_as(self, other):
        return self.expand(other.shape)

    def clone(self):
        return apply(OPS["clone"], (self,))

    # ----- indexing -----
    def __getitem__(self, key):
        from .functional import index

        return index(self, key)

    def __setitem__(self, key, value):
        if self._requires_grad and STATE.grad_enabled:
            if self._grad_fn is None:
                raise RuntimeError(LEAF_INPLACE)
            raise RuntimeError("flowgrad does not record index assignment into a tensor that requires grad; "
                               "build the tensor with torch.cat/torch.stack/torch.where instead")
        from .functional import _index_key

        self._data = np.asarray(self._data)
        _note_write(self)
        self._data[_index_key(key)] = value._data if isinstance(value, Tensor) else value
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, "__setitem__")

    # ----- in-place -----
    def _inplace(self, name, fn, other=None):
        """In-place update: real in-place numpy when no graph is built (aliases see it, like torch)."""
        self._refuse_leaf_inplace()
        other_grad = isinstance(other, Tensor) and other._requires_grad
        if STATE.grad_enabled and (self._requires_grad or other_grad):
            # Rebase history: the tensor becomes the output of the out-of-place op, as autograd sees it.
            result = fn(self, other)
            _note_write(self)  # what backward saved of the old value is stale now
            self._data, self._grad_fn, self._requires_grad = result._data, result._grad_fn, True
        else:
            value = fn(Tensor._wrap(self._data), other)._data
            if isinstance(self._data, np.ndarray) and self._data.shape == np.shape(value):
                _note_write(self)
                np.copyto(self._data, value, casting="unsafe")
            else:
                self._data = np.asarray(value, dtype=self._data.dtype)
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, name)
        return self

    def _refuse_leaf_inplace(self):
        if self._requires_grad and self._grad_fn is None and STATE.grad_enabled:
            raise RuntimeError(LEAF_INPLACE)

    def add_(self, other, alpha=1):
        return self._inplace("add_", lambda a, b: a + (b * alpha if alpha != 1 else b), other)

    def sub_(self, other, alpha=1):
        return self._inplace("sub_", lambda a, b: a - (b * alpha if alpha != 1 else b), other)

    def mul_(self, other):
        return self._inplace("mul_", lambda a, b: a * b, other)

    def div_(self, other):
        return self._inplace("div_", lambda a, b: a / b, other)

    def clamp_(self, min=None, max=None):  # noqa: A002
        return self._inplace("clamp_", lambda a, b: a.clamp(min, max))

    def zero_(self):
        return self._set_data_(0, "zero_")

    def fill_(self, value):
        return self._set_data_(value._data if isinstance(value, Tensor) else value, "fill_")

    def copy_(self, src):
        return self._set_data_(np.broadcast_to(src._data if isinstance(src, Tensor) else src, self._data.shape), "copy_")

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from .random import fill_normal

        return self._set_data_(fill_normal(self._data, mean, std, generator), "normal_")

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        from .random import fill_uniform

        return self._set_data_(fill_uniform(self._data, a, b, generator), "uniform_")

    def bernoulli_(self, p=0.5, *, generator=None):
        from .random import fill_bernoulli

        return self._set_data_(fill_bernoulli(self._data, p._data if isinstance(p, Tensor) else p, generator),
                               "bernoulli_")

    def random_(self, *args, generator=None, **kwargs):
        from .random import fill_random

        return self._set_data_(fill_random(self._data, args, kwargs, generator), "random_")

    def _set_data_(self, values, name):
        """Overwrite every element in place (zero_, fill_, copy_, init)."""
        self._refuse_leaf_inplace()
        self._data = np.asarray(self._data)
        _note_write(self)
        self._data[...] = values
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, name)
        return self

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_


def _note_write(t):
    if not t._untracked:
        note_write(t._data)


def _viewable(arr, shape) -> bool:
    """Whether numpy can reshape without copying: torch's view succeeds exactly then (up to strides)."""
    if isinstance(arr, np.ndarray) and not arr.flags.c_contiguous and arr.size > 1:
        try:
            np.reshape(arr, shape, copy=False)
        except ValueError:
            return False
    return True


def _cast_op(t, dtype):
    out = Tensor._wrap(np.asarray(t._data).astype(dtype.np))
    if t._requires_grad and STATE.grad_enabled and dtype.is_floating_point:
        # NOTE: a dtype change is differentiable (ToCopyBackward0): the gradient is cast back.
        op = OPS["to_copy"]
        out._grad_fn = NODE_CLASSES[op.grad_fn](op, (_edge(t),), (out._data, t._data), (dtype.np,), (t._data.shape,))
        out._requires_grad = True
    rec = STATE.recorder
    if rec is not None:
        rec.on_op(OPS["to_copy"], (t,), (dtype.np,), out)
    return out


__all__ = ["Tensor", "Size", "apply", "FREED_MESSAGE"]
