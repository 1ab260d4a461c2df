"""``flowgrad.trace(source)``: a program run as the server runs it, its trace as a Python object that shows as the widget."""

from __future__ import annotations

from functools import cached_property

import orjson

from app.runner.service import clean_source
from flowgrad.runner import service

VALUES = ("full", "summary")


class Trace:
    """What ``POST /api/run`` answers for a program (docs/trace.md §2), read-only, plus the program itself."""

    def __init__(self, source: str, answer: bytes):
        self.source = source
        self.json = answer  # the answer's bytes, as the server would send them
        self.height: int | None = None  # the widget's height in pixels when the trace is shown (None: its default)
        self._shown = None

    @cached_property
    def _data(self) -> dict:
        return orjson.loads(self.json)

    stdout = property(lambda self: self._data["stdout"], doc="what the program printed")
    error = property(lambda self: self._data["error"], doc="{type, message, line, column} or None")
    passes = property(lambda self: self._data["passes"], doc="the recorded passes: graph, forward and backward steps")
    variables = property(lambda self: self._data["variables"], doc="{name: {shape, dtype, value, grad, …}}")
    figures = property(lambda self: self._data["figures"], doc="matplotlib figures: [{svg, at}]")
    steps = property(lambda self: self._data["steps"], doc="per-backward training statistics (loss, norms)")
    truncated = property(lambda self: self._data["truncated"])
    truncated_reason = property(lambda self: self._data["truncated_reason"])

    def to_dict(self) -> dict:
        """A fresh copy of the whole answer as plain Python data."""
        return orjson.loads(self.json)

    def error_text(self) -> str:
        """The error as the page shows it (type, message, the line), with that line of the program; "" if none."""
        err = self.error
        if not err:
            return ""
        text = f"{err['type']}: {err.get('message') or ''}"
        line = err.get("line")
        lines = self.source.splitlines()
        if line and 1 <= line <= len(lines):
            text = f"line {line}: {lines[line - 1].strip()}\n{text}"
        elif line:
            text = f"{text} (line {line})"
        return text

    def widget(self, *, height: int | None = None, **view):
        """The widget showing this trace, ``height`` pixels high; ``view``: pass, step, node, theme, projector
        (where it opens)."""
        from flowgrad.widget import FlowgradWidget

        w = FlowgradWidget(trace=self.json.decode(), source=self.source, view=view)
        if height:
            w.height = height
        return w

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            if self._shown is None:  # one widget however often it is shown (its module is 1.6 MB of state)
                self._shown = self.widget(height=self.height)
        except ImportError:  # no anywidget (the `notebook` extra): text only
            return {"text/plain": repr(self)}
        bundle = self._shown._repr_mimebundle_()
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        return {**bundle, "text/plain": repr(self)}

    def __repr__(self) -> str:
        drawn = sum(1 for p in self.passes if p and p.get("graph"))
        err = f", error={self.error['type']}" if self.error else ""
        return f"<flowgrad.Trace: {len(self.passes)} passes ({drawn} drawn), {len(self.variables)} variables{err}>"


def trace(source: str, *, values: str = "full") -> Trace:
    """Run ``source`` (a PyTorch program; ``import torch`` is the engine) in flowgrad's sandbox, as the server does.

    ``values``: "full" (every element of every variable) or "summary" (past ``value_limit`` elements, a summary).
    A run-time error is not raised: it is ``Trace.error``, with everything that ran before it."""
    if values not in VALUES:
        raise ValueError(f"values must be one of {VALUES}, not {values!r}")
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    source = clean_source(source)  # as the worker gets it: the Trace's lines are the ones it ran
    return Trace(source, service().run(source, values))
