"""``flowgrad.trace(source)``: the server's worker and sandbox from Python; stdout as PyTorch prints it, the error
with its line, figures, variables; the ``%%flowgrad`` magic in an IPython shell."""

from __future__ import annotations

import pytest

import flowgrad
from tests.notebook.programs import FAILS_ON_LINE_4, SEEDED, torch_stdout

SQUARE = "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = (x + 1) ** 2\ny.backward()\nprint(y, x.grad)\n"


def test_stdout_variables_passes():
    t = flowgrad.trace(SQUARE)
    assert t.stdout == "tensor(9., grad_fn=<PowBackward0>) tensor(6.)\n"
    assert t.error is None and t.error_text() == ""
    assert t.variables["x"]["grad"] == 6 and t.variables["y"]["value"] == 9
    (p,) = t.passes
    assert {n["label"] for n in p["graph"]["nodes"] if n["kind"] == "tensor"} >= {"x", "y"}
    d = t.to_dict()
    assert d["stdout"] == t.stdout and d is not t.to_dict()  # a fresh copy each time
    assert repr(t) == "<flowgrad.Trace: 1 passes (1 drawn), 2 variables>"


def test_stdout_is_what_pytorch_prints():
    t = flowgrad.trace(SEEDED)
    assert t.error is None
    expected = torch_stdout(SEEDED)
    if expected is None:
        pytest.skip("torch (the test-only extra) is not installed")
    assert t.stdout == expected


def test_error_with_its_line_and_what_ran_before():
    t = flowgrad.trace(FAILS_ON_LINE_4)
    assert t.error["type"] == "RuntimeError" and t.error["line"] == 4
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in t.error["message"]
    assert t.error_text().splitlines()[0] == "line 4: y = x @ w"
    assert t.error_text().splitlines()[1].startswith("RuntimeError: mat1 and mat2 shapes")
    assert "x" in t.variables  # everything before the error is there


def test_figures():
    t = flowgrad.trace("import matplotlib.pyplot as plt\nprint('a')\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()\nprint('b')\n")
    assert t.error is None and t.stdout == "a\nb\n"
    (fig,) = t.figures
    assert fig["svg"].lstrip().startswith(("<?xml", "<svg")) and fig["at"] == 2


def test_values_summary_and_arguments():
    src = "import torch\nw = torch.ones(100, 100, requires_grad=True)\n(w * 2).sum().backward()\n"
    assert isinstance(flowgrad.trace(src).variables["w"]["value"], list)
    assert flowgrad.trace(src, values="summary").variables["w"]["value"]["summary"] is True
    with pytest.raises(ValueError, match="values must be one of"):
        flowgrad.trace(src, values="all")
    with pytest.raises(TypeError, match="source must be a str"):
        flowgrad.trace(b"import torch")


def test_the_program_runs_in_the_sandbox_not_the_kernel():
    import os

    t = flowgrad.trace("import os\nprint(os.getcwd())\nos.system('true')\n")
    # the program's os is a stand-in: its working directory is not the kernel's, and it runs no command
    assert t.stdout == "/program\n" and os.getcwd() not in t.stdout and t.error is not None
    t = flowgrad.trace("print(open('/etc/passwd').read())\n")
    assert t.error is not None and "root:" not in t.stdout


def test_widget_of_a_trace():
    pytest.importorskip("anywidget")
    t = flowgrad.trace(SQUARE)
    w = t.widget(step=3)
    assert w.trace == t.json.decode() and w.source == SQUARE and w.view == {"step": 3}
    bundle = t._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["text/plain"] == repr(t)
    assert t._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"] == \
        bundle["application/vnd.jupyter.widget-view+json"]  # shown twice: one widget


def test_magic_in_an_ipython_shell(capsys):
    pytest.importorskip("IPython")
    from IPython.testing.globalipapp import get_ipython

    ip = get_ipython()
    ip.run_line_magic("load_ext", "flowgrad")
    ip.run_cell_magic("flowgrad", "--no-widget result", SQUARE)
    out = capsys.readouterr()
    assert out.out == "tensor(9., grad_fn=<PowBackward0>) tensor(6.)\n" and out.err == ""
    assert isinstance(ip.user_ns["result"], flowgrad.Trace)
    ip.run_cell_magic("flowgrad", "--no-widget", FAILS_ON_LINE_4)
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("line 4: y = x @ w\nRuntimeError: mat1 and mat2 shapes")
    ip.run_line_magic("unload_ext", "flowgrad")
    assert "flowgrad" not in ip.magics_manager.magics["cell"]


def test_a_run_past_its_time_is_stopped_and_the_next_one_runs():
    t = flowgrad.trace("i = 0\nwhile True:\n    i += 1\n")
    assert t.error is not None and t.error["type"] in ("TimeoutError", "LimitExceeded"), t.error
    assert flowgrad.trace(SQUARE).stdout == "tensor(9., grad_fn=<PowBackward0>) tensor(6.)\n"
