"""Errors the sandbox reports, and the scrubbing that keeps host details out of messages."""

from __future__ import annotations

import re


class ProgramError(Exception):
    """An error in the user's program: Python/PyTorch's exception type name, message and location.

    `line` is 1-based, `column` 0-based (as `ast` counts), both None when unknown.
    """

    def __init__(self, type_name: str, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.type_name = type_name
        self.message = message
        self.line = line
        self.column = column
        self.value = None  # the exception object the program sees (made when it raises or catches one)
        self.exc_args = None  # the arguments of the Python exception this stands for, when they are shown as is
        self.exc_class = None  # the class a program catches it as (flow.py), when not the one its type names

    def to_dict(self) -> dict:
        return {"type": self.type_name, "message": self.message, "line": self.line, "column": self.column}

    def __repr__(self):
        return f"ProgramError({self.type_name}: {self.message} at {self.line}:{self.column})"


class LimitError(ProgramError):
    """A sandbox limit was hit; the message names the limit and its value. Its type is LimitExceeded,
    or Python's own where Python has one (RecursionError for nested calls)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 type_name: str = "LimitExceeded"):
        super().__init__(type_name, message, line, column)


def limit_error(what: str, limit_name: str | None, value, line: int | None = None, column: int | None = None,
                type_name: str = "LimitExceeded") -> LimitError:
    """The one shape of a limit message: what happened, then the limit by name and value,
    `"loop ran more than 10,000 iterations (limit max_loop_iterations = 10,000)"` (integers with
    thousands separators, floats `:g`); a fixed limit of the interpreter, not a setting, has no name and
    shows its value as written: `"... (limit 1000)"`."""
    if limit_name is None:
        return LimitError(f"{what} (limit {value})", line, column, type_name)
    shown = f"{value:,}" if type(value) is int else f"{value:g}" if type(value) is float else value
    return LimitError(f"{what} (limit {limit_name} = {shown})", line, column, type_name)


# Anything that looks like a filesystem path of two or more components, and object addresses.
_PATH_RE = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.\-+@~]+){2,}[/\\]?")
_ADDR_RE = re.compile(r" at 0x[0-9a-fA-F]+")
_MAX_MESSAGE = 2000


def scrub(message: str, addresses=None, limit: int | None = _MAX_MESSAGE) -> str:
    """Remove host paths from a message (or a repr the engine built); memory addresses become the run's
    stand-ins (`addresses`: the interpreter's `FakeAddresses`), or go when there is none. At most `limit`
    characters."""
    if not isinstance(message, str):
        message = str(message)
    message = _PATH_RE.sub("<path>", message)
    message = _ADDR_RE.sub("", message) if addresses is None else addresses.replace_in(message)
    for word in ("site-packages", "Traceback"):
        message = message.replace(word, "<hidden>")
    if limit is not None and len(message) > limit:
        message = message[:limit] + "…"
    return message
