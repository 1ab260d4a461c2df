"""The widget in real JupyterLab: start JupyterLab headless (a token, a free port) on a copy of
examples/flowgrad.ipynb, open it in headless Chromium, run all cells, step the first widget back and forth,
and screenshot it to test-artifacts/notebook-jupyterlab.png.

    pip install jupyterlab            # not a test dependency: this script only
    .venv/bin/python scripts/notebook_screenshot.py [--keep]

Exits non-zero when a widget does not render. Chromium: FLOWGRAD_CHROMIUM or /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("FLOWGRAD_CHROMIUM", "/usr/bin/chromium")
NOTEBOOK = ROOT / "examples" / "flowgrad.ipynb"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(workdir: Path, port: int, token: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    log = open(workdir / "jupyterlab.log", "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={workdir}", "--ServerApp.disable_check_xsrf=False",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.extension_manager=readonly"]
        + (["--allow-root"] if os.geteuid() == 0 else []),  # a container's root
        cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"JupyterLab exited: see {workdir / 'jupyterlab.log'}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit("JupyterLab did not answer within 90 s")


def widget_frames(page):
    return [f for f in page.frames if f.parent_frame is not None and f.url.startswith("about:srcdoc")]


def drive(port: int, token: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{port}/lab/tree/flowgrad.ipynb?token={token}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60000)
        page.wait_for_function("() => document.querySelector('.jp-Notebook') && "
                               "!document.querySelector('.jp-Dialog')", timeout=60000)
        page.wait_for_selector(".jp-mod-idle, [data-status='idle'], .jp-Notebook-ExecutionIndicator", timeout=60000)
        time.sleep(2)  # the kernel connects
        page.click("text=Run", timeout=10000)  # the menu bar's Run menu
        page.click("text=Run All Cells", timeout=10000)
        page.wait_for_selector("iframe.flowgrad-widget", timeout=90000)
        deadline = time.time() + 120
        while time.time() < deadline:
            frames = widget_frames(page)
            ready = [f for f in frames if f.evaluate("document.body && document.body.dataset.ready != null")]
            if len(ready) >= 3:
                break
            time.sleep(1)
        frames = widget_frames(page)
        print(f"{len(frames)} widget frames, ready: {[f.evaluate('document.body.dataset.ready') for f in frames]}")
        first = page.locator("iframe.flowgrad-widget").first
        first.scroll_into_view_if_needed()
        f = widget_frames(page)[0]
        f.wait_for_function("document.body && document.body.dataset.ready != null", timeout=60000)
        f.evaluate("window.__fg.playing && document.getElementById('play').click()")
        inner = page.frame_locator("iframe.flowgrad-widget").first
        inner.get_by_role("button", name="Jump to end").click()
        n = int(f.evaluate("document.body.dataset.steps"))
        for _ in range(3):
            inner.get_by_role("button", name="Step back").click()
        k = int(f.evaluate("document.body.dataset.step"))
        assert k == n - 3, (k, n)
        node = f.locator("g[data-node-id]").first
        node.click()
        f.wait_for_selector("#inspector .katex, #inspector h2", timeout=10000)
        no_news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's "get notified about news?" toast
        if no_news.count():
            no_news.first.click()
        out.parent.mkdir(exist_ok=True)
        for i, path in ((0, out), (1, out.with_name(out.stem + "-training.png"))):
            page.evaluate("i => document.querySelectorAll('iframe.flowgrad-widget')[i].closest('.jp-Cell')"
                          ".scrollIntoView({block: 'start'})", i)
            time.sleep(1)
            page.screenshot(path=str(path))
        print(f"step {k} of {n}; screenshots {out}, {out.with_name(out.stem + '-training.png')}")
        if errors:
            print("page errors:", *errors, sep="\n  ")
        browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="keep the working folder (the log, the saved notebook)")
    ap.add_argument("--out", type=Path, default=ARTIFACTS / "notebook-jupyterlab.png")
    args = ap.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="flowgrad-lab-"))
    shutil.copy(NOTEBOOK, workdir / "flowgrad.ipynb")  # the example stays as committed (outputs cleared)
    port, token = free_port(), secrets.token_hex(16)
    proc = start_lab(workdir, port, token)
    try:
        drive(port, token, args.out)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("kept", workdir)


if __name__ == "__main__":
    main()
