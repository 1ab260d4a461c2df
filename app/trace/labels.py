"""The text drawn on an op node: the op table's label plus its scalar parameters.

Recorder ``op`` events carry ``params``, the display form of an op's non-tensor arguments
(``x ** 2`` → op ``pow_scalar``, params ``[2]``; ``x.sum(1)`` → ``sum_dim``, ``[[1], false]``;
``x[:, 1:3]`` → ``slice``, ``[[":", "1:3"]]``). Graph nodes carry ``params`` as they are; the page
formats them (``static/js/oplabels.js``). This module is the same formatting in Python, used to
size op nodes for the layout so the page's text fits its ellipse. Keep the two in step:
``tests/browser`` compares them on every op with parameters.
"""

from __future__ import annotations

import math

# ops whose first parameter is a dim list (or one dim) and second keepdim
_REDUCE_DIM = {"sum_dim", "mean_dim", "max_dim", "min_dim", "argmax", "argmin"}
# ops whose only parameter is one dim
_ONE_DIM = {"softmax", "log_softmax", "cat", "stack", "unsqueeze", "squeeze_dim"}
# ops whose only parameter is a shape or a dim list, written out as arguments
_SHAPE = {"view", "unsafe_view", "expand", "permute", "squeeze_dims", "reshape"}
_LOSSES = {"mse_loss", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"}
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


def op_text(op: str | None, label: str | None, params) -> str:
    """``** 2``, ``clamp(0, 1)``, ``sum(1)``, ``[:, 1:3]``…; the bare label when there is nothing to add."""
    label = label or op or "op"
    if not isinstance(params, (list, tuple)) or not params:
        return label
    p = list(params)
    if op == "pow_scalar":
        return f"** {fmt_param(p[0])}"
    if op == "rpow":
        return f"{fmt_param(p[0])} **"
    if op == "rsub":
        return f"{fmt_param(p[0])} −"
    if op == "clamp":
        lo, hi = (p + [None, None])[:2]
        if lo is not None and hi is not None:
            return f"clamp({fmt_param(lo)}, {fmt_param(hi)})"
        if lo is not None:
            return f"clamp(min={fmt_param(lo)})"
        if hi is not None:
            return f"clamp(max={fmt_param(hi)})"
        return label
    if op in _REDUCE_DIM:
        keep = len(p) > 1 and p[1] is True
        return f"{label}({_dims(p[0])}{', keepdim' if keep else ''})"
    if op in _ONE_DIM:
        return f"{label}({fmt_param(p[0])})"
    if op in _SHAPE:
        return f"{label}({fmt_param(p[0])})"
    if op == "transpose":
        return f"{label}({fmt_param(p)})"
    if op in ("select", "slice"):
        idx = p[0] if isinstance(p[0], (list, tuple)) else [p[0]]
        return "[" + fmt_param(idx) + "]"
    if op == "index":
        return label
    if op in _LOSSES:
        return label if p[0] == _DEFAULT_REDUCTION else f"{label}({fmt_param(p[0])})"
    if op == "to_copy":
        return f"{label}({fmt_param(p[0])})"
    return f"{label}({fmt_param(p)})"
