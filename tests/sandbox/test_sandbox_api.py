"""The public API: run_program, backend_for, SandboxLimits, RunOutcome, ProgramError; recorder and on_print hooks."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_testing import BACKEND, DEFAULT_LIMITS, TEST_BUDGETS, err, make_limits, ok, run

import sandbox
from app.core.config import Settings
from app.runner.worker import sandbox_limits
from sandbox import ProgramError, RunOutcome, SandboxLimits, run_program

ROOT = Path(__file__).resolve().parents[2]


def test_public_names():
    assert set(sandbox.__all__) == {"run_program", "backend_for", "Backend", "SandboxLimits", "RunOutcome",
                                    "ProgramError"}
    # the sandbox writes no default limit: the caller passes every value (the server from its Settings)
    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(SandboxLimits))
    fields = dataclasses.asdict(sandbox_limits(Settings()))
    assert fields == {
        "max_source_chars": 65_536, "max_ast_depth": 50, "max_ast_nodes": 40_000, "max_loop_iterations": 1_000_000,
        "max_steps": 50_000_000, "max_int_bits": 4096, "max_output_bytes": 65536, "time_limit_s": 20.0, "max_wall_s": 60.0,
        "max_tensor_elements": 4_000_000, "max_live_elements": 16_000_000, "max_graph_nodes": 10_000,
        "max_op_flops": 200_000_000,
        "max_figures": 20, "max_figure_points": 100_000, "max_plot_label_chars": 200, "max_figure_bytes": 2_000_000,
        "max_file_bytes": 64_000_000, "max_files": 100,
    }
    # the suite's runs keep short budgets (sandbox_testing.TEST_BUDGETS), everything else is the server's
    assert dataclasses.asdict(DEFAULT_LIMITS) == {**fields, **TEST_BUDGETS}
    assert {f.name for f in dataclasses.fields(RunOutcome)} == {"stdout", "error", "globals", "figures", "output_cut"}
    e = ProgramError("TypeError", "boom", 3, 4)
    assert e.to_dict() == {"type": "TypeError", "message": "boom", "line": 3, "column": 4}


def test_outcome_of_a_good_run():
    out = run_program("x = 1\ny = [x, 2]\nprint(y)", DEFAULT_LIMITS, BACKEND)
    assert isinstance(out, RunOutcome)
    assert out == RunOutcome(stdout="[1, 2]\n", error=None, globals={"x": 1, "y": [1, 2]})


def test_globals_exclude_modules_and_imports_but_keep_user_values():
    out = run("import math\nfrom math import sqrt\nr = sqrt(4)\ndef f():\n    pass\nclass C:\n    pass\n"
              "sqrt2 = sqrt")
    assert out.error is None
    assert set(out.globals) == {"r", "f", "C", "sqrt2"}


def test_locals_do_not_leak_into_globals():
    out = run("def f():\n    inner = 1\n    return inner\nv = f()")
    assert set(out.globals) == {"f", "v"}


def test_on_print_streams_each_chunk_and_the_cut_at_the_end():
    chunks = []
    out = run("for i in range(5):\n    print(i)", on_print=chunks.append)
    assert chunks == ["0\n", "1\n", "2\n", "3\n", "4\n"] and out.stdout == "".join(chunks)
    chunks = []
    out = run("for i in range(100):\n    print('abcdefghij', i)", limits=make_limits(max_output_bytes=200),
              on_print=chunks.append)
    assert out.error is None and out.output_cut is not None
    assert "".join(chunks) == out.stdout and out.stdout.endswith("\nabcdefghij 12\n… 86 lines cut (1,204 bytes; "
                                                                 "output limit max_output_bytes = 200) …\nabcdefghij 99\n")


class FakeRecorder:
    def __init__(self):
        self.lines = []
        self.names = []
        self._line = None

    @property
    def line(self):
        return self._line

    @line.setter
    def line(self, value):
        self._line = value
        self.lines.append(value)

    def name_tensor(self, t, name):
        self.names.append((name, self._line))


def test_recorder_line_is_set_before_each_statement():
    rec = FakeRecorder()
    out = run("a = 1\nfor i in range(2):\n    b = i\nc = 3", recorder=rec)
    assert out.error is None
    assert rec.lines == [1, 2, 3, 3, 4]


def recorded_events(source: str) -> list[dict]:
    """Run `source` (it must succeed) with a real Recorder; its events."""
    from engine.recorder import Recorder

    rec = Recorder(value_limit=256, max_events=100_000)
    out = run(source, recorder=rec)
    assert out.error is None
    return rec.events


def test_recorder_names_tensors_assigned_to_names():
    src = ("import torch\nx = torch.tensor(2.0, requires_grad=True)\ndef f(t):\n    u = t * 3\n    return u + 1\n"
           "y = f(x) * 2\nw = [x]\nw[0] = x\ny += 1\ny.backward()\n")
    events = recorded_events(src)
    names = [e["name"] for e in events if e["kind"] == "name"]
    assert names == ["x", "u", "y", "y"]
    ops = [(e["op"], e["line"]) for e in events if e["kind"] == "op"]
    # ops inside f are on f's lines; the `* 2` after the call is back on the caller's line 6
    assert ops == [("mul", 4), ("add", 5), ("mul", 6), ("add", 9)]


def test_no_name_event_for_attribute_assignment():
    src = ("import torch.nn as nn\nimport torch\nclass M(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        self.w = nn.Parameter(torch.ones(2))\nm = M()\n")
    assert [e["name"] for e in recorded_events(src) if e["kind"] == "name"] == []


def test_runs_are_isolated():
    e = err("import torch.nn as nn\nnn.ReLU.forward = lambda self, x: x * 0")
    assert e["type"] == "TypeError" and "forward" in e["message"] and e["line"] == 2
    e = err("ReLU.forward = lambda self, x: x * 0")
    assert e["type"] == "TypeError"
    assert ok("import torch\nprint(torch.nn.ReLU()(torch.tensor([-1.0, 2.0])))") == "tensor([0., 2.])\n"
    # global state of the engine is reset for each run
    first = ok("import torch\nprint(torch.randn(3))")
    ok("import torch\ntorch.manual_seed(123)\nx = torch.randn(3)")
    assert ok("import torch\nprint(torch.randn(3))") == first
    err("import torch\nwith torch.no_grad():\n    y = 1 / 0")
    assert ok("import torch\nx = torch.ones(1, requires_grad=True)\nprint((x * 2).requires_grad)") == "True\n"


def test_engine_limit_errors_carry_the_line():
    out = run("import torch\nxs = []\nfor i in range(10**6):\n    xs.append(torch.randn(100))")
    assert out.error["type"] == "LimitExceeded"
    assert out.error["line"] in (3, 4)


def test_run_program_never_raises_on_odd_input():
    for source in ["", "\n\n", "#", "\x00", "\ud800", "pass", "\t\tx", "x" * 5000, "'''", "1" * 4000]:
        out = run_program(source, DEFAULT_LIMITS, BACKEND)
        assert isinstance(out, RunOutcome)
    assert run_program(None, DEFAULT_LIMITS, BACKEND).error["type"] == "TypeError"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("x=+-*/()[]{}:.,'\"\n ifordelambda0123456789_%@")), max_size=80))
def test_fuzz_random_programs_never_raise(source):
    out = run_program(source, make_limits(time_limit_s=0.5), BACKEND)
    assert isinstance(out, RunOutcome)
    if out.error is not None:
        assert set(out.error) == {"type", "message", "line", "column"}
        assert isinstance(out.error["type"], str)


def test_binding_a_module_names_its_parameters_for_the_recorder_at_once():
    events = recorded_events("import torch\nfrom torch import nn\n"
                             "model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))\n"
                             "y = model(torch.ones(4, 2)).sum()\ny.backward()\n")
    kinds = [e["kind"] for e in events]
    first_names = kinds.index("module_names")
    assert first_names < kinds.index("op")  # named when bound, before the first forward
    names = events[first_names]
    assert set(names["parameters"].values()) == {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    assert set(names["names"].values()) == {"model", "model.0", "model.1", "model.2"}


def test_backend_and_limits_are_required():
    with pytest.raises(TypeError):
        run_program("x = 1", DEFAULT_LIMITS)  # no backend: the sandbox never loads the engine itself
    with pytest.raises(TypeError):
        SandboxLimits()  # no defaults


def test_the_engine_never_imports_the_sandbox():
    code = "import sys, engine, engine.recorder, engine.limits\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'sandbox'))"
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stderr[-2000:]
    for path in (ROOT / "engine").rglob("*.py"):
        text = path.read_text()
        assert "import sandbox" not in text and "from sandbox" not in text, path


def test_the_attribute_policy_is_one_read_only_table():
    from sandbox.attributes import ATTRIBUTE_POLICY

    with pytest.raises(TypeError):
        ATTRIBUTE_POLICY["tensor"] = ATTRIBUTE_POLICY[str]  # type: ignore[index]
    for rule in ATTRIBUTE_POLICY.values():
        assert type(rule.names) is frozenset and type(rule.settable) is frozenset
        with pytest.raises(TypeError):
            rule.wrapped["upper"] = None  # type: ignore[index]
    ok("xs = [1]\nxs.append(2)\nt = torch.ones(2)\nprint(t.tolist(), 'a'.join(['b', 'c']))")
    assert "tolist" in ATTRIBUTE_POLICY["tensor"].wrapped and "nope" not in ATTRIBUTE_POLICY["tensor"].names
