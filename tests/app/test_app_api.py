"""POST /api/run: every field of the contract (docs/trace.md §2, issue §5)."""

from __future__ import annotations

from flowgrad_testing import close, strict_json

SQUARE = ("import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = torch.tensor(3.0, requires_grad=True)\n"
          "a = x + y\nz = a ** 2\nz.backward()\nprint(z)\n")
MLP = ("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))\n"
       "x = torch.ones(4, 3)\nloss = model(x).pow(2).mean()\nloss.backward()\n")


def test_scalar_program_fields(run):
    d = run(SQUARE)
    assert d["stdout"] == "tensor(25., grad_fn=<PowBackward0>)\n"
    assert d["error"] is None
    v = d["variables"]
    for name in ("x", "y", "a", "z"):
        assert {"shape", "value", "grad", "requires_grad", "is_leaf", "grad_fn"} <= set(v[name])
    assert v["z"]["value"] == 25.0 and v["z"]["grad_fn"] == "PowBackward0" and v["z"]["shape"] == []
    assert v["x"]["grad"] == 10.0 and v["x"]["is_leaf"] is True and v["x"]["requires_grad"] is True
    assert v["y"]["grad"] == 10.0
    assert v["a"]["grad"] is None and v["a"]["is_leaf"] is False and v["a"]["grad_fn"] == "AddBackward0"
    assert d["truncated"] is False
    assert d["ops"]["add"]["grad_fn"] == "AddBackward0" and "latex" in d["ops"]["add"]


def test_pass_graph_and_frames(run):
    d = run(SQUARE)
    assert len(d["passes"]) == 1
    p = d["passes"][0]
    assert p["loss"] == 25.0
    g = p["graph"]
    assert g["width"] > 0 and g["height"] > 0
    nodes = {n["id"]: n for n in g["nodes"]}
    by_name = {n["name"]: n for n in g["nodes"] if n["name"]}
    assert by_name["x"]["role"] == "input" and by_name["z"]["role"] == "loss"
    assert by_name["a"]["role"] == "intermediate"
    assert by_name["a"]["grad"] is None and by_name["x"]["grad"] == 10.0
    assert by_name["z"]["grad_fn"] == "PowBackward0"
    for n in g["nodes"]:
        assert {"x", "y", "w", "h", "kind", "label", "role", "shape", "requires_grad", "is_leaf"} <= set(n)
        assert 0 <= n["x"] <= g["width"] + 1 and 0 <= n["y"] <= g["height"] + 1
    ops = [n for n in g["nodes"] if n["kind"] == "op"]
    assert {o["op"] for o in ops} >= {"add"} and all(o["grad_fn"] for o in ops)
    edge_ids = {e["id"] for e in g["edges"]}
    assert len(edge_ids) == len(g["edges"])
    for e in g["edges"]:
        assert e["source"] in nodes and e["target"] in nodes and len(e["points"]) >= 2
    kinds = [f["kind"] for f in p["frames"]]
    assert "op" in kinds and "backward_step" in kinds and "accumulate" in kinds
    phases = [f["phase"] for f in p["frames"]]
    assert phases.index("backward") > phases.index("forward")
    for f in p["frames"]:
        assert set(f["edges"]) <= edge_ids
    steps = [f for f in p["frames"] if f["kind"] == "backward_step"]
    assert steps[0]["grad_fn"] == "PowBackward0" and steps[0]["edges"]
    assert d["steps"][0]["loss"] == 25.0


def test_module_parameters_named(run):
    d = run(MLP)
    v = d["variables"]
    assert {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias", "x", "loss"} <= set(v)
    w = v["model.0.weight"]
    assert w["shape"] == [2, 3] and len(w["grad"]) == 2 and len(w["grad"][0]) == 3
    assert w["is_leaf"] and w["requires_grad"] and w["grad_fn"] is None
    g = d["passes"][0]["graph"]
    names = {c["name"] for c in g["clusters"]}
    assert {"model", "model.0", "model.2"} <= names
    params = [n for n in g["nodes"] if n["role"] == "parameter"]
    assert {n["name"] for n in params} == {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    assert all(n["module"] in (None, "model.0", "model.1", "model.2") for n in g["nodes"] if n["kind"] == "op")


def test_custom_module_names(run):
    src = ("import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        self.layer1 = nn.Linear(2, 3)\n        self.layer2 = nn.Linear(3, 1)\n"
           "    def forward(self, x):\n        return self.layer2(torch.relu(self.layer1(x)))\n"
           "net = Net()\nout = net(torch.ones(1, 2)).sum()\nout.backward()\n")
    d = run(src)
    assert d["error"] is None
    assert {"net.layer1.weight", "net.layer1.bias", "net.layer2.weight", "net.layer2.bias"} <= set(d["variables"])


def test_nonfinite_values_are_strings(run, client):
    src = "import torch\nx = torch.tensor(0.0, requires_grad=True)\ny = torch.log(x)\nz = y * 0\nz.backward()\n"
    r = client.post("/api/run", json={"source": src})
    d = strict_json(r.text)  # raises on NaN/Infinity
    assert d["variables"]["y"]["value"] == "-inf"
    assert d["variables"]["x"]["grad"] == "nan"
    assert d["passes"][0]["graph"] is not None


def test_runtime_error_keeps_state(run):
    src = "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * 2\ny.backward()\ny.backward()\n"
    d = run(src)
    assert d["error"]["type"] == "RuntimeError" and d["error"]["line"] == 5
    assert set(d["error"]) >= {"type", "message", "line"}
    assert close(d["variables"]["x"]["grad"], 2.0)
    assert len(d["passes"]) == 2  # the failed second backward is a pass of its own
    kinds = [f["kind"] for f in d["passes"][1]["frames"]]
    assert "backward_error" in kinds
    g = d["passes"][1]["graph"]
    assert any(n["kind"] == "op" and n["op"] == "mul" for n in g["nodes"]), "the freed graph is shown"


def test_syntax_error(run):
    d = run("import torch\nz = (1 +\n")
    assert d["error"]["type"] == "SyntaxError" and d["error"]["line"] in (2, 3)
    assert d["variables"] == {} and d["passes"] == []


def test_limit_error_names_limit(run):
    d = run("x = 0\nfor i in range(20000):\n    x = x + 1\n")
    assert "max_loop_iterations" in d["error"]["message"] and "10,000" in d["error"]["message"]
    d = run("x = " + "1 + " * 10 + "1\n" + "# pad\n" * 11_000)
    assert d["error"] is not None and "max_source_chars" in d["error"]["message"]


def test_detach_and_no_grad_are_cut_edges(run):
    src = ("import torch\nx = torch.tensor(3.0, requires_grad=True)\nwith torch.no_grad():\n    c = x * 2\n"
           "d = x.detach()\ny = x * c + d\ny.backward()\n")
    d = run(src)
    cuts = {e["cut"] for e in d["passes"][0]["graph"]["edges"]}
    assert {"no_grad", "detach"} <= cuts
    assert d["variables"]["x"]["grad"] == 6.0


def test_retain_grad_and_broadcast(run):
    src = ("import torch\nw = torch.ones(3, 1, requires_grad=True)\nx = torch.ones(3, 4)\nh = x * w\n"
           "h.retain_grad()\ns = h.sum()\ns.backward()\n")
    d = run(src)
    v = d["variables"]
    assert v["h"]["grad"] == [[1.0] * 4] * 3
    assert v["w"]["grad"] == [[4.0]] * 3
    steps = [f for f in d["passes"][0]["frames"] if f["kind"] == "backward_step"]
    mul = [f for f in steps if f["grad_fn"] == "MulBackward0"][0]
    assert any(c["unbroadcast_from"] == [3, 4] for c in mul["contributions"])
    hnode = [n for n in d["passes"][0]["graph"]["nodes"] if n["name"] == "h"][0]
    assert hnode["grad"] == [[1.0] * 4] * 3


def test_training_loop_passes_and_steps(run, settings):
    src = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\nmodel = nn.Linear(2, 1)\n"
           "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(8, 2)\ny = x.sum(1, keepdim=True)\n"
           "for i in range(12):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n"
           "    opt.step()\n")
    d = run(src)
    assert d["error"] is None
    assert len(d["passes"]) == 12 and len(d["steps"]) == 12
    full = [p["index"] for p in d["passes"] if p["graph"] is not None]
    head, tail = settings.full_passes_head, settings.full_passes_tail
    assert full == list(range(head)) + list(range(12 - tail, 12))
    for s in d["steps"]:
        assert s["loss"] is not None and s["param_norm"] > 0 and s["grad_norm"] >= 0
    losses = [s["loss"] for s in d["steps"]]
    assert losses[-1] < losses[0]
    # the update is part of the pass: forward → backward → update
    phases = [f["phase"] for f in d["passes"][0]["frames"]]
    assert phases[-1] == "update" and "optim_step" in [f["kind"] for f in d["passes"][0]["frames"]]
    # identical steps share one layout (cache): same positions
    g1, g2 = d["passes"][1]["graph"], d["passes"][2]["graph"]
    assert [(n["x"], n["y"]) for n in g1["nodes"]] == [(n["x"], n["y"]) for n in g2["nodes"]]
    assert g2["layout"] == "cache"
    # values and grads are per pass
    w1 = [n for n in g1["nodes"] if n["name"] == "model.weight"][0]
    w2 = [n for n in g2["nodes"] if n["name"] == "model.weight"][0]
    assert w1["value"] != w2["value"]


def test_two_backward_calls_accumulate(run):
    src = ("import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x * 3\ny.backward(retain_graph=True)\n"
           "y.backward()\n")
    d = run(src)
    assert d["variables"]["x"]["grad"] == 6.0
    assert len(d["passes"]) == 2
    assert d["passes"][1]["graph"]["nodes"], "the second pass re-walks the first graph"
    acc = [f for f in d["passes"][1]["frames"] if f["kind"] == "accumulate"][0]
    assert acc["before"] == 3.0 and acc["after"] == 6.0


def test_malformed_requests_get_4xx_json(client):
    for body, kw in [({"nope": 1}, {}), ({"source": 5}, {}), (None, {"content": b"{not json"}),
                     (None, {"content": b"[]"}), ({"source": ["x"]}, {})]:
        r = client.post("/api/run", json=body, **kw) if body is not None else client.post(
            "/api/run", headers={"content-type": "application/json"}, **kw)
        assert 400 <= r.status_code < 500, (body, r.status_code)
        assert isinstance(strict_json(r.text), dict)
        assert "Traceback" not in r.text
    r = client.post("/api/run", content=b'{"source": "' + b"x" * 1_100_000 + b'"}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 413 and "max_request_bytes" in r.text
    r = client.get("/api/run")
    assert r.status_code == 405 and isinstance(strict_json(r.text), dict)
    r = client.get("/api/nothing-here")
    assert r.status_code == 404 and isinstance(strict_json(r.text), dict)


def test_lone_surrogate_source(client):
    r = client.post("/api/run", content=b'{"source": "x = \\ud800"}', headers={"content-type": "application/json"})
    assert r.status_code in (200, 422)
    d = strict_json(r.text)
    if r.status_code == 200:
        assert d["error"] is not None


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    d = r.json()
    assert d["graphviz"] and d["graphviz"][0].isdigit()
    assert d["pool"]["size"] >= 1 and "queued" in d["pool"] and "workers" not in d["pool"]  # counts only


def test_examples_endpoint(client):
    r = client.get("/api/examples")
    assert r.status_code == 200
    exs = r.json()
    assert isinstance(exs, list)
    for e in exs:
        assert set(e) == {"id", "title", "source"} and e["title"] and not e["title"].startswith("#")


def check_graph_invariants(p: dict, what: str) -> None:
    g = p["graph"]
    ids = [n["id"] for n in g["nodes"]]
    assert len(ids) == len(set(ids)), what
    nodes = set(ids)
    edge_ids = {e["id"] for e in g["edges"]}
    assert len(edge_ids) == len(g["edges"]), what
    for e in g["edges"]:
        assert e["source"] in nodes and e["target"] in nodes and len(e["points"]) >= 2, (what, e)
        assert e["cut"] in (None, "no_grad", "detach")
    for n in g["nodes"]:
        assert n["role"] in ("input", "parameter", "intermediate", "output", "loss", "constant", "op"), (what, n)
        assert n["kind"] in ("tensor", "op") and n["w"] > 0 and n["h"] > 0
        assert -1 <= n["x"] <= g["width"] + 1 and -1 <= n["y"] <= g["height"] + 1, (what, n["id"])
    for c in g["clusters"]:
        assert set(c["nodes"]) <= nodes and c["w"] >= 0, what
    for f in p["frames"]:
        assert f["phase"] in ("forward", "backward", "update") and f["kind"], what
        lit = set(f["edges"])
        if f["phase"] != "update":
            assert lit <= edge_ids, (what, f["kind"], lit - edge_ids)


def test_examples_all_run(client):
    for e in client.get("/api/examples").json():
        r = client.post("/api/run", json={"source": e["source"]})
        assert r.status_code == 200
        d = strict_json(r.text)
        if "error" not in e["id"]:
            assert d["error"] is None, (e["id"], d["error"])
        assert d["passes"], e["id"]
        assert len(d["steps"]) == len(d["passes"])
        for p in d["passes"]:
            if p["graph"] is not None:
                check_graph_invariants(p, e["id"])


def test_page_static_and_docs(client):
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "flowgrad_client" in r.headers.get("set-cookie", "")
    client.cookies.clear()  # the shared test client must not become one 'client' for later concurrent tests
    assert client.get("/docs").status_code == 200
    spec = client.get("/openapi.json").json()
    assert "/api/run" in spec["paths"] and "/api/stream" in spec["paths"]
    r = client.get("/static/does-not-exist.js")
    assert r.status_code == 404


def test_reading_grads_after_backward_stays_in_the_pass(run):
    src = ("import torch\nw = torch.ones(2, requires_grad=True)\nloss = (w * 3).sum()\nloss.backward()\n"
           "print(w.grad.norm().item())\nprint(loss.detach())\n")
    d = run(src)
    assert len(d["passes"]) == 1
    frames = d["passes"][0]["frames"]
    assert [f["phase"] for f in frames if f["kind"] == "op"][-1] == "update"
    ops_in_graph = {n["op"] for n in d["passes"][0]["graph"]["nodes"] if n["kind"] == "op"}
    assert "norm" not in ops_in_graph


def test_many_identical_steps_are_laid_out_once(run):
    src = ("import torch\nw = torch.tensor([1.0, -1.0], requires_grad=True)\nx = torch.tensor([0.5, 2.0])\n"
           "for i in range(100):\n    loss = ((w * x).sum() - 1) ** 2\n    loss.backward()\n"
           "    with torch.no_grad():\n        w -= 0.01 * w.grad\n    w.grad.zero_()\n")
    d = run(src)
    assert d["error"] is None and len(d["passes"]) == 100 and len(d["steps"]) == 100
    full = [p for p in d["passes"] if p["graph"] is not None]
    assert len(full) == 5
    assert all(p["graph"]["layout"] == "cache" for p in full[1:])
    roles = {n["name"]: n["role"] for n in full[-1]["graph"]["nodes"] if n["name"]}
    assert roles["w"] == "parameter" and roles["x"] == "input" and roles["loss"] == "loss"
