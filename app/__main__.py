"""``python -m app``: serve on settings.host:settings.port (127.0.0.1:8000 by default)."""

from __future__ import annotations

import sys


def main() -> int:
    from app.core.config import get_settings
    from app.layout.dot import dot_path, missing_dot_message

    settings = get_settings()
    if dot_path(settings.dot_binary) is None:
        print(f"error: {missing_dot_message(settings.dot_binary)}", file=sys.stderr)
        return 1
    import uvicorn

    uvicorn.run("app.main:app", host=settings.host, port=settings.port, log_level="info",
                ws_max_size=1 << 20, timeout_graceful_shutdown=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
