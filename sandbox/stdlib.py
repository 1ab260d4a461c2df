"""The parts of Python's standard library a program can import, built per run: `time`, `collections`,
`functools`, `itertools` and the bounded functions of `math` (`random` is in `builtin_functions`).

Each is a `ModuleProxy` of the sandbox's own functions (`Builtin`s), never the real module: what they
materialise is bounded (`take`, `alloc`), everything they call back goes through the interpreter
(`Stdlib.callback`: steps, and the checks on engine calls), and Python's C helpers that would copy an
unbounded iterable (`itertools.product`, `permutations`, `deque(...)`) get a bounded list instead.
"""

from __future__ import annotations

import ast
import collections
import functools
import itertools
import keyword
import math
import time
import weakref

from .budgets import NO_NODE
from .copy_module import copy_module
from .dataclasses_module import dataclasses_module
from .errors import limit_error
from .objects import (
    INTERP_TYPES,
    INTS,
    NAMEDTUPLE_PUBLIC,
    Builtin,
    BuiltinType,
    CachedFunction,
    ModuleProxy,
    NamedTupleClass,
    NamedTupleValue,
    Partial,
)
from .stdlib_datetime import datetime_module
from .stdlib_inspect import inspect_module
from .stdlib_logging import logging_module
from .stdlib_re import re_module
from .stdlib_text import glob_module, os_modules, statistics_module, string_module, unicodedata_module
from .stdlib_tools import (
    argparse_module,
    contextlib_module,
    future_module,
    json_module,
    sys_module,
    tqdm_module,
    typing_module,
    warnings_module,
)

# The collections types a program can make (and index, assign items of, print like Python).
COLLECTION_TYPES = (collections.OrderedDict, collections.defaultdict, collections.Counter, collections.deque)


class Stdlib:
    """Mixed into the Interpreter: the standard-library modules of a run, made on first import."""

    def stdlib_module(self, name):
        mods = self._stdlib
        mod = mods.get(name)
        if mod is None:
            make = _MAKERS.get(name)
            if make is None:
                return None
            mod = mods[name] = make(self)
        return mod

    def own(self, obj):
        """A collection the program made (or a module's state_dict(), made for it): its items can be set and its
        methods called. The engine's own OrderedDicts and defaultdicts (an optimizer's state) keep the narrower rule
        of dict subclasses: no `d[k] = v`, no `update`. Held weakly where the type allows (a loop calling
        state_dict() each step keeps none of them alive), else for the run."""
        key, table = id(obj), self.own_collections
        try:
            table[key] = weakref.ref(obj, lambda _: table.pop(key, None))
        except TypeError:  # (defaultdict and deque take no weak references)
            table[key] = obj
        return obj

    def owns(self, obj) -> bool:
        entry = self.own_collections.get(id(obj))
        return entry is not None and (entry is obj or type(entry) is weakref.ref and entry() is obj)

    def callback(self, fn):
        """A function the program handed to a C helper (`accumulate(xs, f)`, `defaultdict(f)`): called
        through the interpreter, so each call is a step and engine calls get their checks."""
        if type(fn) in INTERP_TYPES:
            return fn  # calling it already goes through the interpreter
        return Builtin(getattr(fn, "__name__", "function"), lambda *a, **k: self.call(fn, list(a), k), self)

    def make_namedtuple(self, typename, field_names, *, rename=False, defaults=None, module=None):
        if type(typename) is not str:
            raise TypeError("namedtuple() typename must be a string")
        if type(field_names) is str:
            field_names = field_names.replace(",", " ").split()
        fields = tuple(self.take(field_names))
        self.alloc(len(fields), "namedtuple")
        seen = set()
        for name in (typename, *fields):
            if type(name) is not str:
                raise TypeError("Type names and field names must be strings")
            if not name.isidentifier():
                raise ValueError(f"Type names and field names must be valid identifiers: {name[:100]!r}")
            if keyword.iskeyword(name):
                raise ValueError(f"Type names and field names cannot be a keyword: {name!r}")
        for name in fields:
            if name.startswith("_"):
                raise ValueError(f"Field names cannot start with an underscore: {name[:100]!r}")
            if name in seen:
                raise ValueError(f"Encountered duplicate field name: {name!r}")
            seen.add(name)
        defaults = () if defaults is None else tuple(self.take(defaults))
        if len(defaults) > len(fields):
            raise TypeError("Got more default values than field names")
        return NamedTupleClass(self, typename, fields, defaults)

    def new_namedtuple(self, cls, args, kwargs):
        fields = cls.fields
        n = len(fields)
        if len(args) > n:
            raise TypeError(f"{cls.name}.__new__() takes {n + 1} positional arguments but {len(args) + 1} were given")
        values = dict(zip(fields, args))
        for k, v in kwargs.items():
            if k not in fields:
                raise TypeError(f"{cls.name}.__new__() got an unexpected keyword argument '{k}'")
            if k in values:
                raise TypeError(f"{cls.name}.__new__() got multiple values for argument '{k}'")
            values[k] = v
        first_default = n - len(cls.defaults)
        missing = []
        for i, f in enumerate(fields):
            if f not in values:
                if i >= first_default:
                    values[f] = cls.defaults[i - first_default]
                else:
                    missing.append(f"'{f}'")
        if missing:
            listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
            raise TypeError(f"{cls.name}.__new__() missing {len(missing)} required positional argument"
                            f"{'s' if len(missing) != 1 else ''}: {listed}")
        v = NamedTupleValue([values[f] for f in fields])
        v.__dict__["_fg_cls"] = cls
        return v

    def namedtuple_attr(self, v, name):
        cls = v.__dict__["_fg_cls"]
        if name in cls.fields:
            return v[cls.fields.index(name)]
        if name == "index" or name == "count":
            return getattr(v, name)
        if name in NAMEDTUPLE_PUBLIC:
            return self.namedtuple_public(cls, name, v)
        raise AttributeError(f"'{cls.name}' object has no attribute '{name}'")

    def namedtuple_public(self, cls, name, bound=None):
        """A namedtuple's documented '_' API (`_fields`, `_make`, `_asdict`, `_replace`), on the class or on an
        instance (`bound`), as CPython's."""
        if name == "_fields":
            return cls.fields

        def instance(args, method):
            if bound is not None:
                return bound, args
            if not args:
                raise TypeError(f"{cls.name}.{method}() missing 1 required positional argument: 'self'")
            v = args[0]
            if type(v) is not NamedTupleValue:  # (a plain tuple has no fields to name)
                raise AttributeError(f"'{self.type_name(v)}' object has no attribute '_fields'")
            return v, args[1:]

        def make(iterable):
            values = self.take(iterable)
            if len(values) != len(cls.fields):
                raise TypeError(f"Expected {len(cls.fields)} arguments, got {len(values)}")
            out = NamedTupleValue(values)
            out.__dict__["_fg_cls"] = cls
            return out

        def asdict(*args):
            v, rest = instance(args, "_asdict")
            if rest:
                raise TypeError(f"{cls.name}._asdict() takes 1 positional argument but {len(rest) + 1} were given")
            fields = v.__dict__["_fg_cls"].fields
            self.alloc(2 * len(fields), "dict")
            return dict(zip(fields, v))

        def replace(*args, **changes):
            v, rest = instance(args, "_replace")
            if rest:
                raise TypeError(f"{cls.name}._replace() takes 1 positional argument but {len(rest) + 1} were given")
            own = v.__dict__["_fg_cls"]
            values = dict(zip(own.fields, v))
            unexpected = [k for k in changes if k not in values]
            if unexpected:
                raise ValueError(f"Got unexpected field names: {unexpected!r}")
            values.update(changes)
            out = NamedTupleValue([values[f] for f in own.fields])
            out.__dict__["_fg_cls"] = own
            return out

        fn = {"_make": make, "_asdict": asdict, "_replace": replace}[name]
        return Builtin(f"{cls.name}.{name}", fn, self)

    def call_partial(self, p, args, kwargs):
        return self.call(p.func, [*p.args, *args], {**p.keywords, **kwargs})

    def call_cached(self, c, args, kwargs):
        key = (tuple(args), tuple(kwargs.items())) if kwargs else tuple(args)
        entries = c.entries
        try:
            hit = key in entries
        except TypeError:
            raise TypeError(f"unhashable type: '{self.type_name(_unhashable(args, kwargs))}'") from None
        if hit:
            entries.move_to_end(key)
            c.hits += 1
            return entries[key]
        c.misses += 1
        r = self.call(c.func, args, kwargs)
        self.alloc(1 + len(args) + 2 * len(kwargs), "cache")
        entries[key] = r
        if c.maxsize is not None and len(entries) > c.maxsize:
            entries.popitem(last=False)
        return r


def _unhashable(args, kwargs):
    for a in (*args, *kwargs.values()):
        try:
            hash(a)
        except TypeError:
            return a
    return None


# ================================================================= time
def time_module(interp) -> ModuleProxy:
    """`time`: clocks, and `sleep`, which waits for real but only within the run's time budget (sleeping costs
    no CPU: its seconds are added to the run's clock, `Budgets.clock`)."""
    def sleep(secs):
        secs = interp.as_count(secs) if type(secs) not in (int, float, bool) else secs
        if type(secs) not in (int, float, bool):
            raise TypeError(f"'{interp.type_name(secs)}' object cannot be interpreted as an integer")
        if secs != secs:
            raise ValueError("Invalid value NaN (not a number)")
        if secs < 0:
            raise ValueError("sleep length must be non-negative")
        if interp.deadline is not None:
            if interp.clock() + secs > interp.deadline:
                t = interp.limits.time_limit_s
                raise limit_error(f"time.sleep({secs:g}) would run past the time limit of {t:g} s", "time_limit_s",
                                  float(t))
            if time.monotonic() + secs > interp.wall_deadline:
                raise interp._wall_limit(NO_NODE)
        interp.slept += secs
        time.sleep(secs)

    fns = {"time": time.time, "perf_counter": time.perf_counter, "monotonic": time.monotonic,
           "process_time": time.process_time, "time_ns": time.time_ns, "perf_counter_ns": time.perf_counter_ns,
           "monotonic_ns": time.monotonic_ns, "sleep": sleep}
    return ModuleProxy("time", {n: Builtin(n, f, interp) for n, f in fns.items()})


# ================================================================= collections
def collections_module(interp) -> ModuleProxy:
    take = interp.take

    def _items(args, kwargs, what):
        if len(args) > 1:
            raise TypeError(f"{what} expected at most 1 argument, got {len(args)}")
        items = []
        if args:
            a = args[0]
            items = list(a.items()) if isinstance(a, dict) else take(a)
        items += list(kwargs.items())
        interp.alloc(len(items), what)
        return items

    def ordered_dict(*args, **kwargs):
        return interp.own(collections.OrderedDict(_items(args, kwargs, "OrderedDict")))

    def default_dict(default_factory=None, *args, **kwargs):
        if default_factory is not None and not callable(default_factory):
            raise TypeError("first argument must be callable or None")
        factory = None if default_factory is None else interp.callback(default_factory)
        return interp.own(collections.defaultdict(factory, _items(args, kwargs, "defaultdict")))

    def counter(iterable=None, **kwargs):
        c = collections.Counter()
        if iterable is not None:
            c.update(iterable if isinstance(iterable, dict) else take(iterable))
        c.update(kwargs)
        interp.alloc(len(c), "Counter")
        return interp.own(c)

    def deque(iterable=(), maxlen=None):
        maxlen = interp.as_count(maxlen)
        items = take(iterable)
        interp.alloc(len(items), "deque")
        return interp.own(collections.deque(items, maxlen))

    types = {"OrderedDict": (collections.OrderedDict, ordered_dict),
             "defaultdict": (collections.defaultdict, default_dict),
             "Counter": (collections.Counter, counter), "deque": (collections.deque, deque)}
    attrs = {n: BuiltinType(n, t, f, interp) for n, (t, f) in types.items()}
    attrs["namedtuple"] = Builtin("namedtuple", lambda *a, **k: interp.make_namedtuple(*a, **k), interp)
    return ModuleProxy("collections", attrs)


# ================================================================= functools
def functools_module(interp) -> ModuleProxy:
    """`functools`: `wraps`, `partial`, `reduce`, `lru_cache`, `cache`, `cmp_to_key`."""
    from .objects import GradModeFunction, UserFunction

    def wraps(wrapped, assigned=None, updated=None):
        def decorator(wrapper):
            if type(wrapper) in (UserFunction, GradModeFunction, CachedFunction) and \
                    type(getattr(wrapped, "name", None)) is str:
                wrapper.name = wrapped.name
                if type(wrapper) is UserFunction and type(wrapped) is UserFunction:
                    wrapper.qualname, wrapper.doc = wrapped.qualname, wrapped.doc
            return wrapper
        return Builtin("decorator", decorator, interp)

    def partial(func, *args, **kwargs):
        if not callable(func):
            raise TypeError("the first argument must be callable")
        return Partial(interp, func, args, kwargs)

    _missing = object()

    def reduce(function, iterable, initial=_missing):
        items = take(iterable)
        if initial is _missing:
            if not items:
                raise TypeError("reduce() of empty iterable with no initial value")
            acc, rest = items[0], items[1:]
        else:
            acc, rest = initial, items
        for x in rest:
            interp.tick()
            acc = interp.call(function, [acc, x], {})
        return acc

    def lru_cache(maxsize=128, typed=False):
        if callable(maxsize) and not isinstance(maxsize, bool):  # @lru_cache without arguments
            return CachedFunction(interp, maxsize, 128)
        if maxsize is not None:
            maxsize = interp.as_count(maxsize)
            if type(maxsize) not in INTS:
                raise TypeError("Expected first argument to be an integer, a callable, or None")
            maxsize = max(maxsize, 0)
        return Builtin("decorating_function", lambda f: CachedFunction(interp, f, maxsize), interp)

    def cmp_to_key(mycmp):
        cmp = interp.callback(mycmp)
        return functools.cmp_to_key(cmp)

    take = interp.take
    fns = {"wraps": wraps, "partial": partial, "reduce": reduce, "lru_cache": lru_cache,
           "cache": lambda f: CachedFunction(interp, f, None), "cmp_to_key": cmp_to_key}
    return ModuleProxy("functools", {n: Builtin(n, f, interp) for n, f in fns.items()})


# ================================================================= itertools
def itertools_module(interp) -> ModuleProxy:
    """`itertools`: lazy where Python is lazy (every consumer is bounded); what Python copies in C first
    (`product`, `permutations`, `combinations`, `cycle`) gets a bounded list."""
    take = interp.take
    it = interp.iterate
    cb = interp.callback

    def count(start=0, step=1):
        return itertools.count(start, step)

    def repeat(obj, times=None):
        return itertools.repeat(obj) if times is None else itertools.repeat(obj, interp.as_count(times))

    def product(*iterables, repeat=1):
        repeat = interp.as_count(repeat)
        pools = [take(i) for i in iterables]
        interp.alloc(sum(len(p) for p in pools) * max(repeat, 0) if type(repeat) in INTS else 0)
        return itertools.product(*pools, repeat=repeat)

    def chain(*iterables):
        return itertools.chain(*[it(i) for i in iterables])

    def islice(iterable, *args):
        return itertools.islice(it(iterable), *[interp.as_count(a) for a in args])

    def accumulate(iterable, func=None, *, initial=None):
        return itertools.accumulate(it(iterable), None if func is None else cb(func), initial=initial)

    def zip_longest(*iterables, fillvalue=None):
        return itertools.zip_longest(*[it(i) for i in iterables], fillvalue=fillvalue)

    def groupby(iterable, key=None):
        return itertools.groupby(it(iterable), None if key is None else cb(key))

    fns = {
        "count": count, "repeat": repeat, "product": product, "chain": chain, "islice": islice,
        "accumulate": accumulate, "zip_longest": zip_longest, "groupby": groupby,
        "cycle": lambda iterable: itertools.cycle(take(iterable)),
        "permutations": lambda iterable, r=None: itertools.permutations(take(iterable), interp.as_count(r)),
        "combinations": lambda iterable, r: itertools.combinations(take(iterable), interp.as_count(r)),
        "combinations_with_replacement": lambda iterable, r: itertools.combinations_with_replacement(
            take(iterable), interp.as_count(r)),
        "starmap": lambda function, iterable: itertools.starmap(cb(function), it(iterable)),
        "takewhile": lambda predicate, iterable: itertools.takewhile(cb(predicate), it(iterable)),
        "dropwhile": lambda predicate, iterable: itertools.dropwhile(cb(predicate), it(iterable)),
        "filterfalse": lambda predicate, iterable: itertools.filterfalse(
            None if predicate is None else cb(predicate), it(iterable)),
        "pairwise": lambda iterable: itertools.pairwise(it(iterable)),
        "compress": lambda data, selectors: itertools.compress(it(data), it(selectors)),
    }
    return ModuleProxy("itertools", {n: Builtin(n, f, interp) for n, f in fns.items()})


# ================================================================= math: the functions whose result can be huge
def math_module(interp, base: ModuleProxy) -> ModuleProxy:
    """The engine backend's `math` proxy plus the integer functions, with the result's size checked
    before Python computes it (`factorial(10**6)` is 18 million bits)."""
    max_bits = interp.max_bits

    def _check_bits(bits, what):
        if bits > max_bits:
            raise interp.int_limit(int(bits))

    def factorial(n):
        n = interp.as_count(n)
        if type(n) in INTS and n > 2:
            _check_bits(math.lgamma(n + 1) / math.log(2), "factorial")
        return math.factorial(n)

    def _log2_ratio(n, k):
        """log2(n! / (n-k)!): from lgamma while floats hold n exactly, else the bound k * log2(n).
        NOTE: lgamma(n) of a huge n has an absolute error far above the difference wanted."""
        if n < 2 ** 53:
            return (math.lgamma(n + 1) - math.lgamma(n - k + 1)) / math.log(2)
        return k * n.bit_length()

    def comb(n, k):
        n, k = interp.as_count(n), interp.as_count(k)
        if type(n) in INTS and type(k) in INTS and 0 <= k <= n:
            k_small = min(k, n - k)
            _check_bits(_log2_ratio(n, k_small) - math.lgamma(k_small + 1) / math.log(2), "comb")
        return math.comb(n, k)

    def perm(n, k=None):
        n, k = interp.as_count(n), interp.as_count(k)
        kk = n if k is None else k
        if type(n) in INTS and type(kk) in INTS and 0 <= kk <= n:
            _check_bits(_log2_ratio(n, kk), "perm")
        return math.perm(n, k)

    def prod(iterable, *, start=1):
        acc = start
        for x in interp.take(iterable):
            acc = interp.binop(ast.Mult, acc, x, NO_NODE)
        return acc

    def lcm(*integers):
        acc = 1
        for x in integers:
            acc = math.lcm(acc, x)
            if type(acc) is int and acc.bit_length() > max_bits:
                raise interp.int_limit(acc.bit_length())
        return acc

    def ldexp(x, i):
        return math.ldexp(x, i)

    attrs = dict(base.attrs)
    fns = {"factorial": factorial, "comb": comb, "perm": perm, "prod": prod, "lcm": lcm, "ldexp": ldexp,
           "fsum": lambda iterable: math.fsum(interp.take(iterable)), "gcd": math.gcd, "isqrt": math.isqrt,
           "dist": lambda p, q: math.dist(interp.take(p), interp.take(q))}
    attrs.update((n, Builtin(n, f, interp)) for n, f in fns.items())
    for n in MORE_MATH_NAMES:  # float functions: their results are one float
        if hasattr(math, n):
            attrs[n] = getattr(math, n)
    return ModuleProxy("math", attrs)


MORE_MATH_NAMES = "modf frexp remainder cbrt exp2 ulp nextafter".split()

def _matplotlib_part(name):
    def make(interp):
        from . import plots  # (matplotlib's companions are made with the run's plot gate)

        return plots.module_for(interp, name)
    return make


_MAKERS = {"time": time_module, "collections": collections_module, "functools": functools_module,
           "dataclasses": dataclasses_module,
           "itertools": itertools_module, "os": lambda interp: os_modules(interp)[0],
           "os.path": lambda interp: interp.stdlib_module("os").attrs["path"], "string": string_module,
           "unicodedata": unicodedata_module, "statistics": statistics_module, "copy": copy_module,
           "typing": typing_module, "__future__": future_module, "warnings": warnings_module, "sys": sys_module,
           "json": json_module, "argparse": argparse_module, "re": re_module, "logging": logging_module,
           "glob": glob_module, "datetime": datetime_module, "inspect": inspect_module,
           "contextlib": contextlib_module,
           **{n: lambda interp, n=n: tqdm_module(interp, n) for n in ("tqdm", "tqdm.auto", "tqdm.notebook")},
           **{n: _matplotlib_part(n) for n in ("matplotlib.colors", "matplotlib.ticker", "matplotlib.style",
                                               "matplotlib.cm")}}
STDLIB_NAMES = frozenset(_MAKERS)


