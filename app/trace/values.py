"""JSON-safety: non-finite floats become the strings "nan", "inf", "-inf" (strict JSON always;
the encoder is the trace contract's, ``engine.trace_events.json_number``)."""

from __future__ import annotations

import math

from engine.trace_events import json_number


def clean(x):
    """Recursively replace non-finite floats; leaves everything else as is."""
    t = type(x)
    if t is float:
        return json_number(x)
    if t is list or t is tuple:
        return [clean(v) for v in x]
    if t is dict:
        return {k: clean(v) for k, v in x.items()}
    return x


def to_float(v) -> float | None:
    """A scalar value V as a float (None for lists, summaries, None)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(v)
    if isinstance(v, list) and len(v) == 1:
        return to_float(v[0])
    return None
