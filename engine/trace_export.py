"""Captured events → JSON-ready events: the value encoders and exporters that the recorder (`Recorder.events`)
and the runner (app/runner/capture.py, which ships events as it goes) share.

A captured event is JSON-ready except in its value fields (`VALUE_FIELDS`, engine/trace_events.py), which may hold
numpy snapshots of small arrays, encoded only when exported (`export_values`). An op event is captured as a flat
tuple holding its new output tensor too (`OP_*`, `OUT_*`: no dict on the recorder's hot path): `split_event`, or
`op_tensor` with the value the caller decided on and `op_event`, make it the `tensor` event then the `op` event.
"""
from __future__ import annotations

import math

import numpy as np

from .trace_events import OP, TENSOR, VALUE_FIELDS, json_number

# the types an export walks into (everything else in a captured event is JSON-ready as it is)
_NESTED = frozenset({np.ndarray, dict, list})


def _clean(values):
    if isinstance(values, list):
        return [_clean(v) for v in values]
    return json_number(values)


_DTYPE_NAMES: dict = {}


def dtype_name(dt) -> str:
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt)
    return name


_FLOAT_SCALARS = frozenset({np.float32, np.float64, np.float16})
_isfinite = math.isfinite


def encode_value(arr, limit: int):
    """A JSON-ready value: number, nested list, or a summary for arrays above `limit` elements."""
    t = type(arr)
    if t is not np.ndarray:
        if t in _FLOAT_SCALARS:  # a reduction's result (a loss): the most common scalar, the shortest way
            v = arr.item()
            return v if _isfinite(v) else json_number(v)
        if isinstance(arr, (np.generic, int, float, bool)):
            v = arr.item() if isinstance(arr, np.generic) else arr
            return json_number(int(v) if isinstance(v, bool) else v)
        arr = np.asarray(arr)
    kind = arr.dtype.kind
    if not arr.ndim and limit >= 1:  # a scalar (losses, counters): no array method but item()
        v = arr.item()
        return int(v) if kind == "b" else json_number(v)
    if kind == "b":
        arr = arr.astype(np.int64)
    if arr.size <= limit:
        out = arr.tolist()
        # NOTE: a sum is non-finite whenever an element is (or, rarely, on overflow): then clean element-wise.
        if kind == "f" and arr.size and not math.isfinite(arr.sum()):
            out = _clean(out)
        return out
    return summarize(arr)


# the reductions `ndarray.min/max/sum` run, called directly: a summary is taken for every big value an op makes
_MIN, _MAX, _SUM = np.minimum.reduce, np.maximum.reduce, np.add.reduce


def summarize(arr) -> dict:
    """Shape, min, max, mean and the first 16 values: what a large tensor is kept as."""
    flat = arr.reshape(-1)
    lo, hi, mean = float(_MIN(flat)), float(_MAX(flat)), float(_SUM(flat)) / flat.size
    sample = flat[:16].tolist()
    if arr.dtype.kind == "f" and not (_isfinite(lo) and _isfinite(hi) and _isfinite(mean)):
        finite = flat[np.isfinite(flat)]
        lo, hi, mean = (float(finite.min()), float(finite.max()), float(finite.mean())) if finite.size else (math.nan,) * 3
        if not math.isfinite(flat[:16].sum()):
            sample = _clean(sample)
        lo, hi, mean = json_number(lo), json_number(hi), json_number(mean)
    # NOTE: else every number is finite (a float array's min and max are: no element is inf or nan), as JSON has it
    return {"summary": True, "shape": list(arr.shape), "min": lo, "max": hi, "mean": mean, "sample": sample}


def export_event(x, limit: int):
    """A captured event (or any part of one) JSON-ready: its numpy snapshots encoded with `limit`. Walks
    only into lists and dicts (a summary is JSON-ready already); `split_event` first for an op event."""
    t = type(x)
    if t is np.ndarray:
        return encode_value(x, limit)
    if t is dict:
        if x.get("summary") is True:
            return x
        return {k: export_event(v, limit) if type(v) in _NESTED else v for k, v in x.items()}
    if t is list:
        return [export_event(v, limit) if type(v) in _NESTED else v for v in x]
    return x


def export_value(v, limit: int):
    """One captured value (a snapshot, a number, or a list / dict of them) JSON-ready."""
    return export_event(v, limit) if type(v) in _NESTED else v


def export_values(e: dict, limit: int) -> dict:
    """`export_event(e, limit)` for a whole captured event (not an op holding its output: `split_event`
    first), walking only its value fields: an event without a snapshot to encode is returned as it is."""
    fields = VALUE_FIELDS.get(e["kind"])
    if fields is None:
        return e
    out = None
    for f in fields:
        v = e.get(f)
        if type(v) in _NESTED:
            if out is None:
                out = dict(e)
            out[f] = export_event(v, limit)
    return e if out is None else out


# An op event as captured (`Recorder.on_op`, the hot path): one flat tuple, the dicts built only when exported.
# (id, op name, label, input ids, output id, grad_fn name, module, line, grad_enabled, params) and, when the op made
# a new output tensor, (its value snapshot, shape, dtype, requires_grad, weak reference to it or None) after them.
OP_ID, OP_NAME, OP_LABEL, OP_INPUTS, OP_OUTPUT, OP_GRAD_FN, OP_MODULE, OP_LINE, OP_GRAD_ENABLED, OP_PARAMS = range(10)
OUT_VALUE, OUT_SHAPE, OUT_DTYPE, OUT_REQUIRES_GRAD, OUT_REF = range(10, 15)


def op_event(r: tuple) -> dict:
    """The `op` event of a captured op record."""
    return {"kind": OP, "id": r[0], "op": r[1], "label": r[2], "grad_fn": r[5], "inputs": r[3], "output": r[4],
            "module": r[6], "line": r[7], "grad_enabled": r[8], "params": r[9]}


def op_tensor(r: tuple, value) -> dict:
    """The `tensor` event of the new output a captured op record holds, with `value` (as the caller decided)."""
    return {"kind": TENSOR, "id": r[4], "shape": list(r[11]), "dtype": dtype_name(r[12]), "requires_grad": r[13],
            "is_leaf": r[5] is None, "value": value, "origin": "op", "op": r[0], "module": r[6], "line": r[7]}


def split_event(e) -> list[dict]:
    """A captured event as the events it stands for: an op record (a tuple) with a new output is the `tensor`
    event of that output then the `op` event; every other event is a dict already."""
    if type(e) is not tuple:
        return [e]
    if len(e) > OUT_VALUE:
        return [op_tensor(e, e[OUT_VALUE]), op_event(e)]
    return [op_event(e)]


__all__ = ["OP_PARAMS", "OUT_VALUE", "dtype_name", "encode_value", "export_event", "export_value", "export_values",
           "op_event", "op_tensor", "split_event", "summarize"]
