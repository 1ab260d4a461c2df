"""Tensor's in-place ops (add_, mul_, zero_, fill_, copy_, normal_...): history rebasing and version checks."""
from __future__ import annotations

import operator

import numpy as np

from . import dtypes, registry
from .dispatch import apply
from .grad_mode import STATE, _versions, carry_writes, note_replaced, note_write
from .ops import OPS
from .random import fill_bernoulli, fill_normal, fill_random, fill_uniform
from .view_replay import has_views, replay_views
from .views import view_positions

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
# In-place overwrites of a tensor with history, and the op each records (PyTorch's ZeroBackward0, FillBackward2, ...)
OVERWRITE_OPS = {"zero_": "overwrite_zero", "fill_": "overwrite_fill", "normal_": "overwrite_normal",
                 "uniform_": "overwrite_uniform"}
_HAS_SHAPE = (np.ndarray, np.generic)
_ADD, _SUB = operator.add, operator.sub  # `+=` and `-=` (alpha 1): the out-of-place operator, without a closure
VIEW_OF_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


class InplaceMixin:
    """Methods ending in _ and the augmented assignments (+=, -=, *=, /=)."""

    __slots__ = ()

    # ----- in-place -----
    def _inplace(self, name, fn, other=None):
        """In-place update: real in-place numpy when no graph is built (aliases see it, like torch)."""
        self._refuse_leaf_inplace()
        other_grad = isinstance(other, registry.Tensor) and other._requires_grad
        if STATE.grad_enabled and (self._requires_grad or other_grad):
            # Rebase history: the tensor becomes the output of the out-of-place op, as autograd sees it.
            _note_write(self)  # what backward saved of the old value is stale now (noted before the new node)
            # the op's node may save self's old values (mul_ with other requiring grad, clamp_, pow_): PyTorch
            # saves a copy of them (original_self), which later in-place ops on self leave alone
            shared = self._data
            self._data = shared.copy()
            try:
                result = fn(self, other)
            finally:
                self._data = shared
            _check_writable(shared, result._data)
            if result._data.dtype != shared.dtype:  # computed in the promoted dtype, written in self's (float32 += float64)
                result._data = result._data.astype(shared.dtype)
            rebase(self, result)
        else:
            data = self._data
            operand = registry.Tensor._wrap(data)
            rec = STATE.recorder
            if rec is not None:  # the op reads this tensor (drawn as itself, not as a copy of its old value)
                rec.tid(self)
                operand._rid = self._rid
            value = fn(operand, other)._data
            # an op's result is an ndarray or a numpy scalar: both have .shape, without np.shape's dispatch
            value_shape = value.shape if isinstance(value, _HAS_SHAPE) else np.shape(value)
            _check_writable(data, value, value_shape)
            if isinstance(data, np.ndarray):  # the shapes match (checked): numpy writes in place, aliases see it
                _note_write(self)
                data[...] = value  # (as np.copyto(casting="unsafe"), at a sixth of its cost on a 0-d tensor)
            else:
                self._data = np.asarray(value, dtype=data.dtype)
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, name)
        return self

    @property
    def _version(self):
        """PyTorch's version counter: in-place writes to this tensor (or to the tensor it is a view of)."""
        return _versions(self._data, 0)[0] if isinstance(self._data, np.ndarray) else 0

    def _refuse_leaf_inplace(self):
        if STATE.grad_enabled:
            if self._requires_grad and self._grad_fn is None:
                raise RuntimeError(LEAF_INPLACE)
            base = self._view_base
            if base is not None and base._requires_grad and base._grad_fn is None and self._requires_grad:
                raise RuntimeError(VIEW_OF_LEAF_INPLACE)

    def add_(self, other, alpha=1):
        return self._inplace("add_", _ADD if type(alpha) is int and alpha == 1
                             else lambda a, b: a.add(b, alpha=alpha), other)

    def sub_(self, other, alpha=1):
        return self._inplace("sub_", _SUB if type(alpha) is int and alpha == 1
                             else lambda a, b: a.sub(b, alpha=alpha), other)

    def mul_(self, other):
        return self._inplace("mul_", lambda a, b: a * b, other)

    def div_(self, other):
        return self._inplace("div_", lambda a, b: a / b, other)

    def remainder_(self, other):
        return self._inplace("remainder_", lambda a, b: a.remainder(b), other)

    def fmod_(self, other):
        return self._inplace("fmod_", lambda a, b: a.fmod(b), other)

    def floor_divide_(self, other):
        return self._inplace("floor_divide_", lambda a, b: a.floor_divide(b), other)

    def clamp_(self, min=None, max=None):  # noqa: A002
        return self._inplace("clamp_", lambda a, b: a.clamp(min, max))

    def zero_(self):
        return self._set_data_(0, "zero_")

    def fill_(self, value):
        if (isinstance(value, registry.Tensor) and STATE.grad_enabled and (self._requires_grad or value._requires_grad)
                and value.ndim == 0):
            self._refuse_leaf_inplace()
            result = apply(OPS["overwrite_fill_tensor"], (self, value), ())
            _note_write(self)  # safe after the node: FillBackward3 reads nothing saved
            rebase(self, result)
            rec = STATE.recorder
            if rec is not None:
                rec.on_inplace(self, "fill_")
            return self
        if not isinstance(value, registry.Tensor):
            dtypes.check_fits(value, self._data.dtype)  # (1e300 into float32: PyTorch's overflow error, not inf)
        return self._set_data_(value._data if isinstance(value, registry.Tensor) else value, "fill_")

    def copy_(self, src, non_blocking=False):
        if STATE.grad_enabled and (self._requires_grad or (isinstance(src, registry.Tensor) and src._requires_grad)):
            put_recorded(self, Ellipsis, src, "copy_into", LEAF_INPLACE)
            return self
        return self._set_data_(np.broadcast_to(src._data if isinstance(src, registry.Tensor) else src, self._data.shape), "copy_")

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return self._set_data_(fill_normal(self._data, mean, std, generator), "normal_")

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return self._set_data_(fill_uniform(self._data, a, b, generator), "uniform_")

    def bernoulli_(self, p=0.5, *, generator=None):
        if not isinstance(p, registry.Tensor):
            return self._set_data_(fill_bernoulli(self._data, p, generator), "bernoulli_", "overwrite_bernoulli")
        values = fill_bernoulli(self._data, p._data, generator)
        if STATE.grad_enabled and (self._requires_grad or p._requires_grad):
            # PyTorch's BernoulliBackward1 has an edge to p too (its gradient: zeros), whoever requires grad
            self._refuse_leaf_inplace()
            result = apply(OPS["overwrite_bernoulli_tensor"], (self, p), (values,))
            _note_write(self)  # safe after the node: BernoulliBackward1 reads nothing saved
            rebase(self, result)
            rec = STATE.recorder
            if rec is not None:
                rec.on_inplace(self, "bernoulli_")
            return self
        return self._set_data_(values, "bernoulli_")

    def random_(self, *args, generator=None, **kwargs):
        # PyTorch's overloads: random_() RandomBackward2, random_(to) RandomBackward1, random_(from, to) RandomBackward0
        only_to = (len(args) == 1 and not kwargs) or (not args and set(kwargs) == {"to"})
        op = "overwrite_random_full" if not args and not kwargs else "overwrite_random_to" if only_to else \
            "overwrite_random_from_to"
        return self._set_data_(fill_random(self._data, args, kwargs, generator), "random_", op)

    def _set_data_(self, values, name, op=None):
        """Overwrite every element in place (zero_, fill_, copy_, init); op: the overwrite op recorded under
        autograd when it is not OVERWRITE_OPS[name]."""
        self._refuse_leaf_inplace()
        op = op or OVERWRITE_OPS.get(name)
        if STATE.grad_enabled and self._requires_grad and op is not None:  # a tensor with history
            written = np.broadcast_to(np.asarray(values, dtype=self._data.dtype), np.shape(self._data))
            result = apply(OPS[op], (self,), (written,))
            _note_write(self)  # safe after the node: these nodes read nothing saved
            rebase(self, result)
            rec = STATE.recorder
            if rec is not None:
                rec.on_inplace(self, name)
            return self
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
    __imod__ = remainder_
    __ifloordiv__ = floor_divide_


def put_recorded(t, key, value, op_name, leaf_message):
    """t[key] = value as autograd sees it: t becomes the output of the op `op_name` (IndexPut, CopySlices,
    Copy), whose backward routes the written entries' gradient to value and the rest to t's old history."""
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError(leaf_message)
    if not isinstance(value, registry.Tensor):
        value = registry.Tensor._wrap(np.asarray(value, dtype=t._data.dtype))
    result = apply(OPS[op_name], (t, value), (key,))  # first: a failed write leaves t's version alone
    # NOTE: noted after the node is made, which is safe only because these nodes never read their own result
    _note_write(t)
    rebase(t, result)
    rec = STATE.recorder
    if rec is not None:
        rec.on_inplace(t, "__setitem__" if op_name != "copy_into" else "copy_")


def _check_writable(data, value, value_shape=None):
    """PyTorch's checks before an in-place op writes its result into the tensor: the broadcast shape is the tensor's
    own, and the result's type casts to the tensor's (a float result never truncates into an integer tensor)."""
    shape = data.shape if isinstance(data, _HAS_SHAPE) else np.shape(data)
    value_shape = np.shape(value) if value_shape is None else value_shape
    if value_shape != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(value_shape)}")
    if isinstance(value, _HAS_SHAPE) and isinstance(data, _HAS_SHAPE) and value.dtype is data.dtype:
        return  # (the usual case: a dtype casts to itself, without np.result_type's dispatch)
    dtypes.check_can_cast(np.result_type(value), np.result_type(data))


def rebase(t, result):
    """t takes over the result of the out-of-place form of its in-place op: its values, its history, and its
    version counter (the new array continues the old one's count). A view writes through to its base instead."""
    if t._view_base is not None and _write_through(t, result):
        return
    if t._view_base is None and _write_into_base(t, result):
        return
    carry_writes(t._data, result._data)
    note_replaced(t._data, t)
    t._data, t._grad_fn, t._requires_grad = result._data, result._grad_fn, True


def _write_through(view, result) -> bool:
    """PyTorch's in-place op on a view: the base becomes CopySlices of the result, written into the base's own
    memory so that every view of it sees the values, and the view becomes AsStridedBackward0 of the base.
    False: the view no longer shares the base's memory (the base was replaced since), nothing done."""
    base = view._view_base
    where = view_positions(base._data, view._data)
    if where is None or not base._data.flags.writeable:
        return False
    if base._requires_grad and base._grad_fn is None:
        raise RuntimeError(VIEW_OF_LEAF_INPLACE)
    key, strides = where
    written = apply(OPS["copy_slices"], (base, result), (key,))  # reads nothing saved: the old values may go
    np.copyto(base._data, written._data, casting="unsafe")
    base._grad_fn, base._requires_grad = written._grad_fn, True
    view._grad_fn = apply(OPS["as_strided_view"], (base,), (key, strides))._grad_fn
    view._requires_grad = True
    replay_views(base, view)
    return True


def _write_into_base(t, result) -> bool:
    """An in-place op on a tensor that has live views: the values go into its own memory, so the views see them,
    and the views take its new history (PyTorch's view replay). False: no views, or memory that cannot take them."""
    data = t._data
    if not (isinstance(data, np.ndarray) and data.flags.writeable and data.shape == result._data.shape
            and data.dtype == result._data.dtype and has_views(t)):
        return False
    np.copyto(data, result._data)
    node = result._grad_fn
    saved = node._saved if node is not None else None
    if saved and saved[0] is result._data:
        # the node saved its result (exp_, sigmoid_): it must read t's memory, so that a later in-place op on t
        # makes it stale as in PyTorch, not a private copy no write ever reaches
        node._saved = (data, *saved[1:])
    t._grad_fn, t._requires_grad = result._grad_fn, True
    replay_views(t)
    return True


def _note_write(t):
    if not t._untracked:
        note_write(t._data)
