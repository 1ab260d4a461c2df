"""The trace builder's side of quiet passes (app/runner/quiet.py): a ``quiet`` event's passes, the values and
gradients they changed, and the tensors they made that the program holds by name."""

from __future__ import annotations

from app.trace.values import to_float

# why a pass that ran quietly has no graph: seen only when one is drawn (a forecast that failed)
QUIET_REASON = ("ran without recording, as a middle pass of a long loop that ended before the passes forecast (its "
                "loss and norms kept): opening it records it")
# ... a pass whose loop was forecast to make it too big to draw, and did not
SMALLER_REASON = ("ran without recording from the middle of its loop, forecast to make it too big to draw, which it "
                  "was not: opening it records it")
QUIET_REASONS = (QUIET_REASON, SMALLER_REASON)


def apply_quiet(b, e: dict) -> None:
    """Passes that ran quietly (``quiet``): each closes the pass before it and stays open in its update phase (the
    last one gets what follows it), with its loss and norms only; then the values and gradients they changed."""
    if b.cur is None and b.n_closed >= b.policy.max_passes:  # passes past max_passes: left out
        b._passes_cut()
        return
    p = b.cur
    if p is not None and p.folded is None and e.get("too_big"):  # (the builder saw only its first nodes)
        b._fold(p, b._too_many(b.max_nodes, "more than "))
    if p is not None and p.folded is None and e.get("unrecorded"):
        p.folded = SMALLER_REASON  # what it drew of it is not all of it: a summary, recorded when opened
    entries = list(e.get("passes") or ())
    if e.get("within") and entries and b.cur is not None:
        # the pass that went quiet in its middle (too big to draw): its own backward ended
        p, stats = b.cur, entries.pop(0)
        p.loss = to_float(stats.get("loss"))
        p.stats = {k: stats.get(k) for k in ("loss", "param_norm", "grad_norm")}
        if p.t_fwd is None:
            p.t_fwd = b.clock
        p.t_grads = b.clock
        p.has_backward = True
        p.phase = "update"
    for stats in entries:
        if b.cur is not None:
            b._close(b.cur)
        if b.n_closed >= b.policy.max_passes:
            b._passes_cut()
            continue
        p = b._open()
        p.loss = to_float(stats.get("loss"))
        p.stats = {k: stats.get(k) for k in ("loss", "param_norm", "grad_norm")}
        p.folded = QUIET_REASON
        p.has_backward = True
        p.phase = "update"
    b.ops_used.update(e.get("ops") or ())
    if e.get("values") or e.get("grads") or e.get("tensors"):
        b.clock += 1
        for te in e.get("tensors") or ():  # made meanwhile, held by name: in no pass's graph (yet)
            tid = te["id"]
            b.tensors[tid] = te
            b.seq.setdefault(tid, b._next())
            b._set_value(tid, te.get("value"))
        for tid, v in (e.get("values") or {}).items():
            b._set_value(tid, v)
        for tid, g in (e.get("grads") or {}).items():
            b._set_grad(tid, g, remove=g is None)
    b.names.update(e.get("names") or {})
