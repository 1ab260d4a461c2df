"""The session's run service (``app.runner.local.LocalRunService``): one of the server's own workers, started on
first use and stopped at exit, so a notebook runs programs in the server's sandbox with its limits and trace."""

from __future__ import annotations

import atexit

from app.runner.local import LocalRunService

_service: LocalRunService | None = None


def service() -> LocalRunService:
    """The session's run service (its worker starts on the first run, stops at exit)."""
    global _service
    if _service is None:
        _service = LocalRunService()
        atexit.register(_service.close)
    return _service
