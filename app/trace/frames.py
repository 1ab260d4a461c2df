"""What a frame of a pass is about (docs/trace.md §2, a frame's ``node``): the server writes it on every frame
(``app.trace.build``), so no client decides it again."""

from __future__ import annotations

from engine.trace_events import (
    ACCUMULATE,
    BACKWARD_BEGIN,
    BACKWARD_END,
    BACKWARD_ERROR,
    BACKWARD_STEP,
    DETACH,
    GRAD_INPLACE,
    GRAD_MODE,
    HOOK,
    INPLACE,
    MARK_RETAIN_GRAD,
    NAME,
    OP,
    OPTIM_STEP,
    REQUIRES_GRAD,
    RETAIN_GRAD,
    TENSOR,
    ZERO_GRAD,
)

# the field of an event that names the graph node its frame is about (docs/trace.md §2, a frame's `node`)
NODE_FIELD = {
    TENSOR: "id", OP: "id", BACKWARD_STEP: "node", BACKWARD_BEGIN: "root", BACKWARD_ERROR: "root",
    NAME: "tensor", DETACH: "tensor", REQUIRES_GRAD: "tensor", MARK_RETAIN_GRAD: "tensor", ACCUMULATE: "tensor",
    RETAIN_GRAD: "tensor", INPLACE: "tensor", GRAD_INPLACE: "tensor", HOOK: "tensor",
}
NO_NODE = frozenset({GRAD_MODE, BACKWARD_END, ZERO_GRAD, OPTIM_STEP})  # about no one node (or several)


def frame_node(event: dict) -> str | None:
    """The graph node (tensor or op id) a frame of ``event`` is about; None when it is about no one node."""
    field = NODE_FIELD.get(event["kind"])
    return event.get(field) if field is not None else None


def mark_after_result(frames: list[dict], start: int) -> None:
    """A `zero_grad` after the last step (`opt.step(); opt.zero_grad()` ending the loop) opens no next pass: it
    and what follows stay steps of the last pass, marked ``after_result``, so the pass ends on its gradients."""
    first = next((i for i in range(start, len(frames)) if frames[i]["kind"] == ZERO_GRAD), None)
    for f in frames[first:] if first is not None else ():
        f["after_result"] = True
