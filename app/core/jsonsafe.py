"""JSON-safety: non-finite floats become the strings "nan", "inf", "-inf" (strict JSON always).

In core because the server's responses need it as much as the trace does (``app.trace.values``
re-exports it); it imports nothing.
"""

from __future__ import annotations

import math


def num(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    return x


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
