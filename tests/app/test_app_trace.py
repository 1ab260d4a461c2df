"""Trace building from hand-written recorder events (docs/trace.md §1 → §2)."""

from __future__ import annotations

from app.trace.build import TraceBuilder


def T(id, shape=(), rg=False, leaf=True, value=1.0, origin="leaf", op=None, module=None, line=1):
    return {"kind": "tensor", "id": id, "shape": list(shape), "dtype": "float32", "requires_grad": rg,
            "is_leaf": leaf, "value": value, "origin": origin, "op": op, "module": module, "line": line}


def OP(id, op, inputs, output, grad_fn="MulBackward0", enabled=True, module=None):
    return {"kind": "op", "id": id, "op": op, "label": op, "grad_fn": grad_fn if enabled else None,
            "inputs": inputs, "output": output, "module": module, "line": 2, "grad_enabled": enabled}


def step_events(k: int, w: str, x: str, loss_value: float):
    """One training step: loss = w * x, backward, SGD update, zero_grad."""
    out = f"t{100 + k}"
    node = f"n{100 + k}"
    return [
        T(out, rg=True, leaf=False, value=loss_value, origin="op", op=node),
        OP(node, "mul", [w, x], out),
        {"kind": "name", "tensor": out, "name": "loss"},
        {"kind": "backward_begin", "id": f"b{k}", "root": out, "gradient": 1.0, "retain_graph": False},
        {"kind": "backward_step", "id": f"b{k}", "node": node, "grad_fn": "MulBackward0", "output": out,
         "upstream": 1.0, "contributions": [{"input": w, "index": 0, "grad": 2.0, "local": "b",
                                             "unbroadcast_from": None}]},
        {"kind": "accumulate", "id": f"b{k}", "tensor": w, "incoming": 2.0, "before": None, "after": 2.0},
        {"kind": "backward_end", "id": f"b{k}", "freed": True},
        {"kind": "step_stats", "loss": loss_value, "param_norm": 1.0, "grad_norm": 2.0},
        {"kind": "optim_step", "optimizer": "SGD", "params": [w], "lr": 0.1, "values": {w: 1.0 - 0.2 * (k + 1)}},
        {"kind": "zero_grad", "tensors": [w], "set_to_none": True},
    ]


def build(events, **kw):
    b = TraceBuilder(None, **kw)
    b.feed_all(events)
    b.finish()
    return b.result_parts()


def test_roles_edges_values():
    ev = [T("t1", rg=True, value=1.0), {"kind": "name", "tensor": "t1", "name": "w"},
          T("t2", value=2.0), {"kind": "name", "tensor": "t2", "name": "x"},
          {"kind": "tensor", "id": "t9", "shape": [], "dtype": "int", "requires_grad": False, "is_leaf": True,
           "value": 3, "origin": "const", "op": None, "module": None, "line": 1}]
    ev += step_events(0, "t1", "t2", 2.0)
    r = build(ev)
    assert len(r["passes"]) == 1
    g = r["passes"][0]["graph"]
    roles = {n["id"]: n["role"] for n in g["nodes"]}
    assert roles["t1"] == "parameter" and roles["t2"] == "input" and roles["t100"] == "loss"
    assert roles["t9"] == "constant" and roles["n100"] == "op"
    w = [n for n in g["nodes"] if n["id"] == "t1"][0]
    assert w["value"] == 1.0, "value at the end of the forward phase, before the update"
    assert w["grad"] == 2.0, ".grad at the end of backward, before zero_grad"
    assert {e["id"] for e in g["edges"]} == {"e100_0", "e100_1", "e100_o"}
    phases = [f["phase"] for f in r["passes"][0]["frames"]]
    assert phases[-2:] == ["update", "update"]
    bstep = [f for f in r["passes"][0]["frames"] if f["kind"] == "backward_step"][0]
    assert set(bstep["edges"]) == {"e100_0", "e100_o"}


def test_pass_policy_head_tail():
    ev = [T("t1", rg=True), T("t2")]
    for k in range(10):
        ev += step_events(k, "t1", "t2", 10.0 - k)
    r = build(ev, head=2, tail=3)
    assert [p["graph"] is not None for p in r["passes"]] == [True, True] + [False] * 5 + [True] * 3
    assert [s["loss"] for s in r["steps"]] == [10.0 - k for k in range(10)]
    assert r["passes"][5]["loss"] == 5.0 and r["passes"][5]["frames"] == []
    # parameter value in pass k reflects the updates of earlier passes
    g9 = r["passes"][9]["graph"]
    w = [n for n in g9["nodes"] if n["id"] == "t1"][0]
    assert abs(w["value"] - (1.0 - 0.2 * 9)) < 1e-9


def test_few_passes_all_full_and_streaming_callbacks():
    got = []
    ev = [T("t1", rg=True), T("t2")]
    for k in range(3):
        ev += step_events(k, "t1", "t2", 1.0)
    b = TraceBuilder(None, head=3, tail=2, on_pass=got.append)
    b.feed_all(ev)
    b.finish()
    assert [p["index"] for p in got] == [0, 1, 2]
    assert all(p["graph"] is not None for p in b.result_parts()["passes"])


def test_no_grad_and_detach_cuts():
    ev = [T("t1", rg=True), T("t3", rg=False, leaf=True, origin="op", op="n1"),
          OP("n1", "mul", ["t1", None], "t3", enabled=False),
          T("t4", origin="detach"), {"kind": "detach", "source": "t1", "tensor": "t4", "line": 3}]
    r = build(ev)
    cuts = {e["id"]: e["cut"] for e in r["passes"][0]["graph"]["edges"]}
    assert cuts["e1_0"] == "no_grad" and cuts["dt4"] == "detach"


def test_module_clusters_named_at_end():
    ev = [{"kind": "module", "id": "m1", "cls": "Linear", "repr": "Linear()", "parent": None},
          T("t1", rg=True), T("t2"),
          T("t3", rg=True, leaf=False, origin="op", op="n1", module="m1"),
          OP("n1", "mul", ["t1", "t2"], "t3", module="m1"),
          {"kind": "module_names", "names": {"m1": "model"}, "parameters": {"t1": "model.weight"}}]
    r = build(ev)
    g = r["passes"][0]["graph"]
    assert g["clusters"][0]["name"] == "model" and set(g["clusters"][0]["nodes"]) == {"n1", "t3"}
    assert [n for n in g["nodes"] if n["id"] == "t1"][0]["name"] == "model.weight"
    assert [n for n in g["nodes"] if n["id"] == "n1"][0]["module"] == "model"
