#!/usr/bin/env bash
# `make docker-test` (not part of `make test`): build the image, run it as operators do (read-only root, /tmp a
# tmpfs, non-root, tini), and check /readyz, a run, a folded group fetch and an export. Prints the image size.
# Where python:3.11-slim-bookworm cannot be pulled (no registry access), a stand-in is built with debootstrap
# (Debian bookworm + Debian's python3 3.11) and tagged with that name; the script says which base it used.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=python:3.11-slim-bookworm
IMAGE=${IMAGE:-flowgrad:smoke}
PY=${PYTHON:-.venv/bin/python}
PORT=${PORT:-18765}
NAME=flowgrad-smoke-$$

if docker image inspect "$BASE" >/dev/null 2>&1; then
  echo "base: $BASE (present: $(docker image inspect -f '{{.Comment}}' "$BASE" | head -c 80))"
elif timeout 60 docker pull -q "$BASE" >/dev/null 2>&1; then
  echo "base: $BASE (pulled)"
else
  echo "base: $BASE cannot be pulled; building a stand-in with debootstrap (bookworm + Debian's python3)"
  root=$(mktemp -d)
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" \
    http://deb.debian.org/debian >/dev/null
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
  tar -C "$root" -c . | docker import -m "stand-in: debootstrap bookworm + Debian python3" \
    -c 'ENV LANG=C.UTF-8' -c 'CMD ["python3"]' - "$BASE" >/dev/null
  rm -rf "$root"
fi

# the lock's wheels from this machine's index, so the build needs no network for Python packages
"$PY" -m pip download -q --only-binary=:all: -r requirements/runtime.lock -d docker/wheels 2>&1 | grep -v "^WARNING: Location" || true
docker build --network host -q -t "$IMAGE" . >/dev/null
size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
echo "image: $IMAGE $((size / 1000000)) MB"

docker run -d --rm --name "$NAME" --network host --read-only --tmpfs /tmp:rw,exec,size=512m \
  -e FLOWGRAD_PORT="$PORT" -e FLOWGRAD_HOST=127.0.0.1 -e FLOWGRAD_FOLD_THRESHOLD=40 "$IMAGE" >/dev/null
trap 'docker logs "$NAME" 2>&1 | tail -20; docker stop -t 5 "$NAME" >/dev/null 2>&1 || true' EXIT

[ "$(docker exec "$NAME" id -u)" != 0 ] || { echo "FAIL: runs as root"; exit 1; }
if docker exec "$NAME" sh -c 'touch /srv/flowgrad/app/x' 2>/dev/null; then echo "FAIL: code is writable"; exit 1; fi
[ "$(docker exec "$NAME" cat /proc/1/comm)" = tini ] || { echo "FAIL: PID 1 is not tini"; exit 1; }

"$PY" - "$PORT" <<'PYEOF'
import sys, time, httpx
url = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 120
while True:
    try:
        r = httpx.get(url + "/readyz", timeout=5)
        if r.status_code == 200:
            break
    except httpx.HTTPError:
        pass
    assert time.monotonic() < deadline, "never ready"
    time.sleep(0.5)
print("readyz:", r.json())
c = httpx.Client(base_url=url, timeout=60)
r = c.post("/api/run", json={"source": "import torch\nx = torch.tensor(2.0, requires_grad=True)\n(x ** 2).backward()\nprint(x.grad)\n"})
assert r.status_code == 200 and r.json()["error"] is None and r.json()["stdout"] == "tensor(4.)\n", r.text[:300]
print("run: ok", r.json()["stdout"].strip())
mlp = ("import torch\nfrom torch import nn\nmodel = nn.Sequential(*[m for i in range(8) for m in (nn.Linear(4, 4), nn.Tanh())])\n"
       "loss = model(torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n")
r = c.post("/api/run", json={"source": mlp})
assert r.status_code == 200, r.text[:300]
graph = r.json()["passes"][0]["graph"]
assert graph and graph.get("folded"), "the pass did not fold"
gid = next(n["id"] for n in graph["nodes"] if n["kind"] == "group")
g = c.get(f"/api/runs/{graph['run']}/passes/{graph['pass_index']}/groups/{gid}")
assert g.status_code == 200, g.text[:300]
print("folded group: ok", gid, len(g.content), "bytes")
e = c.post("/api/export/html", json={"source": mlp})
assert e.status_code == 200 and e.text.lstrip().lower().startswith("<!doctype html"), e.text[:200]
print("export: ok", len(e.content), "bytes")
PYEOF
echo "docker smoke: passed"
