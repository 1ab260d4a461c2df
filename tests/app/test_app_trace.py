"""Trace building from hand-written recorder events (docs/trace.md §1 → §2)."""

from __future__ import annotations

from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy


def policy(head: int = 3, tail: int = 2) -> RunPolicy:
    return RunPolicy(head, tail, max_passes=10_000)


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


def build(events, head: int = 3, tail: int = 2, **kw):
    b = TraceBuilder(None, policy=policy(head, tail), **kw)
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
    b = TraceBuilder(None, policy=policy(), on_pass=got.append)
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
    assert g["clusters"][0]["name"] == "model" and set(g["clusters"][0]["nodes"]) == {"n1", "t3", "t1"}, "its parameter too"
    assert [n for n in g["nodes"] if n["id"] == "t1"][0]["name"] == "model.weight"
    assert [n for n in g["nodes"] if n["id"] == "n1"][0]["module"] == "model"


def test_op_nodes_carry_params_and_are_sized_for_their_text():
    from app.core.config import Settings
    from app.layout import LayoutEngine
    from app.layout.sizes import op_size

    ev = [T("t1", rg=True), {"kind": "name", "tensor": "t1", "name": "x"},
          T("t2", rg=True, leaf=False, origin="op", op="n1"),
          {**OP("n1", "pow_scalar", ["t1"], "t2", grad_fn="PowBackward0"), "label": "pow", "params": [2]},
          T("t3", shape=(2,), rg=True, leaf=False, origin="op", op="n2"),
          {**OP("n2", "clamp", ["t2"], "t3", grad_fn="ClampBackward1"), "label": "clamp", "params": [0, None]},
          T("t4", rg=True, leaf=False, origin="op", op="n3"),
          {**OP("n3", "sum", ["t3"], "t4", grad_fn="SumBackward0"), "label": "sum", "params": []}]
    engine = LayoutEngine.from_settings(Settings())
    try:
        b = TraceBuilder(engine, policy=policy())
        b.feed_all(ev)
        b.finish()
    finally:
        engine.close()
    nodes = {n["id"]: n for n in b.result_parts()["passes"][0]["graph"]["nodes"]}
    assert nodes["n1"]["params"] == [2] and nodes["n2"]["params"] == [0, None] and nodes["n3"]["params"] == []
    assert nodes["n1"]["w"] == op_size("** 2")[0] and nodes["n2"]["w"] == op_size("clamp(min=0)")[0]
    assert nodes["n2"]["w"] > nodes["n1"]["w"] > nodes["n3"]["w"] - 20
    t = nodes["t1"]
    assert t["h"] == 54 and 96 <= t["w"] <= 130


def test_op_text():
    from app.trace.labels import op_text

    cases = [
        ("pow_scalar", "pow", [2], "** 2"), ("pow_scalar", "pow", [0.5], "** 0.5"), ("pow_scalar", "pow", [2.0], "** 2"),
        ("rpow", "pow", [2], "2 **"), ("rsub", "−", [1], "1 −"),
        ("clamp", "clamp", [0, 1], "clamp(0, 1)"), ("clamp", "clamp", [0, None], "clamp(min=0)"),
        ("clamp", "clamp", [None, 1], "clamp(max=1)"),
        ("sum_dim", "sum", [[1], False], "sum(1)"), ("sum_dim", "sum", [[1], True], "sum(1, keepdim)"),
        ("mean_dim", "mean", [[0, 1], False], "mean((0, 1))"), ("max_dim", "max", [1, False], "max(1)"),
        ("softmax", "softmax", [1], "softmax(1)"), ("cat", "cat", [0], "cat(0)"),
        ("view", "view", [[3, 2]], "view(3, 2)"), ("transpose", "transpose", [0, 1], "transpose(0, 1)"),
        ("select", "[i]", [[0]], "[0]"), ("select", "[i]", [[":", 2]], "[:, 2]"), ("slice", "[a:b]", [[":", "1:3"]], "[:, 1:3]"),
        ("index", "[idx]", ["ndarray"], "[idx]"), ("to_copy", "to", ["float64"], "to(float64)"),
        ("mse_loss", "mse", ["mean"], "mse"), ("mse_loss", "mse", ["sum"], "mse(sum)"),
        ("add", "+", [], "+"), ("add", "+", None, "+"), ("mystery", "m", [1, "a"], "m(1, a)"),
    ]
    for op, label, params, want in cases:
        assert op_text(op, label, params) == want, (op, params)


def test_module_parameters_go_in_their_own_module_box():
    ev = [{"kind": "module", "id": "m1", "cls": "Sequential", "repr": "", "parent": None},
          {"kind": "module", "id": "m2", "cls": "Linear", "repr": "", "parent": "m1"},
          {"kind": "module", "id": "m3", "cls": "Linear", "repr": "", "parent": "m1"},
          T("t1", rg=True), T("t2", rg=True), T("t5", rg=True), T("t9"),
          T("t3", rg=True, leaf=False, origin="op", op="n1", module="m2"),
          OP("n1", "mul", ["t9", "t1"], "t3", module="m2"),
          T("t4", rg=True, leaf=False, origin="op", op="n2", module="m3"),
          OP("n2", "mul", ["t3", "t2"], "t4", module="m3"),
          T("t6", rg=True, leaf=False, origin="op", op="n3"),
          OP("n3", "mul", ["t4", "t5"], "t6"),
          {"kind": "module_names", "names": {"m1": "model", "m2": "model.0", "m3": "model.1"},
           "parameters": {"t1": "model.0.weight", "t2": "model.1.weight", "t5": "other.weight"}}]
    r = build(ev)
    g = r["passes"][0]["graph"]
    boxes = {c["name"]: set(c["nodes"]) for c in g["clusters"]}
    assert "t1" in boxes["model.0"] and "t1" not in boxes["model.1"]
    assert "t2" in boxes["model.1"] and {"t1", "t2"} <= boxes["model"]
    assert all("t5" not in m for m in boxes.values()), "a module that did not run here has no box to hold it"
    assert "t9" not in boxes["model.0"], "inputs stay outside"
    nodes = {n["id"]: n for n in g["nodes"]}
    assert nodes["t1"]["module"] == "model.0" and nodes["t1"]["role"] == "parameter"


def test_op_text_matches_the_page():
    """app/trace/labels.py sizes op nodes for the text static/js/oplabels.js draws: the same text."""
    import json
    import shutil
    import subprocess
    from pathlib import Path

    import pytest

    from app.trace.labels import op_text

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    js_file = Path(__file__).resolve().parents[2] / "static" / "js" / "oplabels.js"
    cases = [("pow_scalar", "pow", [2]), ("pow_scalar", "pow", [0.5]), ("pow_scalar", "pow", [-1.5]), ("rpow", "pow", [2]),
             ("rsub", "−", [1]), ("clamp", "clamp", [0, 1]), ("clamp", "clamp", [None, 1]), ("clamp", "clamp", [None, None]),
             ("sum_dim", "sum", [[1], True]), ("mean_dim", "mean", [[0, 1], False]), ("argmax", "argmax", [1, False]),
             ("log_softmax", "log_softmax", [1]), ("stack", "stack", [1]), ("view", "view", [[3, 2]]),
             ("permute", "permute", [[1, 0]]), ("transpose", "transpose", [0, 1]), ("select", "[i]", [[":", 2]]),
             ("slice", "[a:b]", [[":", "1:3"]]), ("index", "[idx]", ["ndarray"]), ("to_copy", "to", ["float64"]),
             ("binary_cross_entropy_with_logits", "bce_logits", ["mean"]), ("nll_loss", "nll", ["sum"]),
             ("add", "+", []), ("add", "+", None), ("mystery", "m", [1, "a", True, None]), ("pow_scalar", "pow", ["nan"])]
    from engine.recorder import op_table

    table = op_table()  # the page gets each op's parameter format from the answer's `ops`
    cases = [(op, label, params, table[op]["params"] if op in table else None) for op, label, params in cases]
    script = (f"import {{ opText }} from {json.dumps(js_file.as_uri())};"
              "console.log(JSON.stringify(JSON.parse(process.argv[1]).map((c) => opText(...c))));")
    out = subprocess.run([node, "--input-type=module", "-e", script, json.dumps(cases)],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    assert json.loads(out) == [op_text(*c) for c in cases]
