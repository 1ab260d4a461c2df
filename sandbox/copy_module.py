"""`copy` for programs: `copy.deepcopy(model)` (the best model kept by an early-stopping loop), `copy.copy(x)`.

Python's own deepcopy walks any object's `__dict__` and `__reduce_ex__`; here that would reach the interpreter behind
a program's functions and classes. This walker copies only what a program's data is made of: numbers and strings
(themselves), lists, dicts, tuples, sets and collections' containers, tensors by their own __deepcopy__ (the engine's,
as PyTorch's: a Parameter without its .grad, a tensor with it, a non-leaf refused), numpy arrays, modules (their
`__dict__`: parameters, buffers, submodules, attributes) and instances of the program's classes. Functions, classes
and modules are shared, as Python shares them. Anything else (an optimizer, a DataLoader, an open file) is refused
with a TypeError that says so. Every copied item counts against the run's list/string budget, every tensor against
max_live_elements (as torch.load's tensors), and a long copy checks the run's clock.
"""
from __future__ import annotations

import collections
import types

import numpy as np

from .objects import Builtin, BuiltinType, ModuleProxy, UserClass, UserFunction, UserInstance

MAX_DEPTH = 200  # containers inside containers (Python's own deepcopy stops at its recursion limit)
CLOCK_EVERY = 4096  # items copied between checks of the run's clock
# Python's atoms: deepcopy gives them back as they are
_ATOMS = (type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis), type(NotImplemented))


class _Copier:
    def __init__(self, interp, deep: bool):
        self.interp = interp
        self.B = interp.B
        self.deep = deep
        self.memo: dict[int, object] = {}
        self.keep: list = []  # the originals memo's ids refer to, alive until the copy is done
        self.items = 0

    def _count(self, n=1):
        self.interp.alloc(n, "copy")
        self.items += n
        if self.items >= CLOCK_EVERY:
            self.items = 0
            self.interp.check_time()

    def _shared(self, obj) -> bool:
        """Functions, classes, modules and the engine's immutable values: copied by reference, as Python does."""
        B = self.B
        t = type(obj)
        return (t in _ATOMS or t in (UserFunction, UserClass, Builtin, BuiltinType, ModuleProxy, type)
                or isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type))
                or t is B.dtype or t is B.device or t is np.dtype)

    def copy(self, obj, depth=0):
        if self._shared(obj):
            return obj
        done = self.memo.get(id(obj))
        if done is not None:
            return done
        if depth > MAX_DEPTH:
            raise RecursionError("maximum recursion depth exceeded while calling a Python object")
        out = self._copy(obj, depth + 1)
        self.memo[id(obj)] = out
        self.keep.append(obj)
        return out

    def _item(self, x, depth):
        return self.copy(x, depth) if self.deep else x

    def _remember(self, obj, out):
        self.memo[id(obj)] = out  # before the items: a list may hold itself
        self.keep.append(obj)
        return out

    def _copy(self, obj, depth):
        B, interp = self.B, self.interp
        t = type(obj)
        if t is list:
            self._count(len(obj) + 1)
            out = self._remember(obj, [])
            out.extend(self._item(x, depth) for x in list(obj))
            return out
        if t is dict or t in (collections.OrderedDict, collections.defaultdict, collections.Counter):
            self._count(2 * len(obj) + 1)
            out = self._remember(obj, collections.defaultdict(obj.default_factory) if t is collections.defaultdict
                                 else t())
            for k, v in list(obj.items()):
                out[self._item(k, depth)] = self._item(v, depth)
            return out if t is dict else interp.own(out)
        if t is collections.deque:
            self._count(len(obj) + 1)
            out = self._remember(obj, collections.deque(maxlen=obj.maxlen))
            out.extend(self._item(x, depth) for x in list(obj))
            return interp.own(out)
        if t is tuple or t is frozenset:
            self._count(len(obj) + 1)
            if not self.deep:
                return obj
            return t(self.copy(x, depth) for x in obj)
        if t is set:
            self._count(len(obj) + 1)
            return {self._item(x, depth) for x in obj}
        if t is B.Size:
            self._count(len(obj) + 1)
            return obj
        if isinstance(obj, B.Tensor):
            return self._tensor(obj)
        if t is np.ndarray:
            if obj.dtype.kind not in "biufc":
                raise TypeError("copy of a numpy array of objects is not available in flowgrad")
            self._count(obj.size + 1)
            return obj.copy()
        if isinstance(obj, (np.generic,)) and t.__module__ == "numpy":
            return obj
        if t is UserInstance:
            self._count(len(obj.attrs) + 1)
            out = self._remember(obj, UserInstance(obj.cls))
            out.attrs = {k: self._item(v, depth) for k, v in list(obj.attrs.items())}
            return out
        if isinstance(obj, B.Module) or (B.Dataset is not None and isinstance(obj, B.Dataset)
                                         and not isinstance(obj, B.DataLoader or ())):
            state = obj.__dict__
            self._count(len(state) + 1)
            out = self._remember(obj, object.__new__(t))
            out.__dict__.update((k, self._item(v, depth)) for k, v in list(state.items()))
            return out
        raise TypeError(f"copy of a '{interp.type_name(obj)}' object is not available in flowgrad: copy and deepcopy "
                        "take tensors, modules, numbers, strings, containers and instances of the program's classes")

    def _tensor(self, obj):
        if not self.deep:  # copy.copy: a new leaf on the same storage (PyTorch rebuilds it from the same storage)
            out = obj.detach()
            if obj.requires_grad:
                out.requires_grad_(True)
            return out
        self._count(1)
        return obj.__deepcopy__(self.memo)  # the engine's, as torch's (counted against the run's limits there)


def copy_module(interp) -> ModuleProxy:
    """`import copy`: copy and deepcopy (a program's `memo` argument is not taken: the walk keeps its own)."""
    def deepcopy(x, memo=None, _nil=None):
        if memo is not None:
            raise TypeError("copy.deepcopy(x, memo) is not available in flowgrad: call copy.deepcopy(x)")
        return _Copier(interp, deep=True).copy(x)

    def copy(x):
        return _Copier(interp, deep=False).copy(x)

    return ModuleProxy("copy", {"deepcopy": Builtin("deepcopy", deepcopy, interp), "copy": Builtin("copy", copy, interp)})
