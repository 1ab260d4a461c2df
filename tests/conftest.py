"""Fixtures shared by every test folder. One Chromium for the whole session: Playwright's sync API runs one
event loop per thread, so a second ``sync_playwright()`` (another folder's own browser) would be refused."""

from __future__ import annotations

import os
from pathlib import Path

# NOTE: numpy's OpenBLAS on one thread, set before anything imports numpy, as the server's workers run it
# (app/runner/worker.py). Its threads spin while they wait: on a 2-core machine shared with the app's worker
# processes, the in-process sandbox tests ran LeNet (example 20) in 0.4–2 s instead of 0.02 s and hit
# time_limit_s. PyTorch's own threads (OMP_NUM_THREADS) stay as users have them: its sums, and so the last
# printed digit of a float32 loss, depend on them.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture
def torch_one_thread():
    """The installed PyTorch on one thread, as the engine computes (a long sum is split between ATen's threads);
    the test is skipped where PyTorch is not installed."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(before)
CHROMIUM = os.environ.get("FLOWGRAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (never a downloaded browser); skips when either is missing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (make test installs Debian's chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
