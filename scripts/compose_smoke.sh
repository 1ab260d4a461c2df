#!/usr/bin/env bash
# `make compose-test` (not part of `make test`): start compose.yaml's stack (Redis, two app replicas, nginx round
# robin) with Docker, and check through nginx that the replicas behave as one: both answer, a folded run's groups
# and search are served by either, an export works, and a class session relays a state between them.
# Where Docker Hub cannot be reached, redis:7-bookworm and nginx:1.27-bookworm are built as stand-ins from the
# debootstrap base scripts/docker_smoke.sh makes (Debian's redis-server and nginx-light); the script says which.
# Compose v2 (`docker compose`) runs the file as it is; compose v1 (`docker-compose`, Debian bookworm) does not
# know the top-level `name:`, so it gets the file without that line and `-p flowgrad`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
PORT=8080   # compose.yaml publishes nginx there

docker image inspect python:3.11-slim-bookworm >/dev/null 2>&1 || timeout 60 docker pull -q python:3.11-slim-bookworm \
  >/dev/null 2>&1 || { echo "no python:3.11-slim-bookworm: run make docker-test first (it builds a stand-in)"; exit 1; }

stand_in() {  # $1 image name, $2 Debian package, $3 extra shell, $4 CMD as JSON
  if docker image inspect "$1" >/dev/null 2>&1; then echo "$1: present"; return; fi
  if timeout 60 docker pull -q "$1" >/dev/null 2>&1; then echo "$1: pulled"; return; fi
  echo "$1: cannot be pulled; building a stand-in (Debian bookworm + $2)"
  docker build --network host -q -t "$1" - >/dev/null <<EOF
FROM python:3.11-slim-bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $2 >/dev/null \
    && rm -rf /var/lib/apt/lists/* && $3
CMD $4
EOF
}
stand_in redis:7-bookworm redis-server "true" '["redis-server"]'
# the official image's layout: conf.d/*.conf is the site, logs go to the container's stdout/stderr
stand_in nginx:1.27-bookworm nginx-light \
  "rm -f /etc/nginx/sites-enabled/default && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log" \
  '["nginx", "-g", "daemon off;"]'

"$PY" -m pip download -q --only-binary=:all: -r requirements/runtime.lock -d docker/wheels 2>&1 | grep -v "^WARNING: Location" || true

export FLOWGRAD_IDENTITY_SECRET=${FLOWGRAD_IDENTITY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
if docker compose version >/dev/null 2>&1; then
  compose=(docker compose -f compose.yaml)
else
  command -v docker-compose >/dev/null || { echo "neither docker compose nor docker-compose is installed"; exit 1; }
  v1=$(mktemp --suffix=.yaml)
  sed '/^name: /d' compose.yaml > "$v1"
  compose=(docker-compose -p flowgrad --project-directory . -f "$v1")
fi
echo "compose: ${compose[*]}"
trap '"${compose[@]}" logs --tail 20 2>&1 | tail -60; "${compose[@]}" down -t 5 >/dev/null 2>&1 || true' EXIT
started=$(date +%s.%N)
"${compose[@]}" up -d --build >/dev/null 2>&1 || { "${compose[@]}" up -d --build; exit 1; }

"$PY" - "$PORT" "$started" <<'PYEOF'
import json, sys, threading, time, httpx
url, started = f"http://127.0.0.1:{sys.argv[1]}", float(sys.argv[2])
deadline = time.monotonic() + 180
while True:  # nginx starts once both replicas are healthy (depends_on: service_healthy)
    try:
        if httpx.get(url + "/readyz", timeout=5).status_code == 200:
            break
    except httpx.HTTPError:
        pass
    assert time.monotonic() < deadline, "the stack never became ready"
    time.sleep(1)
print(f"ready through nginx {time.time() - started:.1f} s after `up`")
c = httpx.Client(base_url=url, timeout=60)
processes = {c.get("/readyz").headers["x-flowgrad-process"] for _ in range(6)}
assert len(processes) == 2, f"round robin reached {len(processes)} replica(s)"
print("replicas answering:", len(processes))
r = c.post("/api/run", json={"source": "import torch\nx = torch.tensor(2.0, requires_grad=True)\n(x ** 2).backward()\nprint(x.grad)\n"})
assert r.status_code == 200 and r.json()["stdout"] == "tensor(4.)\n", r.text[:300]
mlp = ("import torch\nfrom torch import nn\nmodel = nn.Sequential(*[m for i in range(60) for m in (nn.Linear(4, 4), nn.Tanh())])\n"
       "loss = model(torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n")
r = c.post("/api/run", json={"source": mlp})
assert r.status_code == 200, r.text[:300]
graph = r.json()["passes"][0]["graph"]
assert graph.get("folded"), "the pass did not fold"
gid = next(n["id"] for n in graph["nodes"] if n["kind"] == "group")
served_by = set()
for path, params in ((f"groups/{gid}", None), ("search", {"q": "tanh", "limit": 5})):
    for _ in range(4):  # round robin: both replicas serve it, one of them rebuilt from Redis
        g = c.get(f"/api/runs/{graph['run']}/passes/{graph['pass_index']}/{path}", params=params)
        assert g.status_code == 200 and (params is None or g.json()["total"] > 0), g.text[:300]
        served_by.add((path, g.headers["x-flowgrad-process"]))
assert len(served_by) == 4, served_by
print("folded group and search: served by both replicas")
e = c.post("/api/export/html", json={"source": mlp})
assert e.status_code == 200 and e.text.lstrip().lower().startswith("<!doctype html"), e.text[:200]
print("export:", len(e.content), "bytes")
made = c.post("/api/sessions")
assert made.status_code == 201, made.text
code, auth = made.json()["code"], {"Authorization": "Bearer " + made.json()["presenter_token"]}
got = []
def follow():
    joined = c.post(f"/api/sessions/{code}/join").json()["follower"]
    with httpx.stream("GET", f"{url}/api/sessions/{code}/events?follower={joined}", timeout=30) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:") and json.loads(line[5:]).get("state") == {"step": 3}:
                got.append(stream.headers["x-flowgrad-process"])
                return
reader = threading.Thread(target=follow, daemon=True)
reader.start()
posted_on = set()
for _ in range(20):  # post until a follower on either replica has it (the first posts may precede its join)
    p = c.post(f"/api/sessions/{code}/state", json={"step": 3}, headers=auth)
    assert p.status_code in (200, 204), p.text
    posted_on.add(p.headers["x-flowgrad-process"])
    reader.join(0.5)
    if got:
        break
assert got, "the follower never got the presenter's state"
print(f"class: state posted on {sorted(posted_on)}, relayed to a follower streaming from {got[0]}")
PYEOF
echo "compose smoke: passed"
