"""The trace contract in code: every event kind a run emits, the one JSON number encoder, and where a
pass starts. docs/trace.md documents each kind's fields; tests/app/test_trace_contract.py fails
when a kind is emitted that is not defined here or not documented there.

Imported by the engine's recorder, the runner (app/runner/capture.py) and the trace builder
(app/trace/build.py); it imports nothing of either.
"""
from __future__ import annotations

import math

# ----- event kinds: capture (engine/recorder.py) -----
TENSOR = "tensor"
OP = "op"
NAME = "name"
DETACH = "detach"
REQUIRES_GRAD = "requires_grad"
GRAD_MODE = "grad_mode"
MODULE = "module"
MODULE_NAMES = "module_names"
BACKWARD_BEGIN = "backward_begin"
BACKWARD_STEP = "backward_step"
ACCUMULATE = "accumulate"
RETAIN_GRAD = "retain_grad"
MARK_RETAIN_GRAD = "mark_retain_grad"
BACKWARD_END = "backward_end"
BACKWARD_ERROR = "backward_error"
INPLACE = "inplace"
ZERO_GRAD = "zero_grad"
GRAD_INPLACE = "grad_inplace"
OPTIM_STEP = "optim_step"
# a program's hook ran (Tensor.register_hook, register_post_accumulate_grad_hook, module forward/backward hooks)
HOOK = "hook"
# ----- added by the runner (app/runner/capture.py) after every backward -----
STEP_STATS = "step_stats"
# ... as a pass opens: ids of tensors and ops of older passes no later event can refer to (the program dropped them)
FORGET = "forget"
# ... when middle passes ran without recording (app/runner/quiet.py): their losses and norms, the op kinds they used,
# and the new values and gradients of the tensors recorded before them
QUIET = "quiet"

KINDS = frozenset({
    TENSOR, OP, NAME, DETACH, REQUIRES_GRAD, GRAD_MODE, MODULE, MODULE_NAMES, BACKWARD_BEGIN, BACKWARD_STEP,
    ACCUMULATE, RETAIN_GRAD, MARK_RETAIN_GRAD, BACKWARD_END, BACKWARD_ERROR, INPLACE, ZERO_GRAD, GRAD_INPLACE,
    OPTIM_STEP, STEP_STATS, FORGET, QUIET,
})
KINDS = KINDS | {HOOK}

# ----- the fields of each kind that carry values: numpy snapshots until exported, what the value budget counts -----
VALUE_FIELDS = {
    TENSOR: ("value",), BACKWARD_BEGIN: ("gradient",),
    BACKWARD_STEP: ("upstream", "upstream_parts", "contributions", "upstream_outputs"),
    ACCUMULATE: ("incoming", "before", "after"), RETAIN_GRAD: ("grad",), INPLACE: ("value",),
    GRAD_INPLACE: ("grad",), OPTIM_STEP: ("values", "state"),
    HOOK: ("grad", "replaced"),  # the gradient a program's hook saw and what it returned
}

# ----- kinds by the phase of a pass they belong to -----
BACKWARD_KINDS = frozenset({BACKWARD_BEGIN, BACKWARD_STEP, ACCUMULATE, RETAIN_GRAD, BACKWARD_END, BACKWARD_ERROR})
BACKWARD_DONE = frozenset({BACKWARD_END, BACKWARD_ERROR})  # a backward ended: what follows is its update phase
META_KINDS = frozenset({MODULE, MODULE_NAMES, STEP_STATS, FORGET, QUIET})  # describe the run: never in a frame
BUILDER_ONLY_KINDS = frozenset({FORGET, QUIET})  # read by the trace builder, never in a frame: the page never sees them


def opens_pass(event: dict) -> bool:
    """Whether `event`, coming after a backward ended (`BACKWARD_DONE`), starts the next pass.

    A pass runs up to and including a backward; what follows without recording a graph (optimizer
    steps, `w -= lr * w.grad`, ops whose `grad_fn` is null) is that backward's update phase. The first
    op that records a graph again (has a `grad_fn`), another backward or a `zero_grad` opens the next
    pass: clearing the gradients starts the next step, so a pass ends showing the gradients it made
    (issue 23 §3: with `opt.zero_grad()` first in the loop, a pass would otherwise end with every
    `.grad` None). Works on captured and exported events alike (both carry `kind` and an op's `grad_fn`).
    """
    kind = event["kind"]
    return kind == BACKWARD_BEGIN or kind == ZERO_GRAD or kind == OP and bool(event.get("grad_fn"))


# ----- budgets: how a cut string says so -----
CLIP_MARK = "…"


def clip_text(text: str, limit: int | None, *, keep_end: bool = False) -> str:
    """`text` cut to `limit` characters when longer, with a visible marker saying how much was cut:
    ``"xxxx…[+999,996 chars]"``; with `keep_end` (module paths: the leaf's own name matters) the cut
    is in the middle: ``"model.aaaa…[+69,500 chars]….weight"``. `limit` None: no limit."""
    if limit is None or len(text) <= limit:
        return text
    cut = len(text) - limit
    if keep_end:
        head = (limit + 1) // 2
        return f"{text[:head]}{CLIP_MARK}[+{cut:,} chars]{CLIP_MARK}{text[len(text) - (limit - head):]}"
    return f"{text[:limit]}{CLIP_MARK}[+{cut:,} chars]"


_NONFINITE = {math.inf: "inf", -math.inf: "-inf"}


def json_number(x):
    """A number as strict JSON carries it: non-finite floats become "nan", "inf", "-inf"; all else as is."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else _NONFINITE[x]
    return x
