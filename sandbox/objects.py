"""Interpreter-level objects (user functions, classes and instances, module proxies) and value categories.

User classes are never real Python classes: a `UserClass` holds the methods, a `UserInstance`
holds the attributes. Instances of user subclasses of `nn.Module` are instances of one fixed
real class (`user_module_class`), so the engine's Module machinery works on them.
"""

from __future__ import annotations

import ast
import collections
import types

from .instance_protocol import InstanceProtocol, sequence_items


def _named(fn, name):
    """Python's argument errors quote a function's qualified name: make it the builtin's name."""
    if isinstance(fn, types.FunctionType):
        fn.__name__ = fn.__qualname__ = name
    return fn


def docstring(body):
    """A `def`'s or `class`'s docstring: its first statement when that is a string literal."""
    if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant and type(body[0].value.value) is str:
        return body[0].value.value
    return None


class Scope:
    # set only on class scopes: defs, the body's functions (their owner is the class, for super());
    # qualname, the class's `__qualname__` (its functions' names start with it)
    # handling: the exception an `except` block of this scope is handling (for a bare `raise`)
    # annotations: on class scopes, the names annotated in the body, in order (what @dataclass reads)
    __slots__ = ("vars", "parent", "kind", "func", "defs", "qualname", "handling", "annotations")

    def __init__(self, vars, parent=None, kind=0, func=None):  # noqa: A002
        self.vars = vars
        self.parent = parent
        self.kind = kind  # 0 function/module, 1 class body, 2 comprehension
        self.func = func


FUNC, CLASS, COMP = 0, 1, 2


class DeclaredVars(dict):
    """The local variables of a call whose function declares `global`/`nonlocal` names: those names are
    read and written in the scope they live in (`redirect`: name -> that scope's dict)."""

    __slots__ = ("redirect",)

    def __setitem__(self, key, value):
        d = self.redirect.get(key)
        if d is None:
            dict.__setitem__(self, key, value)
        else:
            d[key] = value

    def __getitem__(self, key):
        d = self.redirect.get(key)
        return dict.__getitem__(self, key) if d is None else d[key]

    def __contains__(self, key):
        d = self.redirect.get(key)
        return dict.__contains__(self, key) if d is None else key in d

    def __delitem__(self, key):
        d = self.redirect.get(key)
        if d is None:
            dict.__delitem__(self, key)
        else:
            del d[key]

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key, *default):
        d = self.redirect.get(key)
        return dict.pop(self, key, *default) if d is None else d.pop(key, *default)

# What a block hands up to its loop or function: `break`, `continue`, or a Return (None: carry on).
BREAK = object()
CONTINUE = object()


class Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class UserFunction:
    __slots__ = ("name", "node", "body", "is_lambda", "closure", "interp", "owner", "posnames", "defaults",
                 "kwonly", "kw_defaults", "vararg", "kwarg", "simple", "nparams", "qualname", "doc", "yields",
                 "decls")

    def __init__(self, name, node, body, is_lambda, closure, interp, defaults, kw_defaults):
        a = node.args
        self.name = name
        self.node = node
        self.body = body
        self.is_lambda = is_lambda
        self.closure = closure
        self.interp = interp
        self.owner = None
        self.posnames = [p.arg for p in a.posonlyargs] + [p.arg for p in a.args]
        self.nparams = len(self.posnames)
        self.defaults = defaults  # values for the last len(defaults) positional parameters
        self.kwonly = [p.arg for p in a.kwonlyargs]
        self.kw_defaults = kw_defaults  # name -> value
        self.vararg = a.vararg.arg if a.vararg else None
        self.kwarg = a.kwarg.arg if a.kwarg else None
        self.simple = not (defaults or self.kwonly or self.vararg or self.kwarg)
        self.qualname = name
        self.doc = None if is_lambda else docstring(node.body)
        self.yields = None  # a generator function: the statements of its body with a `yield` (flow.py)
        self.decls = None  # `global`/`nonlocal` names: name -> scope dict they live in (calls.py)

    @property
    def source_lines(self):
        """(first, last) line of its source: the page highlights them when the engine runs it (a hook, a backward)."""
        return (self.node.lineno, getattr(self.node, "end_lineno", None) or self.node.lineno)

    def __call__(self, *args, **kwargs):
        # called by engine code or a builtin (never by the interpreter): what it returns goes there
        r = self.interp.call_user(self, args, kwargs)
        self.interp.check_data(r)
        return r

    def __repr__(self):  # CPython's, with the run's stand-in address (sandbox/formatting.py FakeAddresses)
        return f"<function {'<lambda>' if self.is_lambda else self.qualname} at {self.interp.addresses.of(self)}>"

    __str__ = __repr__


class BoundMethod:
    __slots__ = ("func", "obj")

    def __init__(self, func, obj):
        self.func = func
        self.obj = obj

    def __call__(self, *args, **kwargs):
        interp = self.func.interp
        r = interp.call(self.func, [self.obj, *args], kwargs)
        interp.check_data(r)
        return r

    def __repr__(self):
        func = self.func
        name = getattr(func, "qualname", None) or getattr(func, "name", "function")
        interp = getattr(func, "interp", None)
        return f"<bound method {name} of {interp.repr_value(self.obj)}>" if interp is not None else \
            f"<bound method {name}>"

    __str__ = __repr__


class StaticMethod:
    """`@staticmethod`: the function, unbound whether read from the class or an instance."""

    __slots__ = ("func", "interp")

    def __init__(self, func, interp):
        self.func = func
        self.interp = interp

    def __call__(self, *args, **kwargs):  # callable since Python 3.10
        r = self.interp.call(self.func, list(args), kwargs)
        self.interp.check_data(r)
        return r

    def __repr__(self):
        return f"<staticmethod({self.interp.repr_value(self.func)})>"

    __str__ = __repr__


class ClassMethod:
    """`@classmethod`: the function bound to the class (also when read from an instance)."""

    __slots__ = ("func", "interp")

    def __init__(self, func, interp):
        self.func = func
        self.interp = interp

    def __repr__(self):
        return f"<classmethod({self.interp.repr_value(self.func)})>"

    __str__ = __repr__


class Property:
    """`@property` (and `@x.setter`): read and assigned through an instance, the getter/setter run."""

    __slots__ = ("fget", "fset", "doc")

    def __init__(self, fget=None, fset=None, doc=None):
        self.fget = fget
        self.fset = fset
        self.doc = doc

    def __repr__(self):
        return "<property object>"

    __str__ = __repr__


class GradModeFunction:
    """A function decorated with `@torch.no_grad()` (`enable_grad`, `inference_mode`, `set_grad_enabled`):
    each call runs inside a fresh copy of the grad-mode context manager; binds as a method like a function."""

    __slots__ = ("func", "mode", "interp", "name")

    def __init__(self, func, mode, interp):
        self.func = func
        self.mode = mode  # the grad-mode object (or class) the function was decorated with
        self.interp = interp
        self.name = getattr(func, "name", "function")

    def __call__(self, *args, **kwargs):
        r = self.interp.call(self, list(args), kwargs)
        self.interp.check_data(r)
        return r

    def __repr__(self):
        return f"<function {self.name}>"

    __str__ = __repr__


class Partial:
    """`functools.partial(f, *args, **kwargs)`: calling it calls `f` through the interpreter."""

    __slots__ = ("func", "args", "keywords", "interp")

    def __init__(self, interp, func, args, keywords):
        self.interp = interp
        self.func = func
        self.args = args
        self.keywords = keywords

    def __call__(self, *args, **kwargs):
        return self.interp.call(self, list(args), kwargs)

    def __repr__(self):
        parts = [self.interp.repr_value(self.func)] + [self.interp.repr_value(a) for a in self.args]
        parts += [f"{k}={self.interp.repr_value(v)}" for k, v in self.keywords.items()]
        return f"functools.partial({', '.join(parts)})"

    __str__ = __repr__


class CachedFunction:
    """`functools.lru_cache(maxsize)(f)` / `functools.cache(f)`: results by arguments, at most `maxsize`
    of them (least recently used go first); every entry counts against the run's item budget."""

    __slots__ = ("func", "maxsize", "entries", "interp", "name", "hits", "misses")

    def __init__(self, interp, func, maxsize):
        self.interp = interp
        self.func = func
        self.maxsize = maxsize
        self.entries = collections.OrderedDict()
        self.name = getattr(func, "name", "function")
        self.hits = self.misses = 0

    def __call__(self, *args, **kwargs):
        return self.interp.call(self, list(args), kwargs)

    def cache_clear(self):
        self.entries.clear()
        self.hits = self.misses = 0

    def __repr__(self):
        return f"<functools._lru_cache_wrapper {self.name}>"

    __str__ = __repr__


# collections.namedtuple's documented API, public although its names start with '_' (no others: _field_defaults,
# _source... stay refused as every '_' attribute of a value the program did not define)
NAMEDTUPLE_PUBLIC = frozenset({"_fields", "_make", "_asdict", "_replace"})


class NamedTupleClass:
    """A class made by `collections.namedtuple`: its instances are `NamedTupleValue`s (real tuples)."""

    __slots__ = ("name", "fields", "defaults", "interp", "__weakref__")

    def __init__(self, interp, name, fields, defaults):
        self.interp = interp
        self.name = name
        self.fields = fields
        self.defaults = defaults  # values of the last len(defaults) fields

    def __call__(self, *args, **kwargs):
        return self.interp.new_namedtuple(self, args, kwargs)

    def __repr__(self):
        return f"<class '__main__.{self.name}'>"

    __str__ = __repr__


class NamedTupleValue(tuple):
    """An instance of a `namedtuple` class of the program: a tuple (numpy and the engine read it as one)
    whose class is `__dict__["_fg_cls"]`."""


NamedTupleValue.__name__ = NamedTupleValue.__qualname__ = "tuple"


# `object` written as a base (`class A(object, B)`): no base of its own, but it orders the MRO as in Python
OBJECT_BASE = type("object", (), {})


def base_name(b):
    return b.name if isinstance(b, UserClass) else getattr(b, "__name__", None) or getattr(b, "name", "?")


def c3_linearization(cls, bases):
    """Python's C3 method resolution order of a class with these bases (each ending in `object`), raising the
    TypeError CPython raises for a repeated base or an order no linearization can keep."""
    seen = set()
    for b in bases:
        if id(b) in seen:
            raise TypeError(f"duplicate base class {base_name(b)}")
        seen.add(id(b))
    seqs = [list(b.mro) + [OBJECT_BASE] if isinstance(b, UserClass) else [b] if b is OBJECT_BASE else [b, OBJECT_BASE]
            for b in bases]
    seqs.append(list(bases))
    result = [cls]
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return [c for c in result if c is not OBJECT_BASE]
        for s in seqs:
            head = s[0]
            if not any(head is c for t in seqs for c in t[1:]):
                break
        else:
            heads = list(dict.fromkeys(base_name(s[0]) for s in seqs))
            raise TypeError("Cannot create a consistent method resolution order (MRO) for bases " + ", ".join(heads))
        result.append(head)
        for s in seqs:
            if s[0] is head:
                del s[0]


class UserClass:
    __slots__ = ("name", "bases", "ns", "mro", "is_module", "is_dataset", "interp", "qualname", "doc",
                 "exc_base", "annotations", "dataclass_fields", "__weakref__")

    def __init__(self, name, bases, interp, module_base, dataset_base=None):
        self.name = self.qualname = name
        self.doc = None
        # the builtin exception class a program's exception class derives from (None: not an exception)
        self.exc_base = None
        for b in bases:
            base = b.pytype if type(b) is BuiltinType else b.exc_base if isinstance(b, UserClass) else None
            if base is not None:
                self.exc_base = base
                break
        self.bases = [b for b in bases if b is not OBJECT_BASE]
        self.ns = {}
        self.annotations = ()  # the names annotated in the class body, in order
        self.dataclass_fields = None  # @dataclass: its fields (sandbox/dataclasses_module.py)
        self.interp = interp
        self.mro = [c for c in c3_linearization(self, bases) if isinstance(c, UserClass)]
        self.is_module = any(b is module_base or (isinstance(b, UserClass) and b.is_module) for b in bases)
        self.is_dataset = dataset_base is not None and any(
            b is dataset_base or (isinstance(b, UserClass) and b.is_dataset) for b in bases)

    def lookup(self, name, start=0):
        for c in self.mro[start:]:
            if name in c.ns:
                return c, c.ns[name]
        return None, None

    def __call__(self, *args, **kwargs):
        return self.interp.instantiate(self, args, kwargs)

    def __repr__(self):
        return f"<class '__main__.{self.qualname}'>"

    __str__ = __repr__


class UserInstance(InstanceProtocol):
    """An instance of a program's plain class: its attributes; Python's protocols come from its class's dunders."""

    __slots__ = ("cls", "attrs", "__weakref__")

    def __init__(self, cls):
        self.cls = cls
        self.attrs = {}

    def __repr__(self):  # CPython's, with the run's stand-in address
        return f"<__main__.{self.cls.qualname} object at {self.cls.interp.addresses.of(self)}>"

    __str__ = __repr__

    def _get_name(self):  # the name the engine's messages give the type (`engine.boundary.type_name`)
        return self.cls.name


class SuperProxy:
    __slots__ = ("cls", "obj")

    def __init__(self, cls, obj):
        self.cls = cls
        self.obj = obj

    def __repr__(self):
        return f"<super: <class '{self.cls.name}'>>"


class ModuleProxy:
    """What `import torch` (or nn, F, optim, math) binds: a fixed, allowlisted name table."""

    __slots__ = ("name", "attrs")

    def __init__(self, name, attrs):
        self.name = name
        self.attrs = attrs

    def __repr__(self):
        return f"<module '{self.name}'>"

    __str__ = __repr__


class RandomObject:
    """What `random.Random(seed)` makes: a generator of its own with the `random` module's functions."""

    __slots__ = ("attrs",)

    def __init__(self, attrs):
        self.attrs = attrs

    def __repr__(self):
        return "<random.Random object>"

    __str__ = __repr__


class NumpyRandomState:
    """What `np.random.RandomState(seed)` makes: a MT19937 generator of its own with np.random's draws."""

    __slots__ = ("attrs",)

    def __init__(self, attrs):
        self.attrs = attrs

    def __repr__(self):
        return "RandomState(MT19937)"

    __str__ = __repr__


class Builtin:
    """A builtin function of the sandbox (print, len, ...)."""

    __slots__ = ("name", "fn", "interp")

    def __init__(self, name, fn, interp=None):
        self.name = name
        self.fn = _named(fn, name)
        self.interp = interp

    def __call__(self, *args, **kwargs):
        # called by engine code or a builtin (the interpreter calls .fn): a step, as a user call is
        if self.interp is not None:
            self.interp.tick()
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<built-in function {self.name}>"

    __str__ = __repr__


class BuiltinType(Builtin):
    """`int`, `float`, `list`, ...: callable (through a checked constructor) and usable in isinstance."""

    __slots__ = ("pytype",)

    def __init__(self, name, pytype, fn, interp=None):
        super().__init__(name, fn, interp)
        self.pytype = pytype

    def __repr__(self):
        return f"<class '{self.name}'>"

    __str__ = __repr__


class BuiltinClass(BuiltinType):
    """A standard-library class with functions of its own a program calls on it (`datetime.now()`): `attrs`."""

    __slots__ = ("attrs",)

    def __init__(self, name, pytype, fn, interp=None, attrs=None):
        super().__init__(name, pytype, fn, interp)
        self.attrs = attrs or {}


def exception_constructor(cls):
    """`cls(*args)` as a program calls an exception class (a builtin one, torch.linalg.LinAlgError): positional
    arguments only, as Python's."""
    def make(*args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}() takes no keyword arguments")
        return cls(*args)
    return make


class TypeView:
    """What `type(x)` gives for values whose class is not otherwise reachable: a name to print and compare."""

    __slots__ = ("name", "cls")

    def __init__(self, name, cls):
        self.name = name
        self.cls = cls

    def __eq__(self, other):
        return type(other) is TypeView and other.cls is self.cls

    def __hash__(self):
        return hash(self.cls)

    def __repr__(self):
        return f"<class '{self.name}'>"

    __str__ = __repr__


class Shown:
    """A value pre-rendered by the sandbox, for `%` formatting of containers and interpreter objects."""

    __slots__ = ("s", "r")

    def __init__(self, s, r):
        self.s = s
        self.r = r

    def __str__(self):
        return self.s

    def __repr__(self):
        return self.r


class ShownTensor(Shown):
    """A tensor for `%`: `%s`/`%r` show the sandbox's text of it, `%d`/`%f`/`%x` its number."""

    __slots__ = ("t",)

    def __init__(self, s, r, t):
        super().__init__(s, r)
        self.t = t

    def __float__(self):
        return float(self.t)

    def __int__(self):
        return int(self.t)

    def __index__(self):
        return self.t.__index__()


SUPER = Builtin("super", None)

# The exception classes a program can name, raise and catch (Python's own; engine errors are these too).
EXCEPTION_CLASSES = (
    BaseException, Exception, ArithmeticError, LookupError, ValueError, TypeError, RuntimeError, KeyError,
    IndexError, ZeroDivisionError, OverflowError, FloatingPointError, StopIteration, AssertionError,
    NotImplementedError, AttributeError, NameError, UnboundLocalError, ImportError, ModuleNotFoundError,
    RecursionError, UnicodeError, Warning, UserWarning, DeprecationWarning, RuntimeWarning,
    SystemExit, KeyboardInterrupt,  # sys.exit() ends a run; `except KeyboardInterrupt:` around a loop never fires
) + (OSError, FileNotFoundError, FileExistsError, IsADirectoryError)  # the run's files (files.py)
EXCEPTIONS_BY_NAME = {c.__name__: c for c in EXCEPTION_CLASSES}
_USER_EXCEPTION_CLASSES: dict = {}


def user_exception_class(base):
    """The one real subclass of the builtin exception `base` whose instances stand for instances of a
    program's exception classes deriving from it (`__dict__["_fg_cls"]` is the program's class)."""
    cls = _USER_EXCEPTION_CLASSES.get(base)
    if cls is None:
        cls = type(base.__name__, (base,), {"__module__": "builtins"})
        _USER_EXCEPTION_CLASSES[base] = cls
        USER_EXCEPTION_TYPES.add(cls)
    return cls


USER_EXCEPTION_TYPES: set = set()


def _call_method(f, obj, args, kwargs):
    """A class attribute other than a plain function, called as a method of `obj` by engine code."""
    t = type(f)
    if t is GradModeFunction:
        return f(obj, *args, **kwargs)
    if t is ClassMethod:
        return BoundMethod(f.func, obj.__dict__["_fg_cls"])(*args, **kwargs)
    return f(*args, **kwargs)  # a staticmethod, a builtin or an engine function: not bound

_USER_MODULE_CLASSES: dict = {}


def user_module_class(module_base):
    """The one real class whose instances stand for instances of user nn.Module subclasses."""
    cls = _USER_MODULE_CLASSES.get(module_base)
    if cls is not None:
        return cls

    class UserModule(module_base):
        def forward(self, *args, **kwargs):
            ucls = self.__dict__["_fg_cls"]
            _, f = ucls.lookup("forward")
            if f is None:
                raise NotImplementedError(f'Module [{ucls.name}] is missing the required "forward" function')
            if not isinstance(f, UserFunction):
                return _call_method(f, self, args, kwargs)
            r = f.interp.call_user(f, (self, *args), kwargs)
            f.interp.check_data(r)  # returned to engine code (Module.__call__, Sequential)
            return r

        def _get_name(self):
            return self.__dict__["_fg_cls"].name

        def __repr__(self):
            d = self.__dict__
            ucls = d["_fg_cls"]
            if ucls.lookup("__repr__")[0] is not None:  # the program's own (also for a submodule in its parent's)
                r = ucls.interp.dunder(self, "__repr__", ())
                if type(r) is not str:
                    raise TypeError(f"__repr__ returned non-string (type {ucls.interp.type_name(r)})")
                return r
            if "_modules" not in d:
                return f"{d['_fg_cls'].name}()"
            return module_base.__repr__(self)

    UserModule.__name__ = UserModule.__qualname__ = "Module"
    _USER_MODULE_CLASSES[module_base] = UserModule
    return UserModule


_USER_DATASET_CLASSES: dict = {}


def user_dataset_class(dataset_base):
    """The one real class whose instances stand for instances of user `torch.utils.data.Dataset`
    subclasses: `len()` and indexing (by the engine's DataLoader, random_split, Subset) run the program's
    `__len__` / `__getitem__` through the interpreter, counted like any call."""
    cls = _USER_DATASET_CLASSES.get(dataset_base)
    if cls is not None:
        return cls

    class UserDataset(dataset_base):
        def _fg_method(self, name):
            ucls = self.__dict__["_fg_cls"]
            _, f = ucls.lookup(name)
            return ucls, f

        def __len__(self):
            ucls, f = self._fg_method("__len__")
            if f is None:
                raise TypeError(f"object of type '{ucls.name}' has no len()")
            if not isinstance(f, UserFunction):
                return _call_method(f, self, (), {})
            return f.interp.call_user(f, (self,), {})

        def __getitem__(self, index):
            ucls, f = self._fg_method("__getitem__")
            if f is None:
                raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")
            if not isinstance(f, UserFunction):
                return _call_method(f, self, (index,), {})
            r = f.interp.call_user(f, (self, index), {})
            f.interp.check_data(r)  # returned to engine code (the DataLoader's collate)
            return r

        def __iter__(self):  # Python's sequence iteration, ended by the program's own IndexError too
            return sequence_items(self.__dict__["_fg_cls"].interp, self.__getitem__)

        def __array__(self, *args, **kwargs):
            # numpy would otherwise read it as a sequence: allocate len() items, then index each one
            raise TypeError(f"a {self.__dict__['_fg_cls'].name} dataset cannot be converted to an array or tensor "
                            "(index it, or iterate a DataLoader over it)")

        def __repr__(self):
            return f"<{self.__dict__['_fg_cls'].name} object>"

        __str__ = __repr__

    UserDataset.__name__ = UserDataset.__qualname__ = "Dataset"
    _USER_DATASET_CLASSES[dataset_base] = UserDataset
    return UserDataset


# Python's own error messages name a value's class ("unsupported operand type(s) for +: 'X' and 'int'"):
# give the interpreter's classes the names a program should see instead of their implementation names.
for _cls, _shown_name in ((UserInstance, "object"), (UserFunction, "function"), (BoundMethod, "method"),
                          (UserClass, "type"), (ModuleProxy, "module"), (SuperProxy, "super"),
                          (BuiltinType, "type"), (BuiltinClass, "type"), (Builtin, "builtin_function_or_method"),
                          (TypeView, "type"),
                          (Shown, "object"), (ShownTensor, "Tensor"), (StaticMethod, "staticmethod"),
                          (ClassMethod, "classmethod"), (Property, "property"), (GradModeFunction, "function"),
                          (Partial, "partial"), (CachedFunction, "_lru_cache_wrapper"), (NamedTupleClass, "type"),
                          (RandomObject, "Random"), (NumpyRandomState, "RandomState")):
    _cls.__name__ = _cls.__qualname__ = _shown_name


# ---------------------------------------------------------------- categories of values the interpreter dispatches on
MISSING = object()  # "no value" where None is a value
NoneType = type(None)
PRIMITIVES = frozenset({int, float, bool, str, NoneType, complex})
SCALARS = frozenset({int, float, bool, NoneType, complex, slice, type(Ellipsis)})
CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
SEQUENCES = frozenset({str, list, tuple, bytes})
INTS = frozenset({int, bool})
SUBSCRIPTABLE = frozenset({list, tuple, str, dict, range, bytes})
SIZED = (list, tuple, str, dict, set, frozenset)
INTERP_TYPES = frozenset({UserInstance, UserClass, UserFunction, BoundMethod, Builtin, BuiltinType, BuiltinClass,
                          ModuleProxy,
                          SuperProxy, TypeView, StaticMethod, ClassMethod, Property, GradModeFunction, Partial,
                          CachedFunction, NamedTupleClass, RandomObject, NumpyRandomState})
# what a class attribute turns into when read: functions bind, the decorators' objects do their part
DESCRIPTORS = frozenset({StaticMethod, ClassMethod, Property, GradModeFunction, CachedFunction})
# interpreter objects a call unwraps (`Calls._call_wrapped`): each call through one is a call level
WRAPPERS = frozenset({StaticMethod, GradModeFunction, Partial, CachedFunction})
