"""The text drawn on an op node: the op table's label plus its scalar parameters.

Recorder ``op`` events carry ``params``, the display form of an op's non-tensor arguments
(``x ** 2`` → op ``pow_scalar``, params ``[2]``; ``x.sum(1)`` → ``sum_dim``, ``[[1], false]``;
``x[:, 1:3]`` → ``slice``, ``[[":", "1:3"]]``). How they are written is the op table's
(``engine.ops.Params``, exported as ``params`` in the API's ``ops``): graph nodes carry ``params``
as they are and the page formats them (``static/js/oplabels.js``). This module is the same
formatting in Python, used to size op nodes for the layout so the page's text fits its ellipse.
Keep the two in step: ``tests/browser`` compares them on every op with parameters.
"""

from __future__ import annotations

import math

from engine.recorder import op_table

_FORMATS = {name: entry["params"] for name, entry in op_table().items()}
# default reduction of the losses: not worth a word on the node
_DEFAULT_REDUCTION = "mean"


def fmt_param(v) -> str:
    """One parameter as Python would print it (JS: ``String``), lists as comma-separated items."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt_param(x) for x in v)
    return str(v)


def _dims(v) -> str:
    if isinstance(v, (list, tuple)):
        return fmt_param(v[0]) if len(v) == 1 else "(" + fmt_param(v) + ")"
    return fmt_param(v)


def op_text(op: str | None, label: str | None, params, fmt: dict | None = None) -> str:
    """``** 2``, ``clamp(0, 1)``, ``sum(1)``, ``[:, 1:3]``…; the bare label when there is nothing to add.

    ``fmt`` is the op table's ``params`` entry for ``op`` (looked up when not given)."""
    label = label or op or "op"
    if not isinstance(params, (list, tuple)) or not params:
        return label
    if fmt is None:
        fmt = _FORMATS.get(op) or {}
    p = list(params)
    kind = fmt.get("format")
    if kind == "right":
        return f"{fmt['symbol']} {fmt_param(p[0])}"
    if kind == "left":
        return f"{fmt_param(p[0])} {fmt['symbol']}"
    if kind == "clamp":
        lo, hi = (p + [None, None])[:2]
        if lo is not None and hi is not None:
            return f"clamp({fmt_param(lo)}, {fmt_param(hi)})"
        if lo is not None:
            return f"clamp(min={fmt_param(lo)})"
        if hi is not None:
            return f"clamp(max={fmt_param(hi)})"
        return label
    if kind == "reduce":
        keep = len(p) > 1 and p[1] is True
        return f"{label}({_dims(p[0])}{', keepdim' if keep else ''})"
    if kind == "call":
        return f"{label}({fmt_param(p[0])})"
    if kind == "subscript":
        idx = p[0] if isinstance(p[0], (list, tuple)) else [p[0]]
        return "[" + fmt_param(idx) + "]"
    if kind == "hidden":
        return label
    if kind == "reduction":
        return label if p[0] == _DEFAULT_REDUCTION else f"{label}({fmt_param(p[0])})"
    if kind == "keywords":
        head, args = keyword_call(label, p, fmt)
        return f"{head}({args})" if args else head
    return f"{label}({fmt_param(p)})"


def _is_default(v, default, p: list, names: list) -> bool:
    """A parameter equal to its default; (1, 1) equals 1; True never equals 1."""
    if isinstance(default, dict):  # {"same_as": name}: another parameter's value
        other = names.index(default["same_as"]) if default.get("same_as") in names else len(p)
        return other < len(p) and v == p[other]
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    return bool(items) and all(x == default and isinstance(x, bool) == isinstance(default, bool) for x in items)


def _keyword_value(v) -> str:
    if isinstance(v, (list, tuple)):
        if v and all(x == v[0] for x in v):
            return fmt_param(v[0])  # (2, 2) is written as PyTorch's users write it: 2
        return "(" + fmt_param(v) + ")"
    return fmt_param(v)


def keyword_call(label: str, p: list, fmt: dict) -> tuple[str, str]:
    """("conv2d", "stride=2, padding=1"): the "keywords" format's head (the label, N from the first,
    spatial, parameter: "2d") and its non-default parameters."""
    names, defaults = list(fmt.get("names") or []), fmt.get("defaults") or {}
    head = f"{label}{len(p[0])}d" if isinstance(p[0], (list, tuple)) else label
    args = []
    for i, v in enumerate(p):
        name = names[i] if i < len(names) else f"arg{i + 1}"
        if name in defaults and _is_default(v, defaults[name], p, names):
            continue
        args.append(f"{name}={_keyword_value(v)}")
    return head, ", ".join(args)
