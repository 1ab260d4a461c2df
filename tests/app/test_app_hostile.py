"""Every hostile input: a clear error within the time limit, a benign run at the same moment still
succeeds, no file appears, nothing of the host reaches the answer."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from flowgrad_testing import ROOT, SHARED, strict_json

# The shared list beside the checkout when present (CI has it), else the copy kept in tests/sandbox.
_HOSTILE_FILE = SHARED / "hostile-inputs.jsonl"
if not _HOSTILE_FILE.exists():
    _HOSTILE_FILE = Path(__file__).resolve().parents[1] / "sandbox" / "hostile_inputs.jsonl"
HOSTILE = [json.loads(line) for line in _HOSTILE_FILE.read_text().splitlines() if line.strip()]
BENIGN = "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x + 1\ny.backward()\nprint(x.grad)\n"
NO_ERROR_OK = {"numeric"}  # log(0)/0 is a valid program: its answer is nan/inf, strictly encoded


def host_secrets() -> list[str]:
    out = [str(ROOT), "/root", "site-packages", "Traceback", "/usr/lib", ".venv", "/home/"]
    for key in ("HOME", "PATH", "VIRTUAL_ENV", "PYTHONPATH", "HOSTNAME"):
        v = os.environ.get(key)
        if v and len(v) >= 6:
            out.append(v)
    return out


def listing(folder: Path) -> set[str]:
    skip = {".pytest_cache", "test-artifacts", "__pycache__", ".hypothesis"}
    try:
        return {p.name for p in folder.iterdir() if p.name not in skip}
    except OSError:
        return set()


@pytest.mark.slow
def test_hostile_inputs_with_concurrent_benign(client, settings):
    before = {d: listing(d) for d in (ROOT, Path.cwd())}
    secrets = host_secrets()

    def post(src):
        t = time.monotonic()
        r = client.post("/api/run", json={"source": src})
        return r, time.monotonic() - t

    with ThreadPoolExecutor(4) as ex:
        for item in HOSTILE:
            hostile = ex.submit(post, item["source"])
            benign = ex.submit(post, BENIGN)
            r, elapsed = hostile.result()
            rb, _ = benign.result()
            what = f"{item['category']}: {item['source'][:60]!r}"
            assert r.status_code == 200, what
            d = strict_json(r.text)
            if item["category"] not in NO_ERROR_OK:
                err = d["error"]
                assert err is not None and err["type"] and err["message"], what
            assert d["elapsed_ms"] <= settings.hard_kill_s * 1000 + 1000, what
            for s in secrets:
                assert s not in r.text, f"{what} leaks {s!r}"
            assert rb.status_code == 200
            db = strict_json(rb.text)
            assert db["error"] is None and db["stdout"] == "tensor(4.)\n", what
    after = {d: listing(d) for d in before}
    for d in before:
        assert after[d] - before[d] == set(), f"files appeared in {d}: {after[d] - before[d]}"


def test_state_does_not_leak_between_runs(run):
    d = run("import torch\nfrom torch import nn\nnn.ReLU.forward = lambda self, x: x * 0\n")
    assert d["error"] is not None
    d = run("import torch\nfrom torch import nn\nx = nn.ReLU()(torch.tensor([1.0, -1.0]))\nprint(x)\n")
    assert d["stdout"] == "tensor([1., 0.])\n"
    # a global of one run is not visible in the next
    run("import torch\nsecret = torch.tensor(42.0)\n")
    d = run("print(secret)\n")
    assert d["error"]["type"] == "NameError"
    # the seed is reset for every run: the same program gives the same numbers
    a = run("import torch\nx = torch.randn(3)\n")["variables"]["x"]["value"]
    b = run("import torch\ny = torch.randn(5)\nx = torch.randn(3)\n")["variables"]["y"]["value"][:3]
    assert a == b


def test_a_crash_of_the_run_process_is_reported_and_the_server_goes_on(run):
    # NOTE: hashing data nested ~180,000 deep overflows CPython's C stack: the forked run process dies
    d = run("t = ()\nfor i in range(20):\n    for j in range(9000):\n        t = (t,)\nd = {t: 1}\nprint('survived')\n")
    assert d["error"]["type"] == "RecursionError" and "nested too deeply" in d["error"]["message"]
    assert run("print(1 + 1)\n")["stdout"] == "2\n"
