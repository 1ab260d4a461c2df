"""Text formatting of program values: `str`/`repr`, `format` specs, `str.format`, `%` and f-strings.

Python's own formatting is used only on values it renders without calling program or engine code in
an unbounded way (numbers, strings, tensors); containers and interpreter objects are rendered here, by
a walker that counts characters against max_output_bytes and list/string items against the run's
budget. Format specs are parsed first: widths and precisions are bounded, `{x.attr}`/`{x[0]}` refused.
"""

from __future__ import annotations

import ast
import re
import string

from .budgets import MAX_FORMAT_WIDTH
from .errors import limit_error, scrub
from .objects import CONTAINERS, INTERP_TYPES, PRIMITIVES, Shown

_SPEC_RE = re.compile(r"(?:.?[<>=^])?[+\- ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[bcdeEfFgGnosxX%]?\Z", re.S)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.S)
_formatter_parse = string.Formatter().parse
_EMPTY_REPR = {list: "[...]", tuple: "(...)", dict: "{...}"}


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
        elif t in INTERP_TYPES:
            s = repr(v)
        elif isinstance(v, type):
            s = f"<class '{self.B.class_names.get(v) or v.__name__}'>"
        else:
            self.text_size_check(v)
            s = scrub(repr(v))
        budget[0] -= len(s)
        if budget[0] < 0:
            raise self.text_limit()
        return s

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
            return self.to_str(value)
        m = _SPEC_RE.match(spec)
        if m is None:
            raise ValueError(f"Invalid format specifier '{spec[:50]}' for object of type '{self.type_name(value)}'")
        _check_widths(*m.groups())
        t = type(value)
        if t in PRIMITIVES or isinstance(value, self.tensor_type):
            return format(value, spec)
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
        return self._joined(v.value if type(v) is ast.Constant else self.ev_FormattedValue(v, scope)
                            for v in node.values)

    def ev_FormattedValue(self, node, scope):
        value = self.ev(node.value, scope)
        conv = node.conversion
        value = self._convert(value, None if conv == -1 else chr(conv))
        spec = "" if node.format_spec is None else self.ev(node.format_spec, scope)
        try:
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
        if t in PRIMITIVES or isinstance(v, self.tensor_type):
            return v
        return Shown(self.to_str(v), self.repr_value(v))

