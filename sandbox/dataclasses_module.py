"""`dataclasses` for the plain uses: `@dataclass` (and `@dataclass(init=, repr=, eq=)`) on a plain class of the
program, `field(default=, default_factory=, init=, repr=, compare=)`, `asdict`, `astuple` and `is_dataclass`,
with CPython's generated `__init__`, `__repr__` and `__eq__` and its error messages.

The generated methods are `DataclassMethod`s (sandbox builtins that bind to the instance like the program's own
functions), never code made from program text. frozen, order, slots, kw_only and the like are refused.
"""
from __future__ import annotations

from .objects import Builtin, ModuleProxy, UserClass, UserInstance

_MUTABLE_DEFAULTS = (list, dict, set)
_MISSING = object()
_DATACLASS_OPTIONS = ("init", "repr", "eq")
_REFUSED_OPTIONS = ("order", "unsafe_hash", "frozen", "match_args", "kw_only", "slots", "weakref_slot")


class DataclassMethod(Builtin):
    """A method @dataclass generates: read through an instance it binds to it, as a program function does."""

    __slots__ = ()


class Field:
    """What `dataclasses.field(...)` returns, until @dataclass reads it."""

    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare")

    def __init__(self, default, default_factory, init, repr, compare):  # noqa: A002 — dataclasses' names
        self.name = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.compare = init, repr, compare

    def __repr__(self):
        return f"Field(name={self.name!r})"

    __str__ = __repr__


def dataclass_fields(cls):
    """The fields of a dataclass, its bases' first (as CPython collects them along the MRO)."""
    out = {}
    for c in reversed(cls.mro):
        for f in c.dataclass_fields or ():
            out[f.name] = f
    return list(out.values())


def dataclasses_module(interp) -> ModuleProxy:
    def show(v):
        return interp.builtins["repr"].fn(v)

    def process(cls, init, repr, eq):  # noqa: A002
        if type(cls) is not UserClass:
            raise TypeError("dataclass() should be called on a class")
        if cls.is_module or cls.is_dataset or cls.exc_base is not None:
            raise NotImplementedError("@dataclass works on plain classes in flowgrad programs (not on nn.Module, "
                                      "Dataset or exception classes)")
        own = []
        for name in cls.annotations:
            v = cls.ns.get(name, _MISSING)
            f = v if type(v) is Field else Field(v, _MISSING, True, True, True)
            f.name = name
            if f.default is not _MISSING and f.default_factory is not _MISSING:
                raise ValueError("cannot specify both default and default_factory")
            if type(f.default) in _MUTABLE_DEFAULTS:
                raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use "
                                 "default_factory")
            if type(v) is Field:  # the class attribute becomes the default, or goes (CPython's)
                if f.default is _MISSING:
                    del cls.ns[name]
                else:
                    cls.ns[name] = f.default
            own.append(f)
        cls.dataclass_fields = tuple(own)
        fields = dataclass_fields(cls)
        seen_default = False
        for f in fields:
            if not f.init:
                continue
            if f.default is _MISSING and f.default_factory is _MISSING:
                if seen_default:
                    raise TypeError(f"non-default argument '{f.name}' follows default argument")
            else:
                seen_default = True
        qual = cls.qualname
        if init:
            cls.ns["__init__"] = DataclassMethod("__init__", lambda obj, *a, **k: make_init(obj, fields, qual, a, k),
                                                 interp)
        if repr and "__repr__" not in cls.ns:
            cls.ns["__repr__"] = DataclassMethod("__repr__", lambda obj: qual + "(" + ", ".join(
                f"{f.name}={show(interp.get_attribute(obj, f.name))}" for f in fields if f.repr) + ")", interp)
        if eq and "__eq__" not in cls.ns:
            def equal(obj, other):
                if type(other) is not UserInstance or other.cls is not obj.cls:
                    return NotImplemented
                mine = tuple(interp.get_attribute(obj, f.name) for f in fields if f.compare)
                theirs = tuple(interp.get_attribute(other, f.name) for f in fields if f.compare)
                return mine == theirs
            cls.ns["__eq__"] = DataclassMethod("__eq__", equal, interp)
        return cls

    def make_init(obj, fields, qual, args, kwargs):
        params = [f for f in fields if f.init]
        if len(args) > len(params):
            required = sum(1 for f in params if f.default is _MISSING and f.default_factory is _MISSING)
            takes = (f"{len(params) + 1} positional argument{'s' if params else ''}" if required == len(params)
                     else f"from {required + 1} to {len(params) + 1} positional arguments")
            raise TypeError(f"{qual}.__init__() takes {takes} but {len(args) + 1} were given")
        values = {f.name: a for f, a in zip(params, args)}
        names = {f.name for f in params}
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{qual}.__init__() got an unexpected keyword argument '{k}'")
            if k in values:
                raise TypeError(f"{qual}.__init__() got multiple values for argument '{k}'")
            values[k] = v
        missing = [f"'{f.name}'" for f in params if f.name not in values and f.default is _MISSING
                   and f.default_factory is _MISSING]
        if missing:
            listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
            raise TypeError(f"{qual}.__init__() missing {len(missing)} required positional argument"
                            f"{'s' if len(missing) != 1 else ''}: {listed}")
        for f in fields:
            if f.name in values:
                v = values[f.name]
            elif f.default_factory is not _MISSING:
                v = interp.call(f.default_factory, [], {})
            elif f.default is not _MISSING:
                v = f.default
            else:
                continue  # init=False without a default: no attribute, as CPython
            interp.set_attribute(obj, f.name, v)
        _, post = obj.cls.lookup("__post_init__")
        if post is not None:
            interp.call(interp.class_attribute(post, obj, obj.cls, "__post_init__"), [], {})

    def dataclass(cls=None, /, **options):
        for k in options:
            if k in _REFUSED_OPTIONS:
                if options[k]:
                    raise NotImplementedError(f"dataclass({k}=True) is not available in flowgrad programs")
            elif k not in _DATACLASS_OPTIONS:
                raise TypeError(f"dataclass() got an unexpected keyword argument '{k}'")
        settings = {k: bool(options.get(k, True)) for k in _DATACLASS_OPTIONS}
        if cls is None:
            return Builtin("dataclass", lambda c: process(c, **settings), interp)
        return process(cls, **settings)

    def field(*, default=_MISSING, default_factory=_MISSING, init=True, repr=True, compare=True):  # noqa: A002
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        return Field(default, default_factory, bool(init), bool(repr), bool(compare))

    def instance_fields(obj, what):
        cls = obj.cls if type(obj) is UserInstance else obj
        if type(cls) is not UserClass or cls.dataclass_fields is None:
            raise TypeError(f"{what}() should be called on dataclass instances")
        return dataclass_fields(cls)

    def convert(v, container):
        if type(v) is UserInstance and v.cls.dataclass_fields is not None:
            return container(v)
        if type(v) in (list, tuple):
            interp.alloc(len(v), "list")
            return type(v)(convert(x, container) for x in v)
        if type(v) is dict:
            interp.alloc(2 * len(v), "dict")
            return {convert(k, container): convert(x, container) for k, x in v.items()}
        return v

    def asdict(obj):
        fields = instance_fields(obj, "asdict")
        if type(obj) is not UserInstance:
            raise TypeError("asdict() should be called on dataclass instances")
        values = [interp.get_attribute(obj, f.name) for f in fields]
        interp.check_data(values)  # the copies it makes, counted before any is made (a list repeated counts each time)
        return {f.name: convert(v, asdict) for f, v in zip(fields, values)}

    def astuple(obj):
        fields = instance_fields(obj, "astuple")
        if type(obj) is not UserInstance:
            raise TypeError("astuple() should be called on dataclass instances")
        values = [interp.get_attribute(obj, f.name) for f in fields]
        interp.check_data(values)
        return tuple(convert(v, astuple) for v in values)

    def is_dataclass(obj):
        cls = obj.cls if type(obj) is UserInstance else obj
        return type(cls) is UserClass and cls.dataclass_fields is not None

    fns = {"dataclass": dataclass, "field": field, "asdict": asdict, "astuple": astuple, "is_dataclass": is_dataclass}
    return ModuleProxy("dataclasses", {n: Builtin(n, f, interp) for n, f in fns.items()})
