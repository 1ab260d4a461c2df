"""The hot path: `apply` runs one op-table primitive on Tensors, plus the argument helpers every Tensor method shares."""
from __future__ import annotations

import numpy as np

from . import dtypes, registry
from .boundary import NUMERIC_KINDS, not_numeric
from .grad_mode import STATE, note_replaced
from .nodes import NODE_CLASSES, accumulator, edge_of
from .ops import OPS
from .ops_math import OPERAND_CHECKS
from .promotion import promote_operands
from .views import remember_view

_F32 = dtypes.NP_F32
_F64 = dtypes.NP_F64
_REAL = (int, float, bool, np.number, np.bool_)
_BINARY = (0, 1)
# The ops whose operands (at these positions) are cast to PyTorch's result type before numpy runs (engine/promotion.py)
PROMOTED_INPUTS = {name: _BINARY for name in (
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "remainder", "fmod", "floor_divide", "div_floor",
    "div_trunc", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "hypot", "xlogy", "fmax", "fmin", "copysign", "logaddexp")}
PROMOTED_INPUTS["where"] = (1, 2)  # the condition stays bool

def _edge(x):
    if isinstance(x, registry.Tensor) and x._requires_grad:
        return edge_of(x)
    return (None, 0)


def _failed(op, inputs, params, error):
    rec = STATE.recorder
    if rec is not None:
        rec.on_op_error(op, inputs, params, error)


def refused(op, inputs, error, params=()):
    """`error`, recorded as `op` failing on `inputs` (a shape check before numpy): ``raise refused(...)``."""
    _failed(op, inputs, params, error)
    return error


def apply(op, inputs, params=()):
    """Run one op-table primitive: forward in numpy, then (if needed) its graph node and record."""
    Tensor = registry.Tensor  # defined above this layer (engine/tensor_core.py), which registers it
    arrays = []
    append = arrays.append
    needs_grad = False
    wants_f64 = False
    for x in inputs:
        if isinstance(x, Tensor):
            a = x._data
            append(a)
            if a.dtype is _F64:
                wants_f64 = True
            if x._requires_grad:
                needs_grad = True
        else:
            append(x)
    promoted = PROMOTED_INPUTS.get(op.name)
    if promoted is not None:
        if not _plain_operands(op.name, inputs, arrays, promoted, Tensor):
            arrays = _promoted(op, inputs, params, arrays, promoted, needs_grad, Tensor)
    limits = STATE.limits
    if limits is not None:
        limits.before_op(op, arrays, params)
    # the edges are taken before the forward runs, as a graph's nodes are numbered (a leaf's AccumulateGrad first)
    edges = _edges(inputs, Tensor) if needs_grad and STATE.grad_enabled and op.grad_fn is not None else None
    try:
        try:
            out = op.forward(arrays, *params) if op.variadic else op.forward(*arrays, *params)
        except OverflowError:
            wrapped = None if op.variadic else _wrapped_python_ints(arrays)
            if wrapped is None:
                raise
            out = op.forward(*wrapped, *params)
    except ValueError as e:
        if "broadcast" in str(e):
            error = RuntimeError(_broadcast_message(arrays))
            _failed(op, inputs, params, error)
            raise error from None
        _failed(op, inputs, params, e)
        raise
    except Exception as e:  # noqa: BLE001 - recorded (the page draws the op that failed), then raised as it was
        _failed(op, inputs, params, e)
        raise
    dtype = out.dtype
    if dtype.kind not in NUMERIC_KINDS:  # a list of objects as an operand: tensors hold numbers only
        raise not_numeric(out)
    if dtype is _F64 and not wants_f64:
        # PyTorch's promotion: ints and Python floats meet in the default float32, not numpy's float64.
        out = out.astype(_F32)
    result = object.__new__(Tensor)
    result._data = out
    # a view remembers its base, which an in-place op on the view writes through (PyTorch's CopySlices)
    result._grad = result._grad_fn = result._acc = result._rid = result._view_base = None
    result._retains_grad = result._untracked = False
    if op.view and isinstance(inputs[0], Tensor):
        result._view_base = inputs[0] if inputs[0]._view_base is None else inputs[0]._view_base
        if STATE.grad_enabled:  # grad mode: a later in-place op on the base re-derives this view (engine/views.py)
            remember_view(result)
    if edges is not None:  # an input requires grad, grad mode is on and the op has a backward
        shapes = [getattr(a, "shape", ()) for a in arrays]
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


def _promoted(op, inputs, params, arrays, positions, needs_grad, Tensor):  # noqa: N803 - the class, passed in
    """`arrays` with the operands at `positions` cast to PyTorch's result dtype, after the op's checks of the operands
    as given (a failure is recorded as the op's, as the forward's own errors are)."""
    check = OPERAND_CHECKS.get(op.name)
    if check is not None:
        try:
            check(*arrays)
        except Exception as e:
            _failed(op, inputs, params, e)
            raise
    cast = promote_operands(arrays, [isinstance(x, Tensor) for x in inputs], positions)
    if cast is not arrays and needs_grad:
        # a node saves the cast copy: an in-place write to the tensor must still make it stale (version check)
        for x, a, c in zip(inputs, arrays, cast):
            if c is not a:
                note_replaced(c, x)
    return cast


_NDARRAY = np.ndarray
_GENERIC = np.generic
# Python numbers that never change the dtype of a tensor of this kind (the usual `x * 2.0`, `i + 1`)
_ABSORBED = {"f": (float, int, bool), "i": (int, bool), "u": (int, bool), "b": (bool,)}


def _plain_operands(name, inputs, arrays, positions, Tensor):  # noqa: N803 - the class, passed in
    """The hot path's shortcut past promotion and operand checks: a tensor (its data an array or, as a 0-d op's
    result, a numpy scalar) meeting an array or numpy scalar of its own dtype (which every promotion tier leaves as
    it is) or a number its dtype absorbs, where no operand check can fail (each refuses bool operands). Every other
    case goes through `_promoted`."""
    i = positions[0]
    a, b = arrays[i], arrays[positions[1]]
    if type(a) is not _NDARRAY and not (isinstance(a, _GENERIC) and isinstance(inputs[i], Tensor)):
        return False
    kind = a.dtype.kind
    if type(b) is _NDARRAY or isinstance(b, _GENERIC):
        if b.dtype is not a.dtype:
            return False
    elif type(b) not in _ABSORBED.get(kind, ()):
        return False
    return name not in OPERAND_CHECKS or (kind != "b" and type(b) is not bool)


def _wrapped_python_ints(arrays):
    """A Python int past a small integer tensor's range (int8 + 1000) is cast to the tensor's dtype and wraps, as in
    PyTorch; numpy refuses it (OverflowError). None where nothing is to be wrapped."""
    target = next((a.dtype for a in arrays if type(a) is np.ndarray and a.dtype.kind in "iu"), None)
    if target is None:
        return None
    info = np.iinfo(np.int64)
    if not any(type(a) is int and info.min <= a <= info.max for a in arrays):
        return None
    return [np.array(a, np.int64).astype(target)[()] if type(a) is int and info.min <= a <= info.max else a
            for a in arrays]


_NO_EDGE = (None, 0)


def _edges(inputs, Tensor):  # noqa: N803 - the class, passed in (registered above this layer)
    """The node's edge per input: (node, output number), or (None, 0) where the input needs no gradient."""
    edges = []
    for x in inputs:
        if isinstance(x, Tensor) and x._requires_grad:
            fn = x._grad_fn
            # a custom Function's outputs share one node: the edge says which output (autograd.edge_of)
            edges.append((fn, fn.output_nr(x) if fn._multi else 0) if fn is not None else (accumulator(x), 0))
        else:
            edges.append(_NO_EDGE)
    return edges


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
    if isinstance(x, registry.Tensor) or isinstance(x, _REAL):
        return x
    if isinstance(x, (list, tuple, np.ndarray)):  # an ndarray operand is a tensor of its dtype, as in torch
        return registry.new_tensor(x)
    return NotImplemented


def _binary(name, a, b):
    if type(b) is int:
        b = wrapped_scalar(a, b)
    else:
        b = _as_tensor_operand(b)
        if b is NotImplemented:
            return NotImplemented
    return apply(OPS[name], (a, b))


_UINT64_TOP, _INT64_BOTTOM = 2 ** 64 - 1, -2 ** 63


def wrapped_scalar(tensor, value):
    """A Python int past an integer tensor's range, cast to its dtype as PyTorch casts it: `int8 < 1000` compares
    with -24 and `300 - int8` wraps. NOTE: numpy would compare the true values (all True) or raise OverflowError.
    Any other operand (a float, a tensor: the reflected ops and comparisons pass them too) is returned as it is."""
    dtype = tensor._data.dtype
    if type(value) is not int:
        return value
    if dtype.kind not in "iu":  # a float or bool tensor: the int is read as 64 bits, and only refused past them
        if not _INT64_BOTTOM <= value <= _UINT64_TOP:
            raise OverflowError("int too big to convert" if value > 0 else "can't convert negative int to unsigned")
        if value >= 1 << 63 and dtype.kind == "b":  # torch reads it as uint64, which meets no bool tensor
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                               "Bool and UInt64")
        return value
    bits = dtype.itemsize * 8
    low = -(1 << (bits - 1)) if dtype.kind == "i" else 0
    if low <= value < low + (1 << bits):
        return value
    if value > _UINT64_TOP:  # PyTorch reads the int as 64 bits first
        raise OverflowError("int too big to convert")
    if value < _INT64_BOTTOM:
        raise OverflowError("can't convert negative int to unsigned")
    return (value - low) % (1 << bits) + low


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
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):  # torch.Size is a tuple
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


registry.apply = apply  # Graphed runs the rules' numpy calls as table ops


def accepts_numpy_names(method):
    """`method` also taking numpy's `axis=` for `dim=` and `keepdims=` for `keepdim=`, as PyTorch's argument parser does."""
    def call(*args, **kwargs):
        if "axis" in kwargs:
            if "dim" in kwargs:
                raise TypeError(f"{method.__name__}() got multiple values for argument 'dim'")
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return method(*args, **kwargs)
    call.__name__, call.__qualname__, call.__doc__ = method.__name__, method.__qualname__, method.__doc__
    call.__wrapped__ = method
    return call
