"""Server glue from one source: problem(), the 500 handler, the one startup `dot`
check, and app/core importing no feature package."""

from __future__ import annotations

import ast
import logging
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import ROOT, strict_json

import app.layout.dot as dot_module
from app.api.deps import get_runs
from app.api.schemas import ErrorInfo, Problem
from app.core.config import Settings
from app.core.errors import problem_response
from app.core.problems import problem, problem_body
from app.layout import LayoutEngine, LayoutInput
from app.main import create_app

ERROR_KEYS = ["type", "message", "line", "column"]


# ---------------------------------------------------------------- problem()
def test_problem_shape():
    p = problem("Busy", "the server is busy")
    assert p == {"type": "Busy", "message": "the server is busy", "line": None, "column": None}
    assert list(p) == ERROR_KEYS
    assert problem("SyntaxError", "bad", line=3, column=7) == {"type": "SyntaxError", "message": "bad", "line": 3,
                                                               "column": 7}
    ErrorInfo.model_validate(p)
    body = problem_body("RequestError", "too big")
    assert body == {"detail": "too big", "error": problem("RequestError", "too big")}
    assert problem_body("RequestError", "bad", detail=[{"loc": ["body"]}])["detail"] == [{"loc": ["body"]}]
    Problem.model_validate(body)


def test_problem_response():
    r = problem_response(429, "Busy", "wait", headers={"Retry-After": "1"})
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    assert strict_json(r.body) == {"detail": "wait", "error": problem("Busy", "wait")}


def test_every_http_error_has_the_problem_shape(client):
    answers = {
        404: client.get("/api/no-such-route"),
        405: client.get("/api/run"),
        413: client.post("/api/run", content=b"x" * 1_100_000, headers={"content-type": "application/json"}),
        422: client.post("/api/run", json={"nope": 1}),
    }
    for status, r in answers.items():
        assert r.status_code == status, (status, r.text[:200])
        d = strict_json(r.text)
        assert set(d) == {"detail", "error"} and list(d["error"]) == ERROR_KEYS, (status, d)
        assert isinstance(d["error"]["type"], str) and isinstance(d["error"]["message"], str)
    assert strict_json(answers[404].text) == {"detail": "Not Found", "error": problem("NotFound", "Not Found")}
    assert strict_json(answers[405].text)["error"]["type"] == "MethodNotAllowed"
    assert strict_json(answers[413].text)["error"]["type"] == "RequestError"
    d = strict_json(answers[422].text)
    assert d["error"]["type"] == "RequestError" and isinstance(d["detail"], list) and d["detail"][0]["loc"]


def test_stream_query_source_is_limited_by_the_setting():
    app = create_app(Settings(workers=1, max_request_bytes=1024))
    app.dependency_overrides[get_runs] = lambda: None  # never reached: no lifespan, no pool
    r = TestClient(app).get("/api/stream", params={"source": "#" * 1025})
    assert r.status_code == 422
    d = strict_json(r.text)
    assert d["error"]["type"] == "RequestError" and d["detail"][0]["loc"] == ["query", "source"]
    assert "1024" in d["detail"][0]["msg"]


# ---------------------------------------------------------------- unhandled exceptions
@pytest.fixture(scope="module")
def bare_app():
    """An app whose lifespan never runs (no pool), with a route that has a bug."""
    app = create_app(Settings(workers=1))

    @app.get("/api/boom")
    async def boom():
        raise RuntimeError("secret detail /etc/flowgrad/key")

    return app


def test_unhandled_exception_is_a_500_with_a_json_body_and_a_log_line(bare_app, caplog):
    c = TestClient(bare_app, raise_server_exceptions=False)
    with caplog.at_level(logging.ERROR, logger="flowgrad"):
        r = c.get("/api/boom")
    assert r.status_code == 500 and r.headers["content-type"].startswith("application/json")
    d = strict_json(r.text)
    assert d["error"]["type"] == "InternalServerError" and list(d["error"]) == ERROR_KEYS
    assert isinstance(d["detail"], str)
    assert "secret" not in r.text and "Traceback" not in r.text and "RuntimeError" not in r.text
    records = [rec for rec in caplog.records if rec.name == "flowgrad" and rec.levelno == logging.ERROR]
    assert len(records) == 1 and records[0].exc_info and records[0].exc_info[0] is RuntimeError
    assert "/api/boom" in records[0].getMessage()


def test_a_failing_dependency_is_a_500_not_a_400(bare_app, caplog):
    c = TestClient(bare_app, raise_server_exceptions=False)
    with caplog.at_level(logging.ERROR, logger="flowgrad"):
        r = c.get("/healthz")  # no lifespan: the pool dependency fails
    assert r.status_code == 500 and strict_json(r.text)["error"]["type"] == "InternalServerError"
    assert any(rec.exc_info for rec in caplog.records if rec.name == "flowgrad")


# ---------------------------------------------------------------- the dot check
def test_dot_is_checked_once_at_startup(monkeypatch):
    found: list[str] = []
    versions: list[str] = []
    real_which, real_version = shutil.which, dot_module.dot_version

    def which(name, *a, **kw):
        if "dot" in Path(str(name)).name:
            found.append(name)
        return real_which(name, *a, **kw)

    def version(path):
        versions.append(path)
        return real_version(path)

    monkeypatch.setattr(shutil, "which", which)
    monkeypatch.setattr(dot_module, "dot_version", version)
    settings = Settings(workers=1)
    app = create_app(settings)
    assert found == [settings.dot_binary] and len(versions) == 1
    with TestClient(app) as c:
        src = "import torch\nx = torch.tensor(2.0, requires_grad=True)\nz = (x + 3) ** 2\nz.backward()\n"
        d = c.post("/api/run", json={"source": src}).json()
        assert d["error"] is None and d["passes"][0]["graph"]["layout"] == "dot"
        assert c.get("/healthz").json()["graphviz"] == app.state.graphviz.version
    assert found == [settings.dot_binary] and len(versions) == 1, "no check after startup"
    assert Path(app.state.graphviz.path).is_absolute()


def test_the_workers_dot_is_not_looked_up_again(monkeypatch):
    path = shutil.which("dot")

    def no_lookup(*a, **kw):
        raise AssertionError("dot was looked up again")

    monkeypatch.setattr(shutil, "which", no_lookup)
    e = LayoutEngine.from_settings(Settings(), dot_binary=path)
    try:
        g = LayoutInput([("a", "tensor|input|", 64.0, 40.0), ("b", "op|mul|", 30.0, 30.0)], [("e", "a", "b")], [])
        assert e.layout(g).method == "dot" and e.dot.binary == path
    finally:
        e.close()


def test_missing_dot_is_refused_by_create_app():
    with pytest.raises(dot_module.DotMissing, match="Graphviz"):
        create_app(Settings(dot_binary="no-such-dot-binary"))


# ---------------------------------------------------------------- dependency direction
FEATURE_PACKAGES = ("engine", "sandbox")  # and every app.* package but app.core
SHARED_CONTRACT = "engine.trace_events"  # the trace contract (imports only math): engine and server share it by design


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):  # every import, also the lazy ones inside functions
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative to app.core
                base = ["app", "core"][: max(0, 2 - (node.level - 1))]
                out.append(".".join(base + ([node.module] if node.module else [])))
            else:
                out.append(node.module or "")
    return out


def test_core_imports_no_feature_package():
    core = ROOT / "app" / "core"
    files = sorted(core.glob("*.py"))
    assert len(files) >= 4
    bad = []
    for f in files:
        for name in _imports(f):
            top = name.split(".")[0]
            if name == SHARED_CONTRACT:
                continue
            if top in FEATURE_PACKAGES or name == "app" or (top == "app" and not name.startswith("app.core")):
                bad.append(f"{f.name}: {name}")
    assert not bad, bad


def test_import_graph_scanner_sees_lazy_and_relative_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from . import config\nfrom ..trace import values\n"
                 "def g():\n    from engine.sandbox import SandboxLimits\n    import app.runner.pool\n")
    assert _imports(f) == ["app.core", "app.trace", "engine.sandbox", "app.runner.pool"]
