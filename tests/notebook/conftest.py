"""Notebook tests: flowgrad.trace, the %%flowgrad magic run by nbconvert, the widget's ES module in Chromium.

The browser is the session's one Debian Chromium (tests/conftest.py); a test that
needs a notebook package (anywidget, nbconvert) skips when the `notebook` extra is not installed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# the browser is the session's one Chromium: the `browser` fixture of tests/conftest.py
