"""`re` for programs (the NLP tutorials' normalizeString: `re.sub(r"([.!?])", r" \\1", s)`), sealed and bounded.

Python's regular expressions run in C and cannot be interrupted: a pattern that backtracks catastrophically would hold
the run past every budget the interpreter checks. So a pattern is parsed first and refused when it has the shapes
that backtrack exponentially: a repeat inside a long repeat (`(a+)+`, `(a{1,1000}){1,1000}`), a long repeat of
alternatives (`(a|ab)*`), backreferences, more than MAX_UNBOUNDED long repeats. A long repeat (unbounded, or more than
LONG) can still backtrack in a power of the text's length (`re.findall('(?=(a*))', text)` is quadratic, `a*a*b`
cubic): a pattern with k of them runs over at most WORK ** (1 / (k + 1)) characters (10,000 for one, 464 for two),
MAX_TEXT for none. The process's CPU limit (hard_kill_s) stays the last line behind these rules. Match
objects and compiled patterns are wrappers with the methods programs call; a function given as `repl` runs through
the interpreter.
"""
from __future__ import annotations

import re

try:
    import re._constants as _sre_constants
    import re._parser as _sre_parse  # Python >= 3.11
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_constants  # noqa: I001
    import sre_parse as _sre_parse

from .errors import limit_error
from .objects import Builtin, ModuleProxy

MAX_PATTERN = 1000  # characters of a pattern
MAX_TEXT = 1_000_000  # characters of a text a pattern runs over
MAX_UNBOUNDED = 4  # long repeats (`*`, `+`, `{n,}`, `{n,m}` past LONG) in one pattern
LONG = 16  # a repeat of at most this many is a constant factor; past it, a power of the text's length
WORK = 10 ** 8  # characters ** (long repeats + 1) a pattern may cost: ~0.1 s of backtracking at worst
_REPEATS = (_sre_constants.MAX_REPEAT, _sre_constants.MIN_REPEAT, getattr(_sre_constants, "POSSESSIVE_REPEAT", None))
_MAXREPEAT = _sre_constants.MAXREPEAT
FLAGS = {"I": re.I, "IGNORECASE": re.I, "M": re.M, "MULTILINE": re.M, "S": re.S, "DOTALL": re.S, "X": re.X,
         "VERBOSE": re.X, "A": re.A, "ASCII": re.A, "U": re.U, "UNICODE": re.U, "NOFLAG": re.NOFLAG}


def _has_branch(items) -> bool:
    """Whether alternatives (`|`, or a character class's sre IN is not one) appear in `items`, groups included."""
    for op, av in items:
        if op == _sre_constants.BRANCH:
            return True
        if op == _sre_constants.SUBPATTERN and _has_branch(av[-1]):
            return True
    return False


def _risky(items, inside_long: bool, counts: list) -> str | None:
    """Why the parsed pattern `items` could backtrack without bound, or None; `counts[0]` counts its long repeats."""
    for op, av in items:
        if op in _REPEATS and op is not None:
            low, high, body = av
            long = high > LONG  # (an unbounded repeat's high is MAXREPEAT)
            if long:
                counts[0] += 1
            if inside_long and high > 1:
                return "a repeat inside a long repeat (such as (a+)+) can take exponential time"
            if long and _has_branch(body):
                return "a long repeat of alternatives (such as (a|ab)*) can take exponential time"
            why = _risky(body, inside_long or long, counts)
            if why:
                return why
        elif op == _sre_constants.SUBPATTERN:
            why = _risky(av[-1], inside_long, counts)
            if why:
                return why
        elif op == _sre_constants.BRANCH:
            for branch in av[1]:
                why = _risky(branch, inside_long, counts)
                if why:
                    return why
        elif op in (_sre_constants.GROUPREF, _sre_constants.GROUPREF_EXISTS):
            return "backreferences can take exponential time"
        elif op in (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT):
            why = _risky(av[1], inside_long, counts)
            if why:
                return why
    return None


def checked_pattern(pattern, flags=0):
    """`re.compile(pattern, flags)` once the pattern passed the rules above, and the longest text it may run over."""
    if isinstance(pattern, RegexPattern):
        return pattern.compiled, pattern.max_text
    if type(pattern) is not str:
        raise TypeError(f"first argument must be string or compiled pattern, not {type(pattern).__name__} "
                        "(flowgrad's re takes str patterns)")
    if len(pattern) > MAX_PATTERN:
        raise limit_error(f"a regular expression of {len(pattern):,} characters", None, f"{MAX_PATTERN:,} characters")
    if not isinstance(flags, int) or isinstance(flags, bool):  # (re.I is a RegexFlag, an int)
        raise TypeError("flags must be an int (re.I | re.M, ...)")
    flags = int(flags)
    counts = [0]
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except re.error as e:  # (re.error is no ValueError: caught here as one, by `except re.error` too)
        raise ValueError(f"bad regular expression: {e}") from None
    why = _risky(parsed, False, counts)
    if why is None and counts[0] > MAX_UNBOUNDED:
        why = f"more than {MAX_UNBOUNDED} long repeats can take a high power of the text's length"
    if why:
        raise ValueError(f"this regular expression is refused in flowgrad: {why}")
    max_text = MAX_TEXT if not counts[0] else int(round(WORK ** (1 / (counts[0] + 1))))
    return re.compile(pattern, flags), max_text


class RegexMatch:
    """A match object: group / groups / groupdict / start / end / span, and m[0]."""

    __slots__ = ("match",)

    def __init__(self, match):
        self.match = match

    def group(self, *names):
        return self.match.group(*names)

    def groups(self, default=None):
        return self.match.groups(default)

    def groupdict(self, default=None):
        return self.match.groupdict(default)

    def start(self, group=0):
        return self.match.start(group)

    def end(self, group=0):
        return self.match.end(group)

    def span(self, group=0):
        return self.match.span(group)

    def __getitem__(self, group):
        return self.match[group]

    def __bool__(self):
        return True

    def __repr__(self):
        return f"<re.Match object; span={self.match.span()}, match={self.match.group(0)!r}>"


def _wrap(m):
    return None if m is None else RegexMatch(m)


class RegexPattern:
    """What re.compile returns: the module's functions bound to the pattern."""

    __slots__ = ("compiled", "max_text", "interp")

    def __init__(self, compiled, max_text, interp):
        self.compiled = compiled
        self.max_text = max_text  # the longest text it runs over (checked_pattern)
        self.interp = interp

    @property
    def pattern(self):
        return self.compiled.pattern

    @property
    def flags(self):
        return self.compiled.flags

    @property
    def groups(self):
        return self.compiled.groups

    def _text(self, string):
        if type(string) is not str:
            raise TypeError(f"expected string or bytes-like object, got '{self.interp.type_name(string)}'")
        if len(string) > self.max_text:
            raise limit_error(f"this regular expression over {len(string):,} characters", None,
                              f"{self.max_text:,} characters for a pattern with "
                              f"{'no' if self.max_text == MAX_TEXT else 'its'} long repeats")
        return string

    def match(self, string, pos=0, endpos=None):
        return _wrap(self.compiled.match(self._text(string), pos, len(string) if endpos is None else endpos))

    def search(self, string, pos=0, endpos=None):
        return _wrap(self.compiled.search(self._text(string), pos, len(string) if endpos is None else endpos))

    def fullmatch(self, string, pos=0, endpos=None):
        return _wrap(self.compiled.fullmatch(self._text(string), pos, len(string) if endpos is None else endpos))

    def findall(self, string, pos=0, endpos=None):
        out = self.compiled.findall(self._text(string), pos, len(string) if endpos is None else endpos)
        self.interp.alloc(len(out) + len(string), "list")
        return out

    def finditer(self, string, pos=0, endpos=None):
        return (RegexMatch(m) for m in self.compiled.finditer(self._text(string), pos,
                                                              len(string) if endpos is None else endpos))

    def split(self, string, maxsplit=0):
        out = self.compiled.split(self._text(string), maxsplit)
        self.interp.alloc(len(out) + len(string), "list")
        return out

    def _repl(self, repl):
        """`repl` as a function that counts what it puts in: re.sub builds its whole result in C before anything here
        sees it, so a short template over a long text ('b' * 1000 for each of a million matches) is stopped as its
        pieces pass the run's string budget, not after."""
        interp = self.interp
        template = repl if type(repl) is str else None
        if template is not None:
            try:
                self.compiled.sub(repl, "")  # a bad template (an unknown group, a bad escape): re's error, now
            except re.error as e:  # (re.error is no ValueError: raised as one, as compile's, caught by `except re.error`)
                raise ValueError(f"bad replacement: {e}") from None
        made = [0]

        def call(m):
            r = m.expand(template) if template is not None else interp.call(repl, [RegexMatch(m)], {})
            if type(r) is not str:
                raise TypeError(f"expected str instance, {interp.type_name(r)} found")
            made[0] += len(r)
            if made[0] > interp.max_seq:
                raise limit_error(f"re.sub made more than {interp.max_seq:,} characters", "max_live_elements",
                                  interp.max_seq)
            return r
        return call

    def subn(self, repl, string, count=0):
        text = self._text(string)
        if type(repl) is str and "\\" not in repl:  # a literal: its result's size is known from one C pass first
            kept, n = self.compiled.subn("", text, count)
            if len(kept) + n * len(repl) > self.interp.max_seq:
                raise limit_error(f"re.sub made more than {self.interp.max_seq:,} characters", "max_live_elements",
                                  self.interp.max_seq)
            out, n = self.compiled.subn(repl, text, count)
        else:
            out, n = self.compiled.subn(self._repl(repl), text, count)
        self.interp.alloc(len(out), "string")
        return out, n

    def sub(self, repl, string, count=0):
        return self.subn(repl, string, count)[0]

    def __repr__(self):
        return f"re.compile({self.compiled.pattern!r})" if not self.compiled.flags & ~re.U else \
            repr(self.compiled)


_PATTERN_METHODS = ("match", "search", "fullmatch", "findall", "finditer", "split", "sub", "subn")
_MATCH_METHODS = ("group", "groups", "groupdict", "start", "end", "span")


def _method(name):
    return lambda interp, obj: getattr(obj, name)


ATTRIBUTE_RULES = {
    RegexPattern: (("pattern", "flags", "groups", *_PATTERN_METHODS), {n: _method(n) for n in _PATTERN_METHODS}),
    RegexMatch: (_MATCH_METHODS, {n: _method(n) for n in _MATCH_METHODS}),
}
REPR_TYPES = (RegexPattern, RegexMatch)


def re_module(interp) -> ModuleProxy:
    def compile_(pattern, flags=0):
        return RegexPattern(*checked_pattern(pattern, flags), interp)

    def match(pattern, string, flags=0):
        return compile_(pattern, flags).match(string)

    def search(pattern, string, flags=0):
        return compile_(pattern, flags).search(string)

    def fullmatch(pattern, string, flags=0):
        return compile_(pattern, flags).fullmatch(string)

    def findall(pattern, string, flags=0):
        return compile_(pattern, flags).findall(string)

    def finditer(pattern, string, flags=0):
        return compile_(pattern, flags).finditer(string)

    def split(pattern, string, maxsplit=0, flags=0):
        return compile_(pattern, flags).split(string, maxsplit)

    def sub(pattern, repl, string, count=0, flags=0):
        return compile_(pattern, flags).sub(repl, string, count)

    def subn(pattern, repl, string, count=0, flags=0):
        return compile_(pattern, flags).subn(repl, string, count)

    def escape(pattern):
        if type(pattern) is not str:
            raise TypeError("escape() takes a str in flowgrad")
        out = re.escape(pattern)
        interp.alloc(len(out), "string")
        return out

    fns = {"match": match, "search": search, "fullmatch": fullmatch, "findall": findall, "finditer": finditer,
           "split": split, "sub": sub, "subn": subn}
    attrs = {name: Builtin(name, fn, interp) for name, fn in fns.items()}
    attrs.update({"compile": Builtin("compile", compile_, interp), "escape": Builtin("escape", escape, interp),
                  "error": interp.builtins["ValueError"], **FLAGS})
    return ModuleProxy("re", attrs)
