"""JSON-safety: non-finite floats become the strings "nan", "inf", "-inf" (strict JSON always).

In core because the server's responses need it as much as the trace does (``app.trace.values``
re-exports it). The encoder itself is the trace contract's (``engine.trace_events.json_number``),
the one module engine and server share by design.
"""

from __future__ import annotations

from engine.trace_events import json_number as num


def clean(x):
    """Recursively replace non-finite floats; leaves everything else as is."""
    t = type(x)
    if t is float:
        return num(x)
    if t is list or t is tuple:
        return [clean(v) for v in x]
    if t is dict:
        return {k: clean(v) for k, v in x.items()}
    return x
