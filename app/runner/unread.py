"""What a run need not ship (``app.runner.capture``): the events of passes the trace builder will not draw that
it would take only to forget or to replace, and the op outputs of a first pass too big to draw that a later pass
may still draw. Each rule is checked by tests/app/test_pruned_first_pass.py: the trace built from what ships
equals the one built from every event."""

from __future__ import annotations

import itertools

from app.trace.policy import RunPolicy
from engine.trace_events import (
    ACCUMULATE,
    BACKWARD_BEGIN,
    BACKWARD_END,
    BACKWARD_ERROR,
    BACKWARD_STEP,
    DETACH,
    FORGET,
    GRAD_INPLACE,
    GRAD_MODE,
    HOOK,
    INPLACE,
    MARK_RETAIN_GRAD,
    MODULE,
    NAME,
    OP,
    OPTIM_STEP,
    REQUIRES_GRAD,
    RETAIN_GRAD,
    STEP_STATS,
    TENSOR,
    ZERO_GRAD,
)
from engine.trace_export import OP_GRAD_FN, OP_ID, OP_INPUTS, OP_NAME, OP_OUTPUT, OUT_REF, OUT_REQUIRES_GRAD, OUT_VALUE

# the events of a light pass that set a value or a gradient (or draw a frame only: grad_mode), `_light_unread`
_SETS_STATE = frozenset({INPLACE, OPTIM_STEP, ZERO_GRAD, ACCUMULATE, RETAIN_GRAD, GRAD_MODE})
# the events of a pass sent light whose ids keep nothing alive in the builder's eyes (it reads them only to draw
# frames no one sees): a tensor they name may be left out all the same
_NAMING_NOTHING_KEPT = frozenset({NAME, BACKWARD_STEP, BACKWARD_BEGIN, DETACH, FORGET, STEP_STATS, GRAD_MODE})


def light_unread(captured: list, count: int, *, marks: list[int], policy: RunPolicy, dead: set[str], known: set[str],
                 base: int, first_pass: int) -> tuple[set[str] | None, set[int] | None]:
    """What the trace builder would take only to forget or replace among the first ``count`` of a recorder's
    ``captured`` events (numbered from ``base`` over the run; ``marks``: where each pass opens, ``first_pass``: the
    pass of ``captured[0]``; ``known``: the op kinds shipped so far), in passes sent light: ids of ops and tensors,
    and event positions (counted over the run). The ids are those that the builder would take only to forget: the
    program dropped them (``dead``: their tensor and graph node are gone,
    so no event captured after now can name them) and no event it keeps names them. Every event captured so far
    is walked back (the later ones too: a pass still to ship may name an id of this one while it lived); an op
    kept marks its inputs, and an event kept its ids, as needed. Events of a light pass that draw frames no one
    sees (``_NAMING_NOTHING_KEPT``: a name, its backward's first step, ...) mark nothing. An op of a kind not
    shipped yet, and the event that opens a pass, always go.

    The positions are of events that set a value (``inplace``, ``optim_step``) or a gradient (``accumulate``,
    ``retain_grad``, ``zero_grad``) that a later one in the light passes of this batch sets again (no pass drawn
    lies between them, so the builder would only keep the last), and of ``grad_mode`` events (frames only)."""
    n_marks = len(marks)
    full_from = policy.tail_from(n_marks + 1)
    light: list[tuple[int, int]] = []  # [start, end) of each light pass among the first `count` (relative)
    openers: set[int] = set()
    idx, start = first_pass, 0
    while start < count:
        end = min(marks[idx] - base, count) if idx < n_marks else count
        if end > start and not (idx >= full_from or policy.kept_from_start(idx)):
            light.append((start, end))
        if idx < n_marks and 0 <= marks[idx] - base < count:
            openers.add(marks[idx] - base)
        start = max(end, start)
        idx += 1
    if not light:
        return None, None
    unread: set[str] = set()
    superseded: set[int] = set()
    seen_value: set[str] = set()  # tensors a later event of these light passes gives a value
    seen_grad: set[str] = set()  # ... a gradient
    needed: set[str] = set()
    first = light[0][0]  # no event before the first light pass can name an id born in it
    # the first op record of each kind not shipped yet goes (the answer's op table lists the ops used)
    firsts: dict[str, int] = {}
    if {e[OP_NAME] for e in itertools.islice(captured, count) if type(e) is tuple} - known:
        for j in range(count):
            e = captured[j]
            if type(e) is tuple and e[OP_NAME] not in known and e[OP_NAME] not in firsts:
                firsts[e[OP_NAME]] = j
    keep = openers.union(firsts.values())
    lo, hi = light.pop()
    for i in range(len(captured) - 1, first - 1, -1):
        while i < lo and light:
            lo, hi = light.pop()
        e = captured[i]
        is_light = lo <= i < hi
        if type(e) is tuple:
            nid, out = e[OP_ID], e[OP_OUTPUT]
            if (is_light and nid in dead and nid not in needed and (len(e) <= OUT_VALUE or out in dead and out not in needed)
                    and i not in keep):
                unread.add(nid)
                if len(e) > OUT_VALUE:
                    unread.add(out)
                continue
            needed.update(e[OP_INPUTS])
            needed.add(out)
            continue
        kind = e["kind"]
        if not is_light:
            if seen_value or seen_grad:  # a pass drawn lies between: it shows what the earlier ones set
                seen_value.clear()
                seen_grad.clear()
        elif kind in _SETS_STATE and i not in keep:
            if kind == INPLACE:
                tensors, seen = (e["tensor"],), seen_value
            elif kind == OPTIM_STEP:
                tensors, seen = (*e["params"], *e["values"]), seen_value
            elif kind == ZERO_GRAD:
                tensors, seen = e["tensors"], seen_grad
            elif kind == GRAD_MODE:
                superseded.add(base + i)
                continue
            else:  # accumulate, retain_grad
                tensors, seen = (e["tensor"],), seen_grad
            if all(t in seen for t in tensors):
                superseded.add(base + i)
                continue
            seen.update(tensors)
        if is_light:
            if kind == TENSOR:
                rid = e["id"]
                if rid in dead and rid not in needed and i not in keep:
                    unread.add(rid)
                else:
                    needed.add(e["op"])
                continue
            if kind in _NAMING_NOTHING_KEPT:
                continue
        _mark_named(e, kind, needed)
    for rid in unread:
        dead.discard(rid)
    return unread, superseded


def reached(captured: list[dict], aliases: dict) -> set[str]:
    """The ids of the op outputs among ``captured`` (all in the first pass's forward phase) whose values a later pass
    may draw. Walking back from the last event, an op's output and inputs are reached when the op made a graph node
    (a backward draws it with its inputs and output), its output requires grad, is reached (an input of a reached
    op: a failed backward draws its root's ancestors) or still lives (a later op may take it). An op that returned
    an input (`a -= lr * g` under no_grad) reaches its inputs only when it made a graph node: no later pass draws
    it otherwise (a failed backward walks to the op that made each tensor, never to one that wrote into it). A tensor
    that died unreached is named by no later event: all that name it came while it lived, in this pass, which is not
    drawn."""
    reached: set[str] = set()
    for e in reversed(captured):
        if type(e) is not tuple:
            if e["kind"] == OP:  # a failed op or a custom Function: no output of its own here
                reached.update(e["inputs"])
        elif len(e) <= OUT_VALUE:  # an op that returned an input (in place): drawn later only as a graph node
            if e[OP_GRAD_FN] is not None:
                reached.update(e[OP_INPUTS])
        elif e[OP_GRAD_FN] is not None or e[OUT_REQUIRES_GRAD] or e[OP_OUTPUT] in reached or not _died(e, aliases):
            reached.add(e[OP_OUTPUT])
            reached.update(e[OP_INPUTS])
    return reached


_NAMES_ONE_TENSOR = frozenset({NAME, REQUIRES_GRAD, INPLACE, GRAD_INPLACE, ACCUMULATE, RETAIN_GRAD, MARK_RETAIN_GRAD,
                               HOOK})
_NAMES_NONE = frozenset({GRAD_MODE, BACKWARD_END, STEP_STATS, FORGET, MODULE})  # FORGET names only what is gone


def _mark_named(e: dict, kind: str, into: set) -> None:
    """The ids a captured event (not an op record) names, added to ``into``."""
    if kind == BACKWARD_STEP:
        into.add(e["node"])
        into.add(e["output"])
        for c in e["contributions"]:
            into.add(c["input"])
        return
    if kind in _NAMES_ONE_TENSOR:
        into.add(e["tensor"])
    elif kind == TENSOR:
        into.add(e["op"])
    elif kind in _NAMES_NONE:
        return
    elif kind == DETACH:
        into.add(e["source"])
        into.add(e["tensor"])
    elif kind == BACKWARD_BEGIN or kind == BACKWARD_ERROR:
        into.add(e["root"])
    elif kind == ZERO_GRAD:
        into.update(e["tensors"])
    else:  # an op that failed or a custom Function, an optimizer step, module names: every string, generously
        _ids_named(e, into)


def _ids_named(x, into: set) -> None:
    """Every string in a captured event (its ids among them), taken generously: what an event kept may name."""
    t = type(x)
    if t is dict:
        for k, v in x.items():
            into.add(k)
            tv = type(v)
            if tv is str:
                into.add(v)
            elif tv is dict or tv is list or tv is tuple:
                _ids_named(v, into)
    elif t is list or t is tuple:
        for v in x:
            tv = type(v)
            if tv is str:
                into.add(v)
            elif tv is dict or tv is list or tv is tuple:
                _ids_named(v, into)


def _died(r: tuple, aliases: dict) -> bool:
    """The new output an op record ``r`` holds died, and no other tensor stamped with its id (``x.data``) lives."""
    ref = r[OUT_REF]
    return ref is not None and ref() is None and (not aliases or gone(r[OP_OUTPUT], aliases))


def gone(rid: str, aliases: dict) -> bool:
    """No other tensor stamped with ``rid`` (``x.data``) lives (its entry goes when none does)."""
    refs = aliases.get(rid)
    if refs is None:
        return True
    if any(r() is not None for r in refs):
        return False
    del aliases[rid]
    return True
