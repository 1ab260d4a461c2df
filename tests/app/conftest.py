"""One app (and one worker pool) for the whole tests/app session; TestClient drives it in-process."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import strict_json

from app.core.config import Settings
from app.main import create_app


@pytest.fixture(scope="session")
def settings() -> Settings:
    # the run budgets of the earlier defaults: hostile cases stop in a second or two (the server's own
    # budgets, for real programs whole, are pinned in test_app_config.py)
    return Settings(workers=2, queue_limit=256, time_limit_s=2.0, max_loop_iterations=10_000, max_steps=1_000_000)


@pytest.fixture(scope="session")
def app(settings):
    return create_app(settings)


@pytest.fixture(scope="session")
def client(app):
    with TestClient(app) as c:
        yield c


@pytest.fixture
def run(client):
    def _run(source: str, **extra):
        r = client.post("/api/run", json={"source": source, **extra})
        assert r.status_code == 200, (r.text[:300], client.get("/healthz").text)
        return strict_json(r.text)

    return _run
