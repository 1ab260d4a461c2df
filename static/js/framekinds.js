// The frame kinds the page handles: every event kind of the trace contract (engine/trace_events.py KINDS,
// docs/trace.md §1), grouped by how a pass shows it. tests/app/test_frame_kinds.py checks this list
// against the contract both ways, and that the page's code compares frames with no other kind.
export const FRAME_KINDS = [
  // a step of the timeline whose change is drawn (frames.js applyFrame)
  "tensor", "op", "inplace", "backward_begin", "backward_step", "accumulate", "retain_grad", "hook",
  "backward_end", "backward_error", "zero_grad", "optim_step",
  // a step of the timeline that changes nothing drawn: its caption names it
  "mark_retain_grad", "grad_inplace",
  // carried along with the step around them: names, modes and module paths (CARRIED_KINDS)
  "name", "detach", "requires_grad", "grad_mode", "module", "module_names",
  // the runner's figures after each backward: the loss curve reads them from trace.steps, never a pass's frame
  "step_stats",
];

// Not steps of their own: applied with the step they come with (or before the first one).
export const CARRIED_KINDS = new Set(["name", "module", "module_names", "requires_grad", "grad_mode", "detach"]);
