"""The answer budget: one run's answer fits in ``max_answer_bytes`` (docs/trace.md §4).

Upstream, everything that grows is bounded where it is made (strings and paths by the recorder,
values shipped by the runner, nodes, frames and time by the trace builder). Here the answer is
fitted to its byte budget, never cut blindly: what does not fit is folded, and each fold adds a
reason to ``truncated_reason``.

* ``fold_pass(pass, cap)``: a pass within ``cap`` bytes: whole; else without frames; else with its
  node values as summaries; else with no node values; else a summary (``graph: null``). A folded
  pass says how in ``folded``.
* ``fit_answer(trace, budget)``: the whole answer (``POST /api/run``'s trace, or the stream's closing
  ``done`` with ``budget`` what is left of the stream's): stdout, variables, modules and steps
  within shares of the budget; then the passes with full graphs, the first and the last before the
  others, each folded to what is left.

Sizes are measured, not guessed: ``nbytes`` is the length of the orjson encoding the worker sends.
"""

from __future__ import annotations

import math

import orjson

from engine.trace_events import CLIP_MARK, clip_text

SLACK = 2_048  # bytes kept free for what is added after fitting: truncated_reason (<= 1,500 characters), timings


def nbytes(obj) -> int:
    return len(orjson.dumps(obj))


# ------------------------------------------------------------------ values
def _flat(v, out: list) -> None:
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(reversed(x))
        else:
            out.append(x)


def _shape(v) -> list[int]:
    shape = []
    while isinstance(v, list):
        shape.append(len(v))
        v = v[0] if v else None
    return shape


def summarize_value(v):
    """A value V as its summary (the recorder's form: shape, min, max, mean, first 16); a number, a
    string ("nan"), None and a summary stay as they are."""
    if not isinstance(v, list):
        return v
    flat: list = []
    _flat(v, flat)
    nums = [x for x in flat if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)]
    if nums:
        lo, hi, mean = min(nums), max(nums), sum(nums) / len(nums)
    else:
        lo = hi = mean = "nan"
    return {"summary": True, "shape": _shape(v), "min": lo, "max": hi, "mean": mean, "sample": flat[:16]}


# ------------------------------------------------------------------ passes
def fold_pass(pd: dict, cap: int) -> tuple[dict, int, str | None]:
    """``pd`` within ``cap`` bytes, folded as little as needed: (pass, its size, how it was folded or None)."""
    size = nbytes(pd)
    if size <= cap or pd.get("graph") is None:
        return pd, size, None
    why = f"{size:,} bytes, over its share of the answer ({cap:,} bytes; limit max_answer_bytes)"
    graph = pd["graph"]
    folded = {**pd, "frames": [], "folded": f"frames left out: {why}"}
    size = nbytes(folded)
    if size <= cap:
        return folded, size, folded["folded"]
    nodes = [{**n, "value": summarize_value(n.get("value")), "grad": summarize_value(n.get("grad"))}
             for n in graph["nodes"]]
    folded = {**folded, "graph": {**graph, "nodes": nodes}, "folded": f"frames left out, values summarised: {why}"}
    size = nbytes(folded)
    if size <= cap:
        return folded, size, folded["folded"]
    nodes = [{**n, "value": None, "grad": None} for n in graph["nodes"]]
    folded = {**folded, "graph": {**graph, "nodes": nodes}, "folded": f"frames and values left out: {why}"}
    size = nbytes(folded)
    if size <= cap:
        return folded, size, folded["folded"]
    folded = {"index": pd["index"], "loss": pd.get("loss"), "graph": None, "frames": [],
              "folded": f"not drawn: {why}"}
    return folded, nbytes(folded), folded["folded"]


# ------------------------------------------------------------------ the answer
def _cut_text(text: str, cap: int) -> str:
    """``text`` within ``cap`` bytes of JSON (roughly: characters), the cut marked."""
    if len(text) <= cap // 2 or nbytes(text) <= cap:
        return text
    keep = max(0, cap // 4)  # a character can take up to 4 bytes (or 6 escaped)
    return clip_text(text, keep)


def _first_entries_within(out: dict, cap: int) -> dict:
    """The leading entries of `out` whose JSON, as one object, stays within `cap` bytes."""
    kept: dict = {}
    size = 2  # "{}"
    for k, v in out.items():
        n = nbytes({k: v}) - 1
        if size + n > cap:
            break
        kept[k] = v
        size += n
    return kept


def _fit_variables(variables: dict, cap: int, reasons: list[str]) -> dict:
    if nbytes(variables) <= cap:
        return variables
    out = {k: {**v, "value": summarize_value(v.get("value")), "grad": summarize_value(v.get("grad"))}
           if isinstance(v, dict) else v for k, v in variables.items()}
    if nbytes(out) <= cap:
        reasons.append(f"variables sent as summaries (their share of limit max_answer_bytes is {cap:,} bytes)")
        return out
    kept = _first_entries_within(out, cap)
    reasons.append(f"{len(out) - len(kept):,} of {len(out):,} variables left out (their share of limit "
                   f"max_answer_bytes is {cap:,} bytes)")
    return kept


def _fit_modules(modules: dict, cap: int, reasons: list[str]) -> dict:
    if nbytes(modules) <= cap:
        return modules
    out = {k: {**v, "repr": None} if isinstance(v, dict) else v for k, v in modules.items()}
    if nbytes(out) > cap:
        kept = _first_entries_within(out, cap)
        reasons.append(f"{len(out) - len(kept):,} of {len(out):,} modules left out (their share of limit "
                       f"max_answer_bytes is {cap:,} bytes)")
        return kept
    reasons.append(f"module reprs left out (their share of limit max_answer_bytes is {cap:,} bytes)")
    return out


def _fit_steps(steps: list, cap: int, reasons: list[str]) -> list:
    size = nbytes(steps)
    if size <= cap:
        return steps
    every = math.ceil(size / max(cap, 1))
    out = steps[::every]
    while out and nbytes(out) > cap:
        every *= 2
        out = steps[::every]
    reasons.append(f"steps: every {every}th kept (their share of limit max_answer_bytes is {cap:,} bytes)")
    return out


def clip_error(trace: dict, max_string_chars: int | None) -> None:
    """The error's message within ``max_string_chars`` (cut with a visible marker)."""
    err = trace.get("error")
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        err["message"] = clip_text(err["message"], max_string_chars)


def fit_answer(trace: dict, budget: int, *, max_string_chars: int | None = None) -> list[str]:
    """Fit ``trace`` (changed in place) into ``budget`` bytes; the reasons for what was folded."""
    reasons: list[str] = []
    clip_error(trace, max_string_chars)
    if nbytes(trace) + SLACK <= budget:
        return reasons
    share = budget // 8
    stdout = trace.get("stdout")
    if isinstance(stdout, str):
        cut = _cut_text(stdout, share)
        if cut is not stdout:
            trace["stdout"] = cut
            reasons.append(f"stdout cut to {len(cut):,} characters (its share of limit max_answer_bytes)")
    if isinstance(trace.get("variables"), dict):
        # half the answer: complete variables come before drawn passes (those fold to what is left)
        trace["variables"] = _fit_variables(trace["variables"], budget // 2, reasons)
    if isinstance(trace.get("modules"), dict):
        trace["modules"] = _fit_modules(trace["modules"], budget // 16, reasons)
    if isinstance(trace.get("steps"), list):
        trace["steps"] = _fit_steps(trace["steps"], share, reasons)
    passes = trace.get("passes")
    if isinstance(passes, list):
        drawn = [i for i, p in enumerate(passes) if p.get("graph") is not None]
        rest = {**trace, "passes": [p for p in passes if p.get("graph") is None]}
        left = budget - SLACK - nbytes(rest) - 100 * len(drawn)  # ~100: a drawn pass folded to a summary
        order = drawn[:1] + drawn[-1:] if len(drawn) > 1 else drawn
        order += [i for i in drawn if i not in order]
        for k, i in enumerate(order):
            # the first drawn pass may take half of what is left, so that the last one still fits
            cap = left // 2 if k == 0 and len(drawn) > 1 else left
            folded, size, how = fold_pass(passes[i], max(cap, 0) + 100)
            if how:
                reasons.append(f"pass {passes[i]['index']}: {how}")
            passes[i] = folded
            left -= size - 100
    # last resort (tiny budgets): whatever still does not fit goes, the error stays
    for key, empty in (("passes", None), ("steps", []), ("variables", {}), ("modules", {}), ("stdout", "")):
        if nbytes(trace) + SLACK <= budget:
            break
        if key not in trace:
            continue
        if key == "passes":
            trace["passes"] = [{"index": p.get("index"), "loss": p.get("loss"), "graph": None, "frames": []}
                               for p in trace["passes"]]
            if nbytes(trace) + SLACK > budget:
                trace["passes"] = []
        else:
            trace[key] = empty
        reasons.append(f"{key} left out: the answer did not fit in limit max_answer_bytes = {budget:,}")
    return reasons


__all__ = ["CLIP_MARK", "clip_error", "fit_answer", "fold_pass", "nbytes", "summarize_value"]
