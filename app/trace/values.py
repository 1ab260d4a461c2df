"""JSON-safety: non-finite floats become the strings "nan", "inf", "-inf" (strict JSON always).

``num`` and ``clean`` live in ``app.core.jsonsafe`` (the server's responses use them too; core
imports no feature package) and are re-exported here for the trace code.
"""

from __future__ import annotations

import math

from app.core.jsonsafe import clean, num

__all__ = ["VALUES_MODES", "clean", "num", "summarize_variables", "to_float"]

# what a run's `variables` carry (the request's `values` field): every element, or summaries past value_limit
VALUES_MODES = ("full", "summary")


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


def _count(v) -> int:
    """Elements of a value V (a nested list), without flattening it."""
    n = 1
    while isinstance(v, list):
        n *= len(v)
        if not v:
            return 0
        v = v[0]
    return n


def summarize_variables(variables: dict, limit: int) -> dict:
    """`variables` with every value and gradient of more than `limit` elements as its summary (the page's
    own drawing needs no more; the default answer stays complete)."""
    from app.trace.budget import summarize_value

    def small(v):
        return summarize_value(v) if isinstance(v, list) and _count(v) > limit else v

    return {name: {**info, "value": small(info.get("value")), "grad": small(info.get("grad"))}
            if isinstance(info, dict) else info for name, info in variables.items()}
