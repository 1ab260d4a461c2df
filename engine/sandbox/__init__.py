"""Run untrusted PyTorch-dialect programs on the engine, under an allowlist interpreter.

    from engine.sandbox import run_program, SandboxLimits, RunOutcome, ProgramError
    outcome = run_program(source, SandboxLimits(), recorder=rec, on_print=send)

`run_program` never raises for anything the program does: errors come back as
`outcome.error = {"type", "message", "line", "column"}` with `outcome.globals` holding the
top-level variables as they were when the error happened. The worker process around it is the
real boundary (rlimits, hard kill); this interpreter is the filter.
"""
from .errors import ProgramError
from .interpreter import RunOutcome, SandboxLimits, run_program

__all__ = ["run_program", "SandboxLimits", "RunOutcome", "ProgramError"]
