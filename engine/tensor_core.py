"""Tensor: a numpy array with PyTorch's autograd semantics. Every op goes through `apply` (engine/dispatch.py).

This module holds the class's core (construction, autograd attributes, metadata, conversions, printing); the op
methods come from mixins: tensor_math (operators, elementwise), tensor_reduce, tensor_shape, tensor_index,
tensor_inplace.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import devices, dtypes, registry
from .backward import backward_into, root_gradient, run_backward
from .boundary import NUMERIC_KINDS, infer_error, not_numeric
from .dispatch import _REAL, _as_tensor_operand, _binary, _dim, _dims, _edge, _infer_shape, _shape_arg, accepts_numpy_names, apply  # noqa: F401
from .formatting import format_size, format_tensor
from .grad_mode import FREED_MESSAGE, STATE, carry_writes
from .nodes import NODE_CLASSES, RemovableHandle, leaf_hook_tables
from .ops import OPS

# The F401 names are re-exported: `from engine.tensor_core import apply, _dim, ...` keeps working.
from .tensor_funcs import FuncsMixin
from .tensor_index import IndexMixin
from .tensor_inplace import LEAF_INPLACE, InplaceMixin  # noqa: F401
from .tensor_math import MathMixin
from .tensor_reduce import ReduceMixin, max_result, min_result  # noqa: F401
from .tensor_shape import ShapeMixin

_OBJECT = np.dtype(object)


# ---------------------------------------------------------------- data to arrays (torch.tensor, Tensor(data))
def _check(shape):
    """Refuse a tensor above the run's limits before numpy allocates it."""
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc(shape)


def _np_dtype(dtype, default=dtypes.NP_F32):
    if dtype is None:
        return default
    if isinstance(dtype, dtypes.dtype):
        return dtype.np
    if dtype is float:
        return dtypes.NP_F32
    if dtype is int:
        return np.dtype(np.int64)
    if dtype is bool:
        return np.dtype(np.bool_)
    raise TypeError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")


def _nested_shape(data):
    """Shape of nested lists, walked without recursion, with numel checked before numpy copies them.
    Ranges are lists to numpy, and a tensor at the bottom adds its own dims (numpy copies its elements)."""
    shape = []
    level = data
    while isinstance(level, (list, tuple, range)):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    if isinstance(level, Tensor) and shape and shape[-1]:
        shape.extend(level._data.shape)
    return shape


def _to_array(data, dtype=None):
    if isinstance(data, Tensor):
        arr = np.array(data._data, dtype=_np_dtype(dtype, data._data.dtype))
        return arr
    if isinstance(data, (list, tuple, range)):
        _check(_nested_shape(data))
        flat = _unwrap(data)
        try:
            arr = np.array(flat)
        except ValueError:
            raise ValueError(f"expected sequence of length {len(data[0]) if data and isinstance(data[0], (list, tuple)) else 0} "
                             "at dim 1 (got a ragged list)") from None
        if arr.dtype == object:
            raise infer_error(data)  # objects: tensors hold numbers only
    else:
        arr = np.asarray(data)
    if dtype is not None:
        target = _np_dtype(dtype)
        if target.kind in "iu" and not isinstance(data, np.ndarray):
            _check_fits(arr, target)
        return arr.astype(target)
    # an array or a numpy scalar keeps its dtype (torch.tensor(np.float64(1.5)) is float64); Python numbers do not
    own_dtype = isinstance(data, (np.ndarray, np.generic))
    if arr.dtype.kind == "f":
        return arr.astype(dtypes.NP_F32) if arr.dtype != dtypes.NP_F32 and not own_dtype else arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64) if not own_dtype else arr
    if arr.dtype.kind == "b":
        return arr
    raise infer_error(data)


def _check_fits(arr, target):
    """PyTorch's check of Python numbers made into an integer tensor (c10::overflows): the value must lie in the
    type's range (NaN never does); an unsigned type also takes negatives down to -max, which wrap."""
    if arr.dtype.kind not in "iuf" or not arr.size:
        return
    info = np.iinfo(target)
    low = -int(info.max) if target.kind == "u" and arr.dtype.kind != "f" else int(info.min)
    with np.errstate(invalid="ignore"):
        bad = (arr.min() < low) | (arr.max() > int(info.max)) | (arr.dtype.kind == "f" and np.isnan(arr).any())
    if bad:
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


def legacy_array(args, np_dtype):
    """What torch.Tensor(...) and torch.FloatTensor(...) hold: no argument is an empty tensor; ints or a torch.Size are
    a shape; a sequence, an array or a tensor are data cast to the class's dtype."""
    if not args:
        return np.empty((0,), np_dtype)
    if len(args) == 1 and isinstance(args[0], Size) or all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                                                            for a in args):
        shape = tuple(int(n) for n in (args[0] if isinstance(args[0], Size) else args))
        for n in shape:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
        _check(shape)
        # PyTorch's memory is uninitialised, so any content conforms; zeros keep runs deterministic
        return np.zeros(shape, np_dtype)
    if len(args) > 1:
        raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of type "
                        f"{type(next(a for a in args if not isinstance(a, int))).__name__}")
    data = args[0]
    if isinstance(data, Tensor):
        return data._data if data._data.dtype == np_dtype else data._data.astype(np_dtype)
    if not isinstance(data, (list, tuple, range, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return _to_array(data).astype(np_dtype, copy=False)


def _unwrap(data):
    """Replace 0-d tensors inside nested lists by their numbers (torch.tensor([t1, t2]) works)."""
    if isinstance(data, (list, tuple)):
        if data and not isinstance(data[0], (list, tuple, Tensor)):
            return data
        return [_unwrap(x) for x in data]
    if isinstance(data, Tensor):
        return data.item() if data._data.size == 1 else data._data
    return data


builtins_type = type  # Tensor.type shadows the builtin inside the class body


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



def counted(t):
    """`t`, a new tensor made outside an op (a deep copy), counted against the run's live elements."""
    if STATE.limits is not None:
        STATE.limits.track(t)
    return t


class Tensor(MathMixin, ReduceMixin, ShapeMixin, IndexMixin, InplaceMixin, FuncsMixin):
    __slots__ = ("_data", "_grad", "_requires_grad", "_grad_fn", "_acc", "_retains_grad", "_rid", "_untracked",
                 "_view_base", "__weakref__")
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators
    _uninitialized = False  # a lazy module's parameter before its first forward (engine/nn/lazy.py) says True

    def __init__(self, *args, requires_grad=False, dtype=None):
        """torch.Tensor(data) / torch.Tensor(2, 3) / torch.Tensor(x.shape): PyTorch's legacy constructor (float32)."""
        self._set_fields(legacy_array(args, _np_dtype(dtype)))
        limits = STATE.limits
        if limits is not None:
            limits.track(self)
        if requires_grad:
            self.requires_grad_(True)

    def _set_fields(self, arr, requires_grad=False):
        if getattr(arr, "dtype", _OBJECT).kind not in NUMERIC_KINDS:  # tensors never hold objects or text
            raise not_numeric(arr)
        self._data = arr
        self._grad = self._grad_fn = self._acc = self._rid = None
        self._requires_grad = requires_grad
        self._retains_grad = self._untracked = False
        self._view_base = None  # the tensor a view op took this one from (its own base, never a view)

    @classmethod
    def _wrap(cls, arr, requires_grad=False):
        t = object.__new__(cls)
        t._set_fields(arr, requires_grad)
        return t

    def __deepcopy__(self, memo):
        """copy.deepcopy(t), as torch.Tensor's: a leaf's data and requires_grad (and a deep copy of its .grad) in a new
        tensor of its own (no recorder id, no view base); a non-leaf is refused with PyTorch's message."""
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        out = memo[id(self)] = counted(type(self)._wrap(self._copied_data(), self._requires_grad))
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out

    def _copied_data(self):
        """A copy of the data for a deep copy, refused before it is made past the run's limits (engine/limits.py)."""
        if STATE.limits is not None:
            STATE.limits.before_alloc(self._data.shape)
        return self._data.copy()

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
            self._retains_grad = True
            fn = self._grad_fn
            if fn._multi:  # one of a custom Function's outputs
                if fn._retains is None:
                    fn._retains = {}
                fn._retains[fn.output_nr(self)] = weakref.ref(self)
            else:
                fn._retain = weakref.ref(self)
            rec = STATE.recorder
            if rec is not None:
                rec.on_mark_retain(self)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        g = root_gradient(self, gradient, 0)
        retain = bool(create_graph if retain_graph is None else retain_graph)  # PyTorch's default
        rec = STATE.recorder
        if rec is not None:
            rec.on_backward_begin(self, g, retain)
        if create_graph:  # the backward pass is itself a graph: gradients are Tensors
            g = gradient if isinstance(gradient, Tensor) else Tensor._wrap(np.asarray(g))
        try:
            if inputs is None:
                run_backward(self, g, retain, create_graph=bool(create_graph))
            else:
                backward_into(self, g, retain, inputs, create_graph=bool(create_graph))
        except RuntimeError as e:
            if rec is not None:
                rec.on_backward_error(self, e)
            raise
        finally:
            if STATE.limits is not None:
                STATE.limits.end_pass()  # max_graph_nodes counts per pass: one ends with its backward()
        if rec is not None:
            rec.on_backward_end(retain)

    # ----- hooks -----
    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a tensor it returns replaces the gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if not callable(hook):
            raise TypeError(f"'{type(hook).__name__}' object is not callable")
        fn = self._grad_fn
        if fn is None:
            table = leaf_hook_tables(self)[0]
            handle = RemovableHandle(table)
            table[handle.id] = hook
        else:
            if fn._hooks is None:
                fn._hooks = {}
            handle = RemovableHandle(fn._hooks)
            fn._hooks[handle.id] = (fn.output_nr(self) if fn._multi else 0, hook, weakref.ref(self))
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Call `hook(tensor)` after a leaf's .grad was accumulated."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if not callable(hook):
            raise TypeError(f"'{type(hook).__name__}' object is not callable")
        table = leaf_hook_tables(self)[1]
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

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
        if arr.dtype.kind not in NUMERIC_KINDS:
            raise not_numeric(arr)
        limits = STATE.limits
        if limits is not None:
            limits.before_alloc(arr.shape)
        old_size = int(np.size(self._data))
        carry_writes(self._data, arr)
        self._data = arr
        if limits is not None:
            limits.track_replaced(self, old_size)  # not track(): `p.data += ...` in a loop would count p every step

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
        return devices.CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    def get_device(self) -> int:
        return -1  # torch's answer for a CPU tensor

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
    def to(self, *args, **kwargs):
        """to(device, dtype), to(dtype), to(other): the CPU is the only device, so only the dtype can change."""
        dtype, copy = devices.parse_to(args, kwargs, dtypes.dtype, Tensor)
        out = self if dtype is None else self._cast(dtype)
        return out.clone() if copy and out is self else out

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

    def short(self):
        return self._cast(dtypes.int16)

    def char(self):
        return self._cast(dtypes.int8)

    def bool(self):
        return self._cast(dtypes.bool_)

    def type(self, dtype=None, non_blocking=False, **kwargs):  # noqa: A003 — torch's name
        """x.type() is 'torch.FloatTensor'; x.type(torch.LongTensor), x.type('torch.LongTensor') or x.type(torch.int64)
        cast."""
        if dtype is None:
            return "torch." + dtypes.legacy_tensor_type(self._data.dtype)
        if isinstance(dtype, str):
            if dtype.startswith("torch.cuda."):  # a CPU-only PyTorch's answer: there is no CUDA library to load
                raise RuntimeError("Cannot initialize CUDA without ATen_cuda library. (flowgrad runs on the CPU only, as "
                                   "a CPU-only PyTorch build does: use the CPU type, e.g. 'torch.FloatTensor'.)")
            target = dtypes.LEGACY_BY_NAME.get(dtype.removeprefix("torch."))
            if target is None:
                raise ValueError(f"invalid type: '{dtype}'")
        elif isinstance(dtype, dtypes.dtype):
            target = dtype
        elif isinstance(getattr(dtype, "dtype", None), dtypes.dtype) and isinstance(dtype, builtins_type):
            target = dtype.dtype  # a legacy class: torch.FloatTensor
        else:
            raise TypeError(f"type(): argument 'dtype' must be torch.dtype or str, not {builtins_type(dtype).__name__}")
        return self._cast(target)

    def type_as(self, other):
        return self._cast(other.dtype)

    def cpu(self, memory_format=None):
        return self

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        # a CPU-only torch checks the index first: .cuda(0) has no accelerator, .cuda() no CUDA
        devices.resolve("cuda" if device is None else device)
        raise AssertionError(devices.CUDA_MISSING)


# numpy's names for dim/keepdim on every method PyTorch's argument parser accepts them on (x.sum(axis=0, keepdims=True))
for _name in ("sum mean max min argmax argmin std var prod logsumexp cumsum cumprod all any norm softmax log_softmax "
              "squeeze unsqueeze sort argsort topk flip roll gather index_select chunk split amax amin").split():
    if hasattr(Tensor, _name):
        setattr(Tensor, _name, accepts_numpy_names(getattr(Tensor, _name)))
del _name

registry.Tensor = Tensor  # apply, the backward loop and Graphed make Tensors: the class is defined above them


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
