"""Events of passes the trace builder will not draw, shipped light (``app.runner.capture``): ids and structure kept,
bulky values dropped before they are ever encoded; and the estimated JSON bytes of values the value budget counts."""

from __future__ import annotations

import numpy as np

from engine.trace_events import (
    ACCUMULATE,
    BACKWARD_BEGIN,
    BACKWARD_STEP,
    GRAD_INPLACE,
    HOOK,
    INPLACE,
    OPTIM_STEP,
    RETAIN_GRAD,
    TENSOR,
    VALUE_FIELDS,
)
from engine.trace_export import encode_value, export_value, export_values

# JSON bytes of one exported element (a float32 as a Python float is up to ~20 characters) and of a summary
VALUE_COST = 20
SUMMARY_COST = 400
# what a value changes to (the builder keeps only the last ones it may draw): kept uncounted when light
STATE_KINDS = frozenset({INPLACE, OPTIM_STEP, ACCUMULATE, RETAIN_GRAD, GRAD_INPLACE})


def _small(v) -> bool:
    return not isinstance(v, np.ndarray) or v.size <= 1


def value_cost(x, limit: int) -> int:
    """Estimated JSON bytes of the values in `x` (a captured value, or a list / dict holding some)."""
    t = type(x)
    if t is np.ndarray:
        return x.size * VALUE_COST if x.size <= limit else SUMMARY_COST
    if t is dict:
        if x.get("summary") is True:
            return SUMMARY_COST
        return sum(value_cost(v, limit) for v in x.values())
    if t is list:
        return sum(value_cost(v, limit) for v in x)
    return 0


def event_cost(e: dict, limit: int) -> int:
    fields = VALUE_FIELDS.get(e["kind"])
    if fields is None:
        return 0
    total = 0
    for f in fields:
        v = e.get(f)
        if v is not None:
            total += v.size * VALUE_COST if type(v) is np.ndarray and v.size <= limit else value_cost(v, limit)
    return total


def lighten(e: dict) -> dict:
    """A captured event of a summary-only pass: ids and structure kept, bulky values dropped (never
    encoded). What later passes need is kept: leaf and scalar values, ``.grad`` after accumulation,
    in-place and optimizer values (not the optimizer's state: no later pass draws it)."""
    k = e["kind"]
    if k == TENSOR and e.get("origin") == "op" and not _small(e.get("value")):
        return {**e, "value": None}
    if k == BACKWARD_STEP:
        out = {**e, "upstream": None, "contributions": [{**c, "grad": None} for c in e.get("contributions") or []]}
        out.pop("upstream_parts", None)
        out.pop("upstream_outputs", None)
        return out
    if k == HOOK:
        return {**e, "grad": None, "replaced": None}
    if k == BACKWARD_BEGIN:
        return {**e, "gradient": None}
    if k == ACCUMULATE:
        return {**e, "incoming": None, "before": None}
    if k == OPTIM_STEP and e.get("state"):
        return {**e, "state": {}}
    return e


def _bare_value(v):
    t = type(v)
    if t is np.ndarray:
        return v if v.size <= 1 else None
    if t is dict:
        return None if v.get("summary") is True else {k: _bare_value(x) for k, x in v.items()}
    if t is list:
        return [_bare_value(x) for x in v]
    return v


def bare(e: dict) -> dict:
    """A captured event with every value above one element dropped (null): past the value budget."""
    fields = VALUE_FIELDS.get(e["kind"])
    if not fields:
        return e
    return {**e, **{f: _bare_value(e[f]) for f in fields if f in e}}


def _light_tensor(e, limit):
    v = e["value"]
    if type(v) is np.ndarray:
        return {**e, "value": None if v.size > 1 and e["origin"] == "op" else encode_value(v, limit)}
    return export_values(e, limit)


def _light_step(e, limit):
    out = {**e, "upstream": None, "contributions": [{**c, "grad": None} for c in e["contributions"]]}
    if "upstream_parts" in out:
        del out["upstream_parts"]
    if "upstream_outputs" in out:
        del out["upstream_outputs"]
    return out


def _light_accumulate(e, limit):
    return {**e, "incoming": None, "before": None, "after": export_value(e["after"], limit)}


def _light_lightened(e, limit):
    return export_values(lighten(e), limit)


# ``export_event(lighten(e), limit)`` by kind, in one copy of the event (most light events hold no array then)
LIGHT = {TENSOR: _light_tensor, BACKWARD_STEP: _light_step, ACCUMULATE: _light_accumulate,
          INPLACE: export_values, RETAIN_GRAD: export_values, GRAD_INPLACE: export_values,
          BACKWARD_BEGIN: _light_lightened, HOOK: _light_lightened, OPTIM_STEP: _light_lightened}


def light_event(e: dict, limit: int) -> dict:
    """``export_event(lighten(e), limit)``, encoding only what is left (most light events hold no array)."""
    light = LIGHT.get(e["kind"])
    return e if light is None else light(e, limit)
