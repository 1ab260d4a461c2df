"""A real ``redis-server`` (Debian's package) on a free port, for the tests that share state through Redis."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ping(port: int) -> bool:
    out = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True)
    return out.stdout.strip() == b"PONG"


@contextlib.contextmanager
def redis_server(data_dir):
    """Yield (url, port) of a fresh redis-server; skip the test where Debian's redis-server is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (`make test` installs Debian's redis-server)")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir),
                             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not ping(port):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", port
    finally:
        subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if proc.poll() is None:
            proc.kill()
