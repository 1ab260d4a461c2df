"""Browser tests: Playwright driving Debian's Chromium (never a downloaded browser).

The server is the real app (`uvicorn app.main:app` on a free port) when `app/main.py` exists and
`POST /api/run` answers; otherwise the tiny fixture server in fixture_server.py (hand-written
traces). FLOWGRAD_BROWSER_SERVER=app|fixture forces one. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# the session's one Chromium (the `browser` fixture) is in tests/conftest.py, shared with tests/notebook;
# bench/ and scripts/ import this file with only tests/browser on the path
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from tests.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402,F401


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post_json(url: str, payload: dict, timeout: float = 30) -> tuple[int, dict | None]:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None
    except Exception:  # noqa: BLE001 — not up yet
        return 0, None


def _start_app():
    if not (ROOT / "app" / "main.py").exists():
        return None
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        # every browser of the suite comes from 127.0.0.1: each keeps its own identity however many there are
        # and a class run's progress goes out often enough that a test's loop is seen mid-run on a fast machine
        env={**os.environ, "FLOWGRAD_IDENTITIES_PER_ADDRESS": "1000000", "FLOWGRAD_CLASS_PROGRESS_EVERY_S": "0.1"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            return None
        status, body = _post_json(url + "/api/run", {"source": "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()\n"}, 5)
        if status == 200 and body and body.get("passes") and body["passes"][0].get("graph"):
            return proc, url
        time.sleep(0.3)
    proc.terminate()
    return None


@pytest.fixture(scope="session")
def server():
    """{"url", "kind": "app"|"fixture"}"""
    want = os.environ.get("FLOWGRAD_BROWSER_SERVER", "auto")
    started = _start_app() if want in ("auto", "app") else None
    if started:
        proc, url = started
        yield {"url": url, "kind": "app"}
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        return
    if want == "app":
        pytest.fail("FLOWGRAD_BROWSER_SERVER=app but the app did not start or POST /api/run did not answer")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fixture_server

    srv, url = fixture_server.start()
    # "engine": the fixture server builds traces live from the engine (tests/browser/fixtures/make_fixtures.py)
    yield {"url": url, "kind": "engine" if fixture_server.LIVE else "fixture"}
    srv.shutdown()


class PageErrors(list):
    kind = "app"

    def check(self):
        bad = [e for e in self if "favicon" not in e]
        assert not bad, "page errors:\n" + "\n".join(bad)


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    pg = ctx.new_page()
    errors = PageErrors()
    errors.kind = server["kind"]
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    pg.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    pg.errors = errors
    pg.base = server["url"]
    pg.server_kind = server["kind"]
    yield pg
    ctx.close()


@pytest.fixture
def shot():
    def save(page, name: str):
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return save
