"""/healthz says the process lives; /readyz says it can take a run: a ready worker, and the broker when configured."""

from __future__ import annotations

import subprocess

from fastapi.testclient import TestClient
from redis_process import redis_server

from app.core.config import Settings
from app.main import create_app


def one_worker(**extra) -> Settings:
    return Settings(workers=1, time_limit_s=2.0, ready_wait_s=0.5, **extra)


def test_ready_with_a_worker_and_unready_when_workers_are_all_down():
    app = create_app(one_worker())
    with TestClient(app) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json() == {"status": "ready", "checks": {"workers": True}, "workers_ready": 1}
        client.portal.call(app.state.pool.stop)  # every worker down, none coming back
        down = client.get("/readyz")
        assert down.status_code == 503
        assert down.json()["checks"] == {"workers": False}
        assert client.get("/healthz").status_code == 200  # alive: an orchestrator routes elsewhere, kills nothing


def test_unready_while_the_broker_is_down(tmp_path):
    with redis_server(tmp_path) as (url, port):
        app = create_app(one_worker(broker_url=url, broker_ping_timeout_s=0.5))
        with TestClient(app) as client:
            ready = client.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"] == {"workers": True, "broker": True}
            subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
            down = client.get("/readyz")
            assert down.status_code == 503
            assert down.json()["checks"] == {"workers": True, "broker": False}
            assert client.get("/healthz").status_code == 200
