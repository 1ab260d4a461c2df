"""One app (and one worker pool) for the whole tests/app session; TestClient drives it in-process."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import strict_json

from app.core.config import Settings
from app.main import create_app


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings(workers=2, queue_limit=256)


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
        assert r.status_code == 200, r.text[:300]
        return strict_json(r.text)

    return _run
