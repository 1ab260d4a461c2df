"""What torch.save keeps and torch.load gives back, as plain data: `snapshot(obj)` copies a tensor, a state dict
(a module's or an optimizer's) or a plain container of them into a `Snapshot` that shares no memory with the
program's objects; `restore(snapshot)` builds new tensors from it on every call, as torch.load does.

PyTorch pickles whatever it is given; this copies only what can be copied without running or keeping program
code: tensors (and Parameters, with requires_grad), numbers, strings, bytes, None, dtypes, devices, Size, numpy
arrays, and lists, tuples, dicts, OrderedDicts, sets of these. Anything else is refused with a TypeError saying
what and why (a module: save its state_dict(), as PyTorch recommends). The caller stores snapshots where it
likes (the sandbox's per-run files): the engine has no file of its own.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .autograd import STATE
from .devices import device
from .dtypes import dtype
from .nn.modules import Module, Parameter
from .tensor_core import Size, Tensor

MAX_DEPTH = 1000  # containers inside containers (Python's pickle stops near its recursion limit, 1,000)
ITEM_BYTES = 8  # what one container item, number or string header counts, besides its data
_ATOMS = (bool, int, float, complex, type(None))
_SHARED = (dtype, device)  # immutable: a load gives back the same object
_NUMPY_SCALARS = (np.bool_, np.number)


class SnapshotTooLarge(ValueError):
    """The copy would pass the caller's byte budget (checked as it grows, before the whole copy is made)."""


class _SavedTensor:
    __slots__ = ("array", "requires_grad", "parameter")

    def __init__(self, array, requires_grad, parameter):
        self.array = array
        self.requires_grad = requires_grad
        self.parameter = parameter


class _SavedArray:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


class Snapshot:
    """A saved object: `value` holds plain containers with `_SavedTensor` leaves; `nbytes` what it weighs."""

    __slots__ = ("value", "nbytes")

    def __init__(self, value, nbytes):
        self.value = value
        self.nbytes = nbytes


def _refusal(obj) -> TypeError:
    if isinstance(obj, Module):
        return TypeError(f"cannot save a module ({type(obj).__name__}) in flowgrad: PyTorch pickles its class by "
                         "reference and runs its code again on load; save its state_dict() instead "
                         "(torch.save(model.state_dict(), path), then model.load_state_dict(torch.load(path)))")
    kind = "a function" if callable(obj) and not isinstance(obj, type) else \
        "a class" if isinstance(obj, type) else f"an object of type '{type(obj).__name__}'"
    return TypeError(f"cannot save {kind} in flowgrad: torch.save here keeps tensors, state dicts, numbers, "
                     "strings and lists, tuples, dicts and sets of these (PyTorch would pickle program code)")


PROGRESS_EVERY = 4096  # items copied between calls of the caller's `progress` (its clock check)


class _Copier:
    def __init__(self, max_bytes, progress):
        self.max_bytes = max_bytes
        self.progress = progress
        self.items = 0
        self.nbytes = 0
        self.memo = {}  # id of a program object -> its copy (the same tensor twice loads as one tensor)
        self.keep = []  # the originals memo's ids refer to, alive until the copy is done

    def charge(self, n):
        self.nbytes += n
        self.items += 1
        if not self.items % PROGRESS_EVERY and self.progress is not None:
            self.progress()
        if self.max_bytes is not None and self.nbytes > self.max_bytes:
            raise SnapshotTooLarge(f"the saved object needs more than {self.max_bytes:,} bytes")

    def copy(self, obj, depth):
        t = type(obj)
        if t in _ATOMS:
            self.charge(ITEM_BYTES)
            return obj
        if t is str or t is bytes:
            self.charge(ITEM_BYTES + len(obj))
            return obj
        if isinstance(obj, _SHARED):
            self.charge(ITEM_BYTES)
            return obj
        if isinstance(obj, _NUMPY_SCALARS) and t.__module__ == "numpy":
            self.charge(ITEM_BYTES)
            return obj.copy()
        done = self.memo.get(id(obj))
        if done is not None:
            return done
        if depth > MAX_DEPTH:
            raise RecursionError("maximum recursion depth exceeded while pickling an object")
        if isinstance(obj, Tensor):
            data = np.asarray(obj._data)
            self.charge(ITEM_BYTES + data.nbytes)
            out = _SavedTensor(np.array(data, copy=True), bool(obj._requires_grad), isinstance(obj, Parameter))
        elif t is np.ndarray:
            if obj.dtype.kind not in "biufc":
                raise _refusal(obj)
            self.charge(ITEM_BYTES + obj.nbytes)
            out = _SavedArray(obj.copy())
        elif t is Size:
            self.charge(ITEM_BYTES * (1 + len(obj)))
            out = Size(tuple(obj))
        elif t is list:
            out = self._fill(obj, [], depth)
        elif t is dict or t is OrderedDict:
            out = self._fill_dict(obj, t(), depth)
        elif t is tuple:
            self.charge(ITEM_BYTES)
            out = tuple(self.copy(x, depth + 1) for x in obj)
        elif t is set or t is frozenset:
            self.charge(ITEM_BYTES)
            out = t(self.copy(x, depth + 1) for x in obj)
        else:
            raise _refusal(obj)
        self.memo[id(obj)] = out
        self.keep.append(obj)
        return out

    def _fill(self, obj, out, depth):
        self.memo[id(obj)] = out  # before the items: a list may hold itself, as pickle allows
        self.keep.append(obj)
        self.charge(ITEM_BYTES)
        for x in list(obj):
            out.append(self.copy(x, depth + 1))
        return out

    def _fill_dict(self, obj, out, depth):
        self.memo[id(obj)] = out
        self.keep.append(obj)
        self.charge(ITEM_BYTES)
        for k, v in list(obj.items()):
            out[self.copy(k, depth + 1)] = self.copy(v, depth + 1)
        return out


def snapshot(obj, max_bytes=None, progress=None) -> Snapshot:
    """A copy of `obj` for torch.save (SnapshotTooLarge past `max_bytes`; TypeError for what cannot be saved);
    `progress()` is called every PROGRESS_EVERY items (a caller's time limit can stop a long copy there)."""
    copier = _Copier(max_bytes, progress)
    value = copier.copy(obj, 0)
    return Snapshot(value, copier.nbytes)


def _new_tensor(saved: _SavedTensor):
    array = np.array(saved.array, copy=True)  # every load its own memory, as torch.load's
    limits = STATE.limits
    if limits is not None:
        limits.before_alloc(array.shape)
    if saved.parameter:
        t = Parameter(Tensor._wrap(array), requires_grad=saved.requires_grad)
    else:
        t = Tensor._wrap(array)
        if saved.requires_grad:
            t.requires_grad_(True)
    if limits is not None:
        limits.track(t)
    return t


def _paced(items, progress):
    """The items, calling `progress()` every PROGRESS_EVERY of them."""
    if progress is None:
        yield from items
        return
    for i, x in enumerate(items, 1):
        if not i % PROGRESS_EVERY:
            progress()
        yield x


def _rebuild(value, memo, progress):
    t = type(value)
    if t in _ATOMS or t is str or t is bytes or isinstance(value, _SHARED):
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    if t is _SavedTensor:
        out = _new_tensor(value)
    elif t is _SavedArray:
        out = value.array.copy()
    elif t is list:
        out = memo[id(value)] = []
        out.extend(_rebuild(x, memo, progress) for x in _paced(value, progress))
    elif t is dict or t is OrderedDict:
        out = memo[id(value)] = t()
        for k, v in _paced(value.items(), progress):
            out[_rebuild(k, memo, progress)] = _rebuild(v, memo, progress)
    elif t is tuple or t is set or t is frozenset:
        out = t(_rebuild(x, memo, progress) for x in _paced(value, progress))
    elif t is Size:
        out = Size(tuple(value))
    else:  # numpy scalars
        out = value.copy()
    memo[id(value)] = out
    return out


def restore(saved: Snapshot, progress=None):
    """New objects (new tensors with their own memory) equal to what was saved; `progress` as in snapshot."""
    return _rebuild(saved.value, {}, progress)
