"""Several server processes without a broker split the state: each keeps its own runs, cancels and class sessions.

``uvicorn --workers 2`` (or a supervisor starting the app twice) makes sibling processes: same parent, same
settings. Each takes an exclusive ``flock`` named by its parent and port; without ``broker_url`` the second one
refuses to start (``allow_unshared_processes``: it starts with a loud warning instead, for a sticky-routing
setup, README "Deployment"). With a broker nothing is split, so nothing is checked.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger("flowgrad")

UNSHARED = ("another flowgrad server process with the same parent and port is running without FLOWGRAD_BROKER_URL: "
            "folded groups, search, recorded passes, cancel and class sessions would live in one process each and "
            "fail on the other. Set FLOWGRAD_BROKER_URL=redis://… on every process, or route each client to one "
            "process (sticky sessions, README 'Deployment') and set FLOWGRAD_ALLOW_UNSHARED_PROCESSES=true.")


class UnsharedProcesses(RuntimeError):
    """A sibling server process already serves without a broker."""


def lock_path(port: int, parent: int | None = None) -> Path:
    return Path(tempfile.gettempdir()) / f"flowgrad-serving-{parent or os.getppid()}-{port}.lock"


class Claim:
    """This process's hold on its lock file; several apps in one process (tests) share it, the last ``close`` frees it."""

    held: dict[Path, list] = {}  # path → [open file, apps holding it]

    def __init__(self, path: Path):
        self.path = path
        self.closed = False

    def close(self) -> None:
        entry = Claim.held.get(self.path)
        if self.closed or entry is None:
            return
        self.closed = True
        entry[1] -= 1
        if entry[1] == 0:
            del Claim.held[self.path]
            entry[0].close()


def claim(port: int, *, allowed: bool, parent: int | None = None) -> Claim | None:
    """Hold this process's claim (``close`` it when the app stops). A sibling process already holds one: raise
    ``UnsharedProcesses``, or log the warning and go on (None) when ``allowed``."""
    path = lock_path(port, parent)
    entry = Claim.held.get(path)
    if entry is None:
        handle = open(path, "a+")  # noqa: SIM115 - held while the app serves; the lock dies with the process
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            if not allowed:
                raise UnsharedProcesses(UNSHARED) from None
            log.warning("%s %s", "!" * 20, UNSHARED)
            return None
        entry = Claim.held[path] = [handle, 0]
    entry[1] += 1
    return Claim(path)
