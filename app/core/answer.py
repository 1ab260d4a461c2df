"""The answer of a run (``POST /api/run``; the stream's ``done`` event), its shape written once.

``run_answer`` builds it: the worker for every run it finishes, the server and the notebook for a run
that could not (``failed_answer``: only the error). ``app/api/schemas.py``'s ``Trace`` documents the
same keys, and ``tests/app/test_answer_shape.py`` fails when the two disagree. Plain dicts and bytes, no
engine: the server process builds failed answers too.
"""

from __future__ import annotations

import orjson

# between a stream's events wherever several go together (JSON has no raw newline): in one worker message, one
# HTTP chunk, a shared stream's record
EVENT_SEPARATOR = b"\n"
# the keys, in the order the answer carries them; a stream's `done` has "type" first and no "passes"
ANSWER_KEYS = ("stdout", "error", "variables", "ops", "passes", "steps", "modules", "figures", "truncated",
               "truncated_reason")
TIMING_KEYS = ("elapsed_ms", "timing_ms")  # added last, when the run is finished (stamp_timing)
# the limits on how long a run goes: one that stops it leaves its answer cut there (what ran until then is kept)
LENGTH_LIMITS = ("time_limit_s", "max_wall_s", "hard_kill_s", "max_steps")


def stopped_reason(error: dict | None) -> str | None:
    """Why the answer of a run a length limit stopped is cut short: its error's message ("stopped after 600 of
    2,000 iterations of the loop on line 22: the run used its 20 s (limit time_limit_s = 20)"); else None."""
    if not error or error.get("type") not in ("LimitExceeded", "TimeoutError"):
        return None
    message = str(error.get("message") or "")
    return message if any(f"limit {name} =" in message for name in LENGTH_LIMITS) else None


def run_answer(*, stdout: str = "", error: dict | None = None, variables: dict | None = None,
               ops: dict | None = None, passes: list | None = None, steps: list | None = None,
               modules: dict | None = None, figures: list | None = None, truncated: bool = False,
               stream: bool = False) -> dict:
    """The answer (docs/trace.md §2) without its timing; with ``stream``, the stream's closing ``done`` event
    instead (``"type"`` first, no ``passes``: they went as ``pass`` events). ``truncated_reason`` starts
    null, or says why a length limit stopped the run (``stopped_reason``): whoever cuts something sets both it
    and ``truncated``."""
    answer: dict = {"type": "done"} if stream else {}
    answer.update(stdout=stdout, error=error, variables={} if variables is None else variables,
                  ops={} if ops is None else ops)
    if not stream:
        answer["passes"] = [] if passes is None else passes
    answer.update(steps=[] if steps is None else steps, modules={} if modules is None else modules,
                  figures=[] if figures is None else figures, truncated=truncated, truncated_reason=None)
    stopped = stopped_reason(error)
    if stopped is not None:
        answer.update(truncated=True, truncated_reason=stopped)
    return answer


def stamp_timing(answer: dict, elapsed_ms: float, timing_ms: dict[str, float]) -> None:
    """The run's wall time (ms since it started) and its parts: ``start`` (to the run process having the
    program), ``run`` (the program), ``trace`` (building and fitting the answer after it)."""
    answer["elapsed_ms"] = elapsed_ms
    answer["timing_ms"] = timing_ms


def failed_answer(error: dict, *, stream: bool = False) -> bytes:
    """A run that could not finish (busy, cancelled, its worker died): an answer with only ``error``."""
    return orjson.dumps(run_answer(error=error, stream=stream))
