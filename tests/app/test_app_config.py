"""Settings: every limit with the contract's default, env overrides, SandboxLimits, dependency override."""

from __future__ import annotations

import subprocess
import sys

import pytest
from flowgrad_testing import ROOT

from app.core.config import LIMIT_FIELDS, Settings, get_settings
from app.layout.dot import DotMissing, check_dot
from app.runner.worker import sandbox_limits

CONTRACT = {"max_source_chars": 65_536, "max_ast_depth": 50, "max_ast_nodes": 40_000, "max_graph_nodes": 10_000,
            "max_tensor_elements": 4_000_000, "max_live_elements": 16_000_000, "max_int_bits": 4096,
            "max_loop_iterations": 1_000_000, "max_output_bytes": 65_536, "time_limit_s": 20.0, "hard_kill_s": 25.0,
            "max_wall_s": 60.0, "max_steps": 50_000_000, "max_request_bytes": 1_048_576,
            # fair shares (issue 22): who is asking and how much of the server one identity may hold
            "identity_secret": None, "identity_cookie": "flowgrad_id", "identities_per_address": 200,
            "identity_window_s": 600.0, "identity_queue_limit": 2, "busy_retry_after_s": 2,
            "run_store_entry_bytes": 4_096, "max_sessions_per_identity": 3, "session_unjoined_s": 600.0,
            "max_followers_per_identity": 3, "max_streams_per_identity": 8, "hub_max_bytes": 32_000_000,
            "send_timeout_s": 30.0, "send_chunk_bytes": 65_536,
            "max_file_bytes": 64_000_000, "max_files": 100}


def test_defaults_match_the_contract():
    s = Settings()
    for k, v in CONTRACT.items():
        assert getattr(s, k) == v, k
    assert s.workers >= 1 and s.max_steps > 0


def test_env_override(monkeypatch):
    monkeypatch.setenv("FLOWGRAD_TIME_LIMIT_S", "1.5")
    monkeypatch.setenv("FLOWGRAD_WORKERS", "3")
    s = Settings()
    assert s.time_limit_s == 1.5 and s.workers == 3
    with pytest.raises(ValueError):
        Settings(time_limit_s=5, hard_kill_s=1)
    with pytest.raises(ValueError):
        Settings(hard_kill_s=5, max_wall_s=1)


def test_sandbox_limits_get_every_interpreter_limit():
    s = Settings(max_loop_iterations=123, max_steps=4567)
    lim = sandbox_limits(s)
    assert lim.max_loop_iterations == 123 and lim.max_steps == 4567
    for name in LIMIT_FIELDS:
        if hasattr(lim, name):
            assert getattr(lim, name) == getattr(s, name)


def test_settings_dependency_override(app, settings):
    assert app.dependency_overrides[get_settings]() is settings


def test_refuses_to_start_without_dot():
    with pytest.raises(DotMissing, match="Graphviz"):
        check_dot(Settings(dot_binary="no-such-dot-binary").dot_binary)
    env = {"FLOWGRAD_DOT_BINARY": "no-such-dot-binary", "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "Graphviz" in p.stderr and "Traceback" not in p.stderr
