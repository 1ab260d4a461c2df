"""Run untrusted PyTorch-dialect programs on the engine, under an allowlist interpreter.

    import engine
    from sandbox import run_program, backend_for, SandboxLimits, RunOutcome, ProgramError
    outcome = run_program(source, limits, backend_for(engine), recorder=rec, on_print=send)

The sandbox uses the engine only through the Backend built from the engine package the caller hands
in; the engine knows nothing of the sandbox. `limits` carries every value (the server builds it from
its Settings). `run_program` never raises for anything the program does: errors come back as
`outcome.error = {"type", "message", "line", "column"}` with `outcome.globals` holding the top-level
variables as they were when the error happened. The worker process around it is the real boundary
(rlimits, hard kill); this interpreter is the filter.
"""
from .backend import Backend, backend_for
from .budgets import SandboxLimits
from .errors import ProgramError
from .interpreter import RunOutcome, run_program

__all__ = ["run_program", "backend_for", "Backend", "SandboxLimits", "RunOutcome", "ProgramError"]
