"""No source file over 800 lines (issue 20): a longer file is split by theme, not scrolled through.

Source is what people read and change: code, styles, templates, scripts and build files tracked by git. Data
(.json, .jsonl, .svg, images, fonts, licence texts, notebooks) and Markdown are not counted, nor the vendored
libraries under static/vendor/ (kept as their authors ship them).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 800
SOURCE_SUFFIXES = {".py", ".js", ".mjs", ".css", ".html", ".sh", ".toml", ".cfg", ".ini", ".yml", ".yaml", ".in"}
SOURCE_NAMES = {"Dockerfile", "Makefile"}
EXEMPT_FOLDERS = ("static/vendor/",)


def tracked_source_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    paths = [p for p in listed.decode().split("\0") if p]
    return [p for p in paths if not p.startswith(EXEMPT_FOLDERS) and (ROOT / p).is_file()
            and (Path(p).suffix in SOURCE_SUFFIXES or Path(p).name in SOURCE_NAMES)]


def test_the_listing_finds_the_source():
    files = tracked_source_files()
    assert "engine/op_table.py" in files and "Makefile" in files and "pyproject.toml" in files
    assert not any(p.endswith((".json", ".md", ".svg", ".png")) or p.startswith("static/vendor/") for p in files)


def test_no_source_file_is_over_800_lines():
    too_long = {}
    for path in tracked_source_files():
        with open(ROOT / path, "rb") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            too_long[path] = lines
    assert not too_long, f"source files over {MAX_LINES} lines (split them by theme): {too_long}"
