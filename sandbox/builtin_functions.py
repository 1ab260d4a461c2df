"""The builtins a program sees (`print len range ... super`) and its `random` module.

They are the sandbox's own functions, not Python's: each one bounds what it materialises (`take`,
`alloc`), renders text through the interpreter's formatting, and refuses interpreter objects where
Python would reach into them. `make_builtins` builds one table per run; the engine's bare names
(`torch nn F optim math`, common functions and classes) come from the Backend.
"""

from __future__ import annotations

import ast
import random

from .budgets import MAX_ROUND_DIGITS, NO_NODE
from .errors import ProgramError, limit_error
from .files import RunFile, open_function
from .objects import (
    EXCEPTION_CLASSES,
    INTS,
    MISSING,
    SUPER,
    USER_EXCEPTION_TYPES,
    BoundMethod,
    Builtin,
    BuiltinClass,
    BuiltinType,
    ClassMethod,
    ModuleProxy,
    NamedTupleClass,
    NamedTupleValue,
    Property,
    RandomObject,
    StaticMethod,
    TypeView,
    UserClass,
    UserFunction,
    UserInstance,
    exception_constructor,
)
from .stdlib_tools import StdStream, exit_function

# Python builtins a program does not get (a NameError says so, rather than "not defined").
FORBIDDEN_BUILTINS = frozenset("""eval exec compile setattr delattr globals locals vars
dir input breakpoint help memoryview object hash __import__ __build_class__ issubclass
bytearray""".split())


def make_builtins(interp) -> dict:
    """The builtin names of one run, bound to its interpreter `interp`."""
    take = interp.take
    B = interp.B

    to_str = interp.to_str
    emit = interp.emit

    def _print(*args, sep=" ", end="\n", file=None, flush=False):
        if len(args) == 1 and file is None and type(end) is str and (sep is None or type(sep) is str):  # one value
            s = args[0]
            emit((s if type(s) is str else to_str(s)) + end)
            return
        if type(file) is StdStream:  # sys.stdout prints; sys.stderr is not the program's output
            if not file.to_stdout:
                return
            file = None
        if file is not None and type(file) is not RunFile:  # the run's own open files only (files.py)
            raise TypeError("print(file=...) is not supported in flowgrad programs")
        if sep is None:
            sep = " "
        if end is None:
            end = "\n"
        for what, value in (("sep", sep), ("end", end)):
            if type(value) is not str:  # (CPython's message)
                raise TypeError(f"{what} must be None or a string, not {interp.type_name(value)}")
        parts = []
        total = len(end)
        room = interp.max_out  # one print may not be longer than the whole printed output (Budgets.emit)
        for a in args:
            s = interp.to_str(a)
            total += len(s) + len(sep)
            parts.append(s)
            if total > room and file is None:  # more characters than that: emit what fits, then fail
                break
        if file is not None:
            file.write(sep.join(parts) + end)
            return
        interp.emit(sep.join(parts) + end)

    def _len(x):
        if isinstance(x, (UserClass, UserFunction, BoundMethod, ModuleProxy, Builtin)):
            raise TypeError(f"object of type '{interp.type_name(x)}' has no len()")
        return len(x)

    def _sum(iterable, start=0):
        items = take(iterable)
        total = start
        for i, x in enumerate(items):
            total = interp.binop(ast.Add, total, x, NO_NODE)
            if not (i & 1023):
                interp.check_time()
        return total

    def _minmax(fn, name):
        def inner(*args, **kwargs):
            if not args:
                raise TypeError(f"{name} expected at least 1 argument, got 0")
            if len(args) == 1:
                return fn(take(args[0]), **kwargs)
            return fn(*args, **kwargs)
        return inner

    def _collect(pytype, what):
        """list(), tuple(), set(): the items are taken (bounded) and counted as a new object."""
        def make(iterable=()):
            items = take(iterable)
            interp.alloc(len(items), what)
            return pytype(items)
        return make

    def _sorted(iterable, key=None, reverse=False):
        items = take(iterable)
        interp.alloc(len(items), "list")
        return sorted(items, key=key, reverse=reverse)

    def _round(number, ndigits=None):
        ndigits = interp.as_count(ndigits)
        if ndigits is not None and type(ndigits) in INTS and abs(ndigits) > MAX_ROUND_DIGITS:
            raise limit_error(f"round() ndigits {ndigits:,} is too large", None, MAX_ROUND_DIGITS)
        return round(number) if ndigits is None else round(number, ndigits)

    def _int(x=0, base=MISSING):
        r = int(x) if base is MISSING else int(x, base)
        if type(r) is int and r.bit_length() > interp.max_bits:
            raise interp.int_limit(r.bit_length())
        return r

    def _str(*args):
        if not args:
            return ""
        if len(args) > 1:
            raise TypeError("str() with an encoding is not supported in flowgrad programs")
        return interp.to_str(args[0])

    def _dict(*args, **kwargs):
        if len(args) > 1:
            raise TypeError(f"dict expected at most 1 argument, got {len(args)}")
        d = {}
        if args:
            a = args[0]
            d = dict(a) if isinstance(a, dict) else dict(take(a))  # (dict subclasses: OrderedDict, defaultdict...)
        d.update(kwargs)
        interp.alloc(len(d), "dict")
        return d

    def _isinstance(obj, classinfo):
        if type(classinfo) is tuple:
            return any(_isinstance(obj, c) for c in classinfo)
        if type(classinfo) is BuiltinType or type(classinfo) is BuiltinClass:
            return isinstance(obj, classinfo.pytype)
        if type(classinfo) is UserClass:
            t = type(obj)
            if t is UserInstance:
                return classinfo in obj.cls.mro
            if isinstance(obj, B.UserModule) or t is B.UserDataset or t in USER_EXCEPTION_TYPES:
                return classinfo in obj.__dict__["_fg_cls"].mro
            return False
        if isinstance(classinfo, type) and type(classinfo) is type:
            return isinstance(obj, classinfo)
        if type(classinfo) is NamedTupleClass:
            return type(obj) is NamedTupleValue and obj.__dict__["_fg_cls"] is classinfo
        if type(classinfo) is TypeView:
            return isinstance(obj, classinfo.cls)
        if type(classinfo) is B.LegacyTensorType:  # torch.FloatTensor...: the engine's check of the tensor's dtype
            return isinstance(obj, classinfo)
        raise TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union")

    def _reversed(seq):
        if type(seq) not in (list, tuple, str, range, dict) and not isinstance(seq, (B.Tensor, B.Module)):
            seq = take(seq)
        return reversed(seq)

    def _next(it, *default):
        if type(it) is UserInstance:
            if it.cls.lookup("__next__")[0] is None:
                raise TypeError(f"'{it.cls.name}' object is not an iterator")
        elif not hasattr(type(it), "__next__"):
            raise TypeError(f"'{interp.type_name(it)}' object is not an iterator")
        return next(it, *default)

    def _callable(x):
        if type(x) is UserInstance:
            return x.cls.lookup("__call__")[0] is not None
        return callable(x)

    def _getattr(obj, name, *default):
        if len(default) > 1:
            raise TypeError(f"getattr expected at most 3 arguments, got {2 + len(default)}")
        if not default:
            return interp.read_attribute(obj, name)
        try:
            return interp.read_attribute(obj, name)
        except AttributeError:
            return default[0]
        except ProgramError as pe:  # a property getter's AttributeError
            if interp.catchable(pe) and isinstance(interp.exception_value(pe), AttributeError):
                return default[0]
            raise

    def _type(*args):
        if len(args) != 1:
            raise TypeError("type() takes 1 argument in flowgrad programs")
        return interp.type_of(args[0])

    def _pow(base, exp, mod=None):
        if mod is None:  # the operator's checks on the result's size
            return interp.binop(ast.Pow, base, exp, NO_NODE)
        return pow(base, exp, mod)  # (as big as `mod` at most)

    def _first(iterable, want):
        """any()/all(): stop at the first item that decides, as Python's (lazy generators may be endless)."""
        n = 0
        for x in it(iterable):
            if bool(x) is want:
                return True
            n += 1
            if not (n & 1023):
                if n > interp.max_seq:
                    raise interp._seq_limit(n, "iterable")
                interp.check_time()
        return False

    def _any(iterable):
        return _first(iterable, True)

    def _all(iterable):
        return not _first(iterable, False)

    def _digits(fn):
        """bin / hex / oct: an int's digits, their length counted as any string's (ints are bounded by max_int_bits)."""
        def digits(x):
            text = fn(x)
            interp.alloc(len(text), "string")
            return text
        return digits

    def _id(obj):
        """The stand-in address every repr of `obj` shows, as an int (CPython's id is the address its repr shows):
        stable while the object lives, never the server's memory."""
        number = interp.addresses.number(obj)
        if number is None:
            raise limit_error("id() of more distinct objects than a run remembers", None,
                              f"{interp.addresses.MAX_REMEMBERED:,} objects")
        return number

    it = interp.iterate
    functions = {
        "print": _print, "len": _len, "range": range, "abs": abs, "round": _round, "sum": _sum,
        "enumerate": lambda iterable, start=0: enumerate(it(iterable), start),
        "zip": lambda *iterables, strict=False: zip(*[it(i) for i in iterables], strict=strict),
        "min": _minmax(min, "min"), "max": _minmax(max, "max"), "isinstance": _isinstance, "sorted": _sorted,
        "reversed": _reversed, "any": _any, "all": _all,
        "repr": lambda x: interp.repr_value(x), "format": lambda value, spec="": interp.format_value(value, spec),
        "map": lambda fn, *iterables: map(fn, *[it(i) for i in iterables]),
        "filter": lambda fn, iterable: filter(fn, it(iterable)), "iter": lambda x: it(x), "next": _next,
        "callable": _callable, "type": _type, "getattr": _getattr, "hasattr": interp.has_attribute,
        "divmod": lambda a, b: divmod(a, b), "pow": _pow, "chr": lambda i: chr(i), "ord": lambda c: ord(c),
        "bin": _digits(bin), "hex": _digits(hex), "oct": _digits(oct), "id": _id,
    }
    b = {name: Builtin(name, fn, interp) for name, fn in functions.items()}
    types = {"float": (float, lambda x=0.0: float(x)), "int": (int, _int), "bool": (bool, lambda x=False: bool(x)),
             "str": (str, _str), "list": (list, _collect(list, "list")), "tuple": (tuple, _collect(tuple, "tuple")),
             "dict": (dict, _dict), "set": (set, _collect(set, "set")),
             "frozenset": (frozenset, _collect(frozenset, "frozenset"))}
    b.update((name, BuiltinType(name, pytype, fn, interp)) for name, (pytype, fn) in types.items())
    b.update((name, BuiltinType(name, pytype, fn, interp)) for name, (pytype, fn) in _decorator_types(interp).items())
    b.update((c.__name__, BuiltinType(c.__name__, c, exception_constructor(c), interp)) for c in EXCEPTION_CLASSES)
    b["super"] = SUPER
    b["open"] = Builtin("open", open_function(interp), interp)  # the run's own files only (files.py)
    b["exit"], b["quit"] = exit_function(interp, "exit"), exit_function(interp, "quit")  # (the site module's)
    b["NotImplemented"] = NotImplemented
    b["__name__"] = "__main__"
    b.update(B.bare)
    return b


# what one `random.Random()` counts against the run's item budget: its state and functions, about 5 kB
RANDOM_ITEMS = 640


def random_module(interp) -> ModuleProxy:
    """Python's `random`, as a per-run generator (seeded the same for every run); `random.Random(seed)`
    makes another one (a `RandomObject` with the same functions)."""
    attrs = _random_functions(interp, random.Random(0))

    def make(x=None):
        if not (x is None or type(x) in (int, float, str, bool)):
            raise TypeError("random.Random() takes an int, float or str")
        interp.alloc(RANDOM_ITEMS, "Random")
        return RandomObject(_random_functions(interp, random.Random(0 if x is None else x)))

    attrs["Random"] = BuiltinType("Random", RandomObject, make, interp)
    return ModuleProxy("random", attrs)


def _random_functions(interp, rng) -> dict:
    take = interp.take

    def sample(population, k):
        k = interp.as_count(k)
        if type(k) in INTS:
            interp.alloc(k)
        return rng.sample(population if type(population) in (range, list, tuple) else take(population), k)

    def shuffle(xs):
        if type(xs) is not list:
            raise TypeError("shuffle() needs a list")
        rng.shuffle(xs)

    def seed(a=None):
        if a is None or type(a) in (int, float, str, bool):
            rng.seed(0 if a is None else a)
        else:
            raise TypeError("random.seed() takes an int, float or str")

    def choices(population, weights=None, *, cum_weights=None, k=1):
        k = interp.as_count(k)
        if type(k) in INTS:
            interp.alloc(k)
        pop = population if type(population) in (range, list, tuple, str) else take(population)
        return rng.choices(pop, None if weights is None else take(weights),
                           cum_weights=None if cum_weights is None else take(cum_weights), k=k)

    def choice(seq):
        return rng.choice(seq if type(seq) in (range, list, tuple, str) else take(seq))

    attrs = {name: Builtin(name, fn, interp) for name, fn in (
        ("random", rng.random), ("uniform", rng.uniform), ("randint", rng.randint), ("gauss", rng.gauss),
        ("normalvariate", rng.normalvariate), ("randrange", rng.randrange), ("choice", choice),
        ("shuffle", shuffle), ("sample", sample), ("seed", seed), ("choices", choices),
        ("expovariate", rng.expovariate), ("triangular", rng.triangular), ("betavariate", rng.betavariate))}
    return attrs


def _decorator_types(interp) -> dict:
    """`staticmethod`, `classmethod`, `property`: the interpreter's own objects (`attributes` reads them)."""
    def _property(fget=None, fset=None, fdel=None, doc=None):
        if fdel is not None:
            raise TypeError("property(fdel=...) is not supported in flowgrad programs")
        interp.has_properties = True
        return Property(fget, fset, doc)

    return {"staticmethod": (StaticMethod, lambda f: StaticMethod(f, interp)),
            "classmethod": (ClassMethod, lambda f: ClassMethod(f, interp)),
            "property": (Property, _property)}
