"""Text formatting of program values: `str`/`repr`, `format` specs, `str.format`, `%` and f-strings.

Python's own formatting is used only on values it renders without calling program or engine code in
an unbounded way (numbers, strings); containers, dict views and slices are rendered here, by a walker
that counts characters against max_output_bytes and list/string items against the run's budget; every
other object goes through ONE function, `public_repr`, whatever the path (print, `str`, `repr`, `%`,
`format`, f-strings, `str.format`): torch's names, and stand-in addresses (`FakeAddresses`) where
Python would print one. Format specs are parsed first: widths and precisions are bounded,
`{x.attr}`/`{x[0]}` refused.
"""

from __future__ import annotations

import ast
import collections
import math
import re
import string
import types
import weakref
from collections.abc import ItemsView, KeysView, ValuesView

import numpy as np

from .budgets import MAX_FORMAT_WIDTH
from .errors import limit_error, scrub
from .files import RunFile
from .objects import CONTAINERS, INTERP_TYPES, PRIMITIVES, NamedTupleValue, Shown, ShownTensor, UserInstance
from .plots import HANDLE_TYPES as PLOT_HANDLES
from .stdlib_datetime import REPR_TYPES as DATETIME_TYPES
from .stdlib_datetime import strftime_of as DATETIME_FORMAT
from .stdlib_inspect import REPR_TYPES as INSPECT_TYPES
from .stdlib_logging import REPR_TYPES as LOGGING_TYPES
from .stdlib_re import REPR_TYPES as RE_TYPES
from .stdlib_tools import REPR_TYPES as TOOL_TYPES

_SPEC_RE = re.compile(r"(?:.?[<>=^])?[+\- ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[bcdeEfFgGnosxX%]?\Z", re.S)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.S)
_formatter_parse = string.Formatter().parse
_EMPTY_REPR = {list: "[...]", tuple: "(...)", dict: "{...}"}


_DICT_VIEWS = (KeysView, ValuesView, ItemsView)
_COLLECTION_REPRS = frozenset({collections.OrderedDict, collections.defaultdict, collections.Counter, collections.deque,
                               NamedTupleValue})
# reprs Python (or the engine) builds itself, bounded, with at most an address to replace
_OWN_REPRS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType,
              types.GeneratorType, range, bytes, type(Ellipsis), type(NotImplemented))


class FakeAddresses:
    """Stand-ins for object addresses, per run: `0x7f0000000010`, `0x7f0000000020`, ... in the order
    objects are first shown. Never derived from server memory: the real address only keys the table, so
    an object shows the same stand-in all run long, and two objects alive together never share one (as
    with CPython's own addresses, an object that died may pass its address on)."""

    BASE = 0x7F0000000000
    STEP = 0x10
    MAX_REMEMBERED = 1 << 16
    PATTERN = re.compile(r"0x7f0000[0-9a-f]{6}")  # what every stand-in looks like
    _IN_TEXT = re.compile(r"(?<= at )0x[0-9a-fA-F]+")

    REGIONS = 0x7F1000000000  # where the stand-in storages of `pointer` start
    __slots__ = ("_by_id", "_count", "_regions", "_next_region")

    def __init__(self):
        self._by_id: dict[int, str] = {}
        self._count = 0
        self._regions: dict[int, tuple] = {}  # id of a storage's owner -> (weak reference to it, stand-in start)
        self._next_region = self.REGIONS

    def pointer(self, owner, nbytes: int, offset: int) -> int:
        """`data_ptr()`: a stand-in start per storage (page-aligned regions as long as the storages, so none overlap)
        plus the real offset in it: a view's pointer is its base's plus the bytes before its first element, a copy's
        is another storage's. 0 for an empty tensor (no owner), as PyTorch's."""
        if owner is None:
            return 0
        entry = self._regions.get(id(owner))
        if entry is None or entry[0]() is not owner:
            if len(self._regions) >= self.MAX_REMEMBERED:  # the dead ones go; the live ones are bounded by memory
                self._regions = {k: e for k, e in self._regions.items() if e[0]() is not None}
            entry = self._regions[id(owner)] = (weakref.ref(owner), self._next_region)
            self._next_region += max(nbytes + 0xFFF & ~0xFFF, 0x1000)
        return entry[1] + offset

    def of(self, obj) -> str:
        return self._for(id(obj))

    def number(self, obj) -> int | None:
        """`of(obj)` as an int, for the program's id(): None when the table is full and obj is not in it (a stand-in
        not remembered would change from call to call)."""
        key = id(obj)
        if key not in self._by_id and len(self._by_id) >= self.MAX_REMEMBERED:
            return None
        return int(self._for(key), 16)

    def _for(self, key: int) -> str:
        a = self._by_id.get(key)
        if a is None:
            self._count += 1
            a = f"{self.BASE + self.STEP * self._count:#x}"
            if len(self._by_id) < self.MAX_REMEMBERED:
                self._by_id[key] = a
        return a

    def replace_in(self, text: str) -> str:
        """Every `at 0x<real address>` of a repr the engine or Python built, as its stand-in."""
        return self._IN_TEXT.sub(lambda m: self._for(int(m.group(0), 16)), text)


def _numpy_text(v, how, max_chars=None):
    """str() or repr() of a numpy value under numpy's default print options (what a fresh NumPy prints,
    whatever the process's options): numbers only, so the text is numpy's own. Its length is bounded first
    (`max_chars`): numpy shows every value of an array whose dimensions are all short, (2,) * 20 is 10^6."""
    if (v if isinstance(v, np.dtype) else v.dtype).kind not in "biuf":
        raise TypeError("a numpy value that holds objects cannot be printed")
    if max_chars is not None and isinstance(v, np.ndarray):
        shown, bound = _numpy_text_bound(v)
        if bound > max_chars:
            raise limit_error(f"printing this array shows {shown:,} values, up to {bound:,} characters, more than "
                              "4 x max_output_bytes", "max_output_bytes", max_chars // 4)
    with np.printoptions(**_NUMPY_DEFAULT_PRINT):
        return how(v)


def _numpy_text_bound(v):
    """(values shown, most characters) of numpy's printout of `v` under its default options: summarised past
    `threshold` values to `edgeitems` each side of every long dimension; each value at most `width`
    characters (ints: their longest; floats: the integer digits plus 8 decimals, or scientific), a
    separator, and per line its indentation (`array(` and one per dimension) and brackets."""
    opts = _NUMPY_DEFAULT_PRINT
    edge = opts["edgeitems"]
    shape = v.shape
    summarised = v.size > opts["threshold"]
    shown = math.prod(min(d, 2 * edge) if summarised else d for d in shape)
    if v.size == 0 or shown == 0:
        return 0, 64
    if v.dtype.kind == "b":
        width = 5
    elif v.dtype.kind in "iu":
        width = max(len(str(v.min().item())), len(str(v.max().item())))
    else:
        finite = v[np.isfinite(v)] if shown else v
        top = float(np.abs(finite).max()) if finite.size else 0.0
        digits = len(f"{top:.0f}") if top < 1e16 else 0
        width = max(16, digits + 10) if digits else 16  # sign, digits, '.', 8 decimals; or -d.dddddddde+ddd
    ndim = max(v.ndim, 1)
    indent = len("array(") + ndim
    row = min(shape[-1], 2 * edge) if shape and summarised else (shape[-1] if shape else 1)
    rows = shown // max(row, 1) + 1
    per_line = max(1, (opts["linewidth"] - indent) // (width + 2))
    lines = shown // per_line + rows
    return shown, shown * (width + 2) + lines * (indent + ndim + 4) + 2 * rows + 64


_NUMPY_DEFAULT_PRINT = dict(np.get_printoptions())


def _check_widths(*values):
    for v in values:
        if v and int(v) > MAX_FORMAT_WIDTH:
            raise limit_error(f"format width/precision {int(v):,} is too large", None, MAX_FORMAT_WIDTH)


class Formatting:
    """Mixed into the Interpreter: uses `self.B`, `self.max_out`, `self.max_seq` and the budget methods."""

    # ---------------------------------------------------------------- str and repr
    def to_str(self, v):
        t = type(v)
        if t is str:
            return v
        if t in PRIMITIVES:
            return str(v)
        if t is self.B.device or t in DATETIME_TYPES or t in INSPECT_TYPES:  # str(torch.device('cpu')) is 'cpu'; a date's ISO text
            return str(v)
        if isinstance(v, BaseException):
            return self.exception_str(v)
        if t is UserInstance or t is self.B.UserDataset or isinstance(v, self.B.UserModule):
            text = self.program_text(v, ("__str__", "__repr__"))
            if text is not None:
                self.alloc(len(text), "string")
                return text
        if isinstance(v, PLOT_HANDLES):  # print(fig) is matplotlib's str: Figure(640x480)
            return str(v)
        if t is np.ndarray or isinstance(v, (np.generic, np.dtype)):  # print(a) is numpy's str, not its repr
            s = _numpy_text(v, str, 4 * self.max_out)
            self.alloc(len(s), "string")
            return s
        return self.repr_value(v)

    def repr_value(self, v):
        budget = [self.max_out + 1]
        s = self._repr(v, 0, set(), budget)
        self.alloc(len(s), "string")  # str(big_list) 10,000 times is 650 MB
        return s

    def _repr(self, v, depth, seen, budget):
        t = type(v)
        if t in PRIMITIVES:
            s = repr(v)
        elif t in CONTAINERS:
            if id(v) in seen or depth > 100:
                s = _EMPTY_REPR.get(t, "{...}")
            else:
                seen.add(id(v))
                parts = []
                if t is dict:
                    for k, x in v.items():
                        parts.append(self._repr(k, depth + 1, seen, budget) + ": " +
                                     self._repr(x, depth + 1, seen, budget))
                else:
                    for x in v:
                        parts.append(self._repr(x, depth + 1, seen, budget))
                seen.discard(id(v))
                inner = ", ".join(parts)
                if t is list:
                    s = f"[{inner}]"
                elif t is tuple:
                    s = f"({inner},)" if len(parts) == 1 else f"({inner})"
                elif t is dict:
                    s = "{" + inner + "}"
                elif not parts:
                    s = f"{t.__name__}()"
                elif t is set:
                    s = "{" + inner + "}"
                else:
                    s = f"frozenset({{{inner}}})"
        elif t is slice:  # a slice's repr is its parts' reprs, built in C
            s = "slice(" + ", ".join(self._repr(x, depth + 1, seen, budget) for x in (v.start, v.stop, v.step)) + ")"
        elif isinstance(v, _DICT_VIEWS):  # dict_values([...]) is built in C too
            s = f"{t.__name__}({self._repr(list(v), depth + 1, seen, budget)})"
        elif isinstance(v, BaseException):
            s = self.exception_repr(v)
        elif t in _COLLECTION_REPRS:
            s = self._collection_repr(t, v, depth, seen, budget)
        elif t is UserInstance or t is self.B.UserDataset or isinstance(v, self.B.UserModule):
            s = self.program_text(v, ("__repr__",))
            if s is None:
                s = self.public_repr(v)
        else:
            s = self.public_repr(v)
        budget[0] -= len(s)
        if budget[0] < 0:
            raise self.text_limit()
        return s

    def _collection_repr(self, t, v, depth, seen, budget):
        """collections' types and namedtuple instances, as Python 3.11 prints them, by the walker."""
        if id(v) in seen or depth > 100:
            return "..."
        seen.add(id(v))
        try:
            r = self._repr
            if t is NamedTupleValue:
                cls = v.__dict__["_fg_cls"]
                return f"{cls.name}(" + ", ".join(f"{f}={r(x, depth + 1, seen, budget)}" for f, x in zip(cls.fields, v)) + ")"
            if t is collections.OrderedDict:
                return f"OrderedDict({r(list(v.items()), depth + 1, seen, budget)})" if v else "OrderedDict()"
            if t is collections.defaultdict:
                factory = "None" if v.default_factory is None else r(v.default_factory, depth + 1, seen, budget)
                return f"defaultdict({factory}, {r(dict(v), depth + 1, seen, budget)})"
            if t is collections.Counter:
                return f"Counter({r(dict(v.most_common()), depth + 1, seen, budget)})" if v else "Counter()"
            inner = r(list(v), depth + 1, seen, budget)  # a deque
            return f"deque({inner})" if v.maxlen is None else f"deque({inner}, maxlen={v.maxlen})"
        finally:
            seen.discard(id(v))

    def program_text(self, v, methods):
        """The text of an instance of a program's class from the first of `methods` its class defines
        (`str()` falls back on `__repr__`, as `object.__str__` does); None when it defines neither."""
        cls = v.cls if type(v) is UserInstance else v.__dict__["_fg_cls"]
        for name in methods:
            if cls.lookup(name)[0] is not None:
                r = self.dunder(v, name, ())
                if type(r) is not str:
                    raise TypeError(f"{name} returned non-string (type {self.type_name(r)})")
                return r
        return None

    def public_repr(self, v) -> str:
        """THE repr of every value that is not a plain value or a container (the walker above renders
        those): what PyTorch would print, with torch's names and a stand-in address where Python prints
        one; never a server address or a name inside the engine. An engine object's own repr runs only
        after `text_size_check` has bounded the program data it will print."""
        t = type(v)
        B = self.B
        if t in INTERP_TYPES:
            return repr(v)  # the interpreter's own: no address, the program's names
        if isinstance(v, type):
            return f"<class '{B.display_name(v)}'>"
        if isinstance(v, (np.ndarray, np.generic, np.dtype)):  # numpy's own repr (numbers only; bounded by its
            return _numpy_text(v, repr, 4 * self.max_out)          # summarising threshold, and checked)
        if isinstance(v, PLOT_HANDLES):  # matplotlib's text for them, built from numbers only
            return repr(v)
        # a file's name and mode; hints, streams, a bar, re's objects, loggers
        if t is RunFile or t in TOOL_TYPES or t in RE_TYPES or t in LOGGING_TYPES or t in DATETIME_TYPES or t in INSPECT_TYPES:
            return repr(v)
        if isinstance(v, B.Tensor):
            if v._uninitialized:  # a lazy layer's parameter before its first forward: `<UninitializedParameter>`
                return repr(v)
            if v._data.dtype.kind not in "biuf":  # never made (the engine refuses it); never printed either
                raise TypeError("a tensor that holds objects cannot be printed")
            return repr(v)
        if t is B.UserDataset:  # an instance of a program's Dataset subclass, as Python prints one
            return f"<__main__.{v.__dict__['_fg_cls'].name} object at {self.addresses.of(v)}>"
        if t is types.MethodType and isinstance(v.__self__, B.Tensor):  # torch's tensor methods are built-ins
            return f"<built-in method {v.__func__.__name__} of Tensor object at {self.addresses.of(v.__self__)}>"
        if t.__repr__ is object.__repr__:  # `<module.Class object at 0x…>`: torch's name, a stand-in address
            return f"<{B.display_name(t)} object at {self.addresses.of(v)}>"
        if not (isinstance(v, _OWN_REPRS) or (t.__module__ + ".").startswith(B.prefix) or isinstance(v, B.Module)
                or isinstance(v, (tuple, list, dict))):
            return f"<{B.display_name(t)} object at {self.addresses.of(v)}>"  # a type we know nothing about
        self.text_size_check(v)
        return self.scrub_text(repr(v))

    def scrub_text(self, text: str) -> str:
        """Text the engine or Python built (a module's or optimizer's repr, a bound method's): real
        addresses become stand-ins and the engine's module paths torch's names; host paths go."""
        return scrub(self.B.torch_names_in(text), self.addresses, limit=None)

    def _convert(self, value, conv):
        """The `!s`, `!r`, `!a` conversions of f-strings and str.format."""
        if conv == "s":
            return self.to_str(value)
        if conv == "r":
            return self.repr_value(value)
        if conv == "a":
            return ascii(self.repr_value(value))
        if conv is not None:
            raise ValueError(f"Unknown conversion specifier {conv}")
        return value

    # ---------------------------------------------------------------- format specs and str.format
    def format_value(self, value, spec):
        if not spec:
            if isinstance(value, np.generic) and value.dtype.kind in "biuf":
                return format(value, "")  # f"{np.float32(1) / 3}" is the float's text, not numpy's str
            if isinstance(value, self.tensor_type) and value.ndim == 0:
                return format(value.item(), "")  # torch's Tensor.__format__: f"{loss}" is the number, 3.0399208068847656
            return self.to_str(value)
        if type(value) in DATETIME_TYPES[:2]:  # f"{now:%H:%M}": datetime's __format__ is strftime
            return DATETIME_FORMAT(self, value)(spec)
        m = _SPEC_RE.match(spec)
        if m is None:
            raise ValueError(f"Invalid format specifier '{spec[:50]}' for object of type '{self.type_name(value)}'")
        _check_widths(*m.groups())
        t = type(value)
        if t in PRIMITIVES:
            if len(self._checked_specs) < 1000:  # (a program can make any number of different specs)
                self._checked_specs.add(spec)
            return format(value, spec)
        if isinstance(value, self.tensor_type):  # the engine's Tensor.__format__, its text from public_repr
            if value.ndim == 0:
                return format(value.item(), spec)
            return format(self.public_repr(value), spec)
        if t is np.ndarray and value.ndim > 0:
            raise TypeError("unsupported format string passed to numpy.ndarray.__format__")
        if t.__module__ == "numpy" and isinstance(value, (int, float, complex)) or hasattr(value, "dtype") and \
                t.__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
            return format(value, spec)
        raise TypeError(f"unsupported format string passed to {self.type_name(value)}.__format__")

    def _joined(self, parts):
        """Join formatted pieces: one string of at most max_live_elements characters, counted once."""
        out = []
        total = 0
        for s in parts:
            total += len(s)
            if total > self.max_seq:
                raise self._seq_limit(total, "string")
            out.append(s)
        self.alloc(total, "string")
        return "".join(out)

    def safe_format(self, template, args, kwargs):
        """str.format without attribute/index lookups and with checked specs."""
        return self._joined(self._format_pieces(template, args, kwargs))

    def _format_pieces(self, template, args, kwargs):
        auto = 0
        for literal, field_name, spec, conv in _formatter_parse(template):
            yield literal
            if field_name is None:
                continue
            if field_name == "":
                i = auto
                auto += 1
            elif field_name.isdigit():
                i = int(field_name)
            elif "." in field_name or "[" in field_name:
                raise ValueError("attribute and index lookups in format strings ('{x.attr}', '{x[0]}') are not "
                                 "supported in flowgrad programs")
            else:
                if field_name not in kwargs:
                    raise KeyError(field_name)
                i = None
            if i is not None and i >= len(args):
                raise IndexError(f"Replacement index {i} out of range for positional args tuple")
            value = kwargs[field_name] if i is None else args[i]
            if spec and "{" in spec:
                raise ValueError("nested replacement fields in format specs are not supported in flowgrad programs")
            yield self.format_value(self._convert(value, conv), spec or "")

    # ---------------------------------------------------------------- f-strings
    def ev_JoinedStr(self, node, scope):
        return self._joined([v.value if type(v) is ast.Constant else self.ev_FormattedValue(v, scope)
                             for v in node.values])

    def ev_FormattedValue(self, node, scope):
        value = self.ev(node.value, scope)
        conv = node.conversion
        if conv != -1:
            value = self._convert(value, chr(conv))
        spec_node = node.format_spec
        if spec_node is None:
            spec = ""
        else:
            spec = self._constant_specs.get(spec_node)
            if spec is None:
                spec = self.ev(spec_node, scope)
                if all(type(v) is ast.Constant for v in spec_node.values):  # `{x:5d}`: the same text every time
                    self._constant_specs[spec_node] = spec
        try:
            if type(value) in PRIMITIVES and spec in self._checked_specs:  # a spec checked before: as below
                return format(value, spec)
            return self.format_value(value, spec)
        except Exception as e:
            raise self._at(e, node) from None

    # ---------------------------------------------------------------- %
    def _percent(self, template, args):
        if type(template) is bytes:
            raise TypeError("%-formatting of bytes is not supported in flowgrad programs")
        for m in _PERCENT_RE.finditer(template):
            width, prec, _ = m.groups()
            if width == "*" or prec == "*":
                raise ValueError("'*' widths in %-format strings are not supported in flowgrad programs")
            _check_widths(width, prec)
        if type(args) is tuple:
            args = tuple(self._shown(a) for a in args)
        elif type(args) is dict:
            args = {k: self._shown(v) for k, v in args.items()}
        else:
            args = self._shown(args)
        s = template % args
        self.alloc(len(s), "string")
        return s

    def _shown(self, v):
        t = type(v)
        if t in PRIMITIVES:
            return v
        if isinstance(v, np.generic) and v.dtype.kind in "biuf":  # a number: %f, %d and %s as Python does them
            return v
        if isinstance(v, self.tensor_type):  # %s / %r show public_repr's text; %d / %f / %x use the number
            text = self.repr_value(v)
            return ShownTensor(text, text, v)
        return Shown(self.to_str(v), self.repr_value(v))

