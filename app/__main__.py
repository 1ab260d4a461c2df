"""``python -m app``: serve on settings.host:settings.port (127.0.0.1:8000 by default)."""

from __future__ import annotations

import sys


def main() -> int:
    from app.core.config import get_settings

    settings = get_settings()
    # building the app makes the startup checks; without Graphviz it exits with a message (app.main)
    import uvicorn

    import app.main  # noqa: F401

    uvicorn.run("app.main:app", host=settings.host, port=settings.port, log_level="info",
                ws_max_size=1 << 20, timeout_graceful_shutdown=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
