"""The error shape, written once for the whole server.

``problem()`` is the error object every failure carries (docs/trace.md §2, ``ErrorInfo`` in
``app/api/schemas.py``): ``{"type", "message", "line", "column"}``. It is the ``error`` of a trace
(a run that failed), the ``error`` of an HTTP error answer (``problem_body``: ``{"detail",
"error"}``, see ``app.core.errors.problem_response``) and what the pool hands a route when a run
could not finish (``app.core.answer.failed_answer``: an answer with nothing in it but that error).

Plain dicts, no imports: the workers use it too.
"""

from __future__ import annotations

from typing import Any


def problem(type_: str, message: str, *, line: int | None = None, column: int | None = None) -> dict:
    """The error object: ``{"type": "Busy", "message": "...", "line": null, "column": null}``."""
    return {"type": type_, "message": message, "line": line, "column": column}


def problem_body(type_: str, message: str, *, detail: Any = None) -> dict:
    """An HTTP error answer's body: ``{"detail": detail or message, "error": problem(type_, message)}``."""
    return {"detail": message if detail is None else detail, "error": problem(type_, message)}
