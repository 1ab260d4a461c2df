"""Python's protocols on instances of a program's plain classes: `__call__`, `__len__`, `__getitem__`,
`__iter__`/`__next__`, `__contains__`, `__bool__`, comparisons, `__hash__` and the operators.

`UserInstance` derives from `InstanceProtocol`, so every place Python calls a dunder — the interpreter,
C builtins (`len`, `sorted`, `in`), engine code (a DataLoader over a map-style dataset), numpy — lands
here once. Each method looks the program's method up in the instance's class (`Calls.dunder`, a counted
user call: steps, call depth and time apply) and, where the class has none, does what Python does for a
class without it: the same TypeError, or NotImplemented for operators so the other operand gets its turn.
One host class stands for every program class, so what C decides from the type alone is decided here:
the reflected operator between instances of two different program classes, `__ne__` from `__eq__`,
`__hash__` = None beside `__eq__`, the iterator check on what `__iter__` returns.
"""

from __future__ import annotations

import re

from .errors import ProgramError

ABSENT = object()  # `Calls.dunder`'s answer when the class does not define the method

# binary operators: (method, reflected, in-place)
BINARY_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
                    "rshift")
COMPARISONS = ("__eq__", "__lt__", "__le__", "__gt__", "__ge__")
UNARY = {"__neg__": "unary -", "__pos__": "unary +", "__invert__": "unary ~", "__abs__": "abs()"}
# the dunder methods a program's class may define (besides __init__, __enter__ and __exit__)
PROTOCOL_METHODS = frozenset(
    {"__call__", "__len__", "__getitem__", "__setitem__", "__delitem__", "__iter__", "__next__", "__contains__",
     "__bool__", "__repr__", "__str__", "__hash__", "__ne__", *COMPARISONS, *UNARY}
    | {f"__{p}{op}__" for op in BINARY_OPERATORS for p in ("", "r", "i")})
# what nn.Module and Dataset subclasses may define: the engine's base classes own the other protocols
MODULE_DUNDERS = frozenset({"__init__", "__enter__", "__exit__", "__repr__", "__str__"})
DATASET_DUNDERS = MODULE_DUNDERS | {"__len__", "__getitem__"}
EXCEPTION_DUNDERS = frozenset({"__init__", "__enter__", "__exit__"})


def _call(obj, name, *args):
    return obj.cls.interp.dunder(obj, name, args)


def _defines(obj, name) -> bool:
    return obj.cls.lookup(name)[0] is not None


def is_iterator(interp, r) -> bool:
    """What `iter()` accepts back from `__iter__`: an object with `__next__` (for program objects, their class's)."""
    if isinstance(r, InstanceProtocol):
        return _defines(r, "__next__")
    return hasattr(type(r), "__next__")


def sequence_items(interp, getitem):
    """Iteration over a class with `__getitem__` and no `__iter__`: items 0, 1, 2, ... until IndexError
    (or StopIteration), as Python's sequence iterator; the program's own IndexError ends it too."""
    i = 0
    while True:
        try:
            v = getitem(i)
        except ProgramError as pe:
            if interp.catchable(pe) and isinstance(interp.exception_value(pe), (IndexError, StopIteration)):
                return
            raise
        except (IndexError, StopIteration):
            return
        yield v
        i += 1


def _binary(name, rname):
    def op(self, other):
        interp = self.cls.interp
        other_program = isinstance(other, InstanceProtocol) and other.cls is not self.cls
        tried = False
        if other_program and self.cls in other.cls.mro[1:]:
            # a subclass on the right that overrides the reflected method goes first, as in Python
            mine, theirs = self.cls.lookup(rname)[1], other.cls.lookup(rname)[1]
            if theirs is not None and theirs is not mine:
                tried = True
                r = interp.dunder(other, rname, (self,))
                if r is not NotImplemented:
                    return r
        r = interp.dunder(self, name, (other,))
        if r is not ABSENT and r is not NotImplemented:
            return r
        if other_program and not tried:  # (C tries no reflected method between objects of one host class)
            r = interp.dunder(other, rname, (self,))
            if r is not ABSENT:
                return r
        return NotImplemented
    op.__name__ = name
    return op


def _single(name):
    def op(self, other):
        r = _call(self, name, other)
        return NotImplemented if r is ABSENT else r
    op.__name__ = name
    return op


def _unary(name, shown):
    def op(self):
        r = _call(self, name)
        if r is ABSENT:
            raise TypeError(f"bad operand type for {shown}: '{self.cls.name}'")
        return r
    op.__name__ = name
    return op


class InstanceProtocol:
    """The dunders of `objects.UserInstance` (which holds `cls`, the program's class)."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        interp = self.cls.interp
        _, f = self.cls.lookup("__call__")
        if f is None:
            raise TypeError(f"'{self.cls.name}' object is not callable")
        r = interp.call(interp.class_attribute(f, self, self.cls, "__call__"), list(args), kwargs)
        interp.check_data(r)  # engine code may have called it (a collate_fn, Module.apply)
        return r

    def __len__(self):
        r = _call(self, "__len__")
        if r is ABSENT:
            raise TypeError(f"object of type '{self.cls.name}' has no len()")
        return r  # (C checks it: an int, >= 0, at most sys.maxsize)

    def __getitem__(self, key):
        r = _call(self, "__getitem__", key)
        if r is ABSENT:
            raise TypeError(f"'{self.cls.name}' object is not subscriptable")
        self.cls.interp.check_data(r)  # engine code may have called it (a DataLoader's collate)
        return r

    def __setitem__(self, key, value):
        if _call(self, "__setitem__", key, value) is ABSENT:
            raise TypeError(f"'{self.cls.name}' object does not support item assignment")

    def __delitem__(self, key):
        if _call(self, "__delitem__", key) is ABSENT:
            raise TypeError(f"'{self.cls.name}' object doesn't support item deletion")

    def __iter__(self):
        interp = self.cls.interp
        r = interp.dunder(self, "__iter__", ())
        if r is ABSENT:
            if not _defines(self, "__getitem__"):
                raise TypeError(f"'{self.cls.name}' object is not iterable")
            return sequence_items(interp, self.__getitem__)
        if not is_iterator(interp, r):
            raise TypeError(f"iter() returned non-iterator of type '{interp.type_name(r)}'")
        return r

    def __next__(self):
        interp = self.cls.interp
        try:
            r = interp.dunder(self, "__next__", ())
        except ProgramError as pe:  # the program's StopIteration ends a for loop, next(it, default), list(it)
            if interp.catchable(pe):
                v = interp.exception_value(pe)
                if isinstance(v, StopIteration):
                    raise v from None
            raise
        if r is ABSENT:
            raise TypeError(f"'{self.cls.name}' object is not an iterator")
        return r

    def __contains__(self, item):
        r = _call(self, "__contains__", item)
        if r is not ABSENT:
            return bool(r)
        if not (_defines(self, "__iter__") or _defines(self, "__getitem__")):
            raise TypeError(f"argument of type '{self.cls.name}' is not iterable")
        for x in self.__iter__():  # each item a counted call: an endless iterator meets the step limit
            if x is item or x == item:
                return True
        return False

    def __bool__(self):
        r = _call(self, "__bool__")
        if r is ABSENT:
            return len(self) != 0 if _defines(self, "__len__") else True
        if type(r) is not bool:
            raise TypeError(f"__bool__ should return bool, returned {self.cls.interp.type_name(r)}")
        return r

    def __ne__(self, other):
        r = _call(self, "__ne__", other)
        if r is not ABSENT:
            return r
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        for c in self.cls.mro:  # Python sets __hash__ to None in a class that defines __eq__ alone
            if "__hash__" in c.ns:
                return _call(self, "__hash__")  # (C checks it is an int)
            if "__eq__" in c.ns:
                raise TypeError(f"unhashable type: '{self.cls.name}'")
        return object.__hash__(self)

    def __array__(self, *args, **kwargs):
        # numpy would otherwise read it as a sequence: list() of len() items (preallocated), each indexed
        raise RuntimeError(f"Could not infer dtype of {self.cls.name}")


for _op in BINARY_OPERATORS:
    setattr(InstanceProtocol, f"__{_op}__", _binary(f"__{_op}__", f"__r{_op}__"))
    setattr(InstanceProtocol, f"__r{_op}__", _single(f"__r{_op}__"))
    setattr(InstanceProtocol, f"__i{_op}__", _single(f"__i{_op}__"))
for _name in COMPARISONS:
    setattr(InstanceProtocol, _name, _single(_name))
for _name, _shown in UNARY.items():
    setattr(InstanceProtocol, _name, _unary(_name, _shown))


_OPERAND_MESSAGE = re.compile(r"(unsupported operand type\(s\) for \S+: |'\S+' not supported between instances of "
                              r"|bad operand type for [^:]+: )'[^']*'(?: and '[^']*')?\Z")


def operand_error(interp, e, *operands):
    """Python's operator TypeError with the program's class names (C names the host class 'object')."""
    if type(e) is TypeError and any(isinstance(x, InstanceProtocol) for x in operands):
        m = _OPERAND_MESSAGE.match(str(e))
        if m is not None:
            names = " and ".join(f"'{interp.type_name(x)}'" for x in operands)
            return TypeError(m.group(1) + names)
    return e
