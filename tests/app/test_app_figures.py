"""Figures through the server: /api/run's `figures` and the stream's `done` (docs/trace.md, "figures")."""
from __future__ import annotations

from pathlib import Path

from flowgrad_testing import strict_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "19_linear_regression_plot.py").read_text()


def test_linear_regression_example_answers_with_its_figure(run):
    trace = run(EXAMPLE)
    assert trace["error"] is None
    assert trace["stdout"].startswith("epoch 0: loss ")
    [fig] = trace["figures"]
    assert set(fig) == {"svg", "at"} and fig["at"] == len(trace["stdout"])
    assert fig["svg"].startswith("<?xml") and "</svg>" in fig["svg"]
    assert trace["passes"] and trace["steps"]  # the graph is recorded as for any program


def test_every_answer_has_a_figures_list(run, client):
    assert run("print(1)")["figures"] == []
    trace = run("import matplotlib.pyplot as plt\nplt.figure(figsize=(100, 1))")  # refused before a figure exists
    assert trace["figures"] == [] and trace["error"]["type"] == "ValueError"


def test_stream_done_carries_the_figures(client):
    src = "import matplotlib.pyplot as plt\nprint('a')\nplt.plot([1, 2])\nplt.show()\nprint('b')"
    with client.stream("POST", "/api/stream", json={"source": src}) as r:
        assert r.status_code == 200
        done = None
        for line in r.iter_lines():
            if line.startswith("data:"):
                msg = strict_json(line[5:])
                if msg["type"] == "done":
                    done = msg
    assert done is not None and done["stdout"] == "a\nb\n"
    assert [f["at"] for f in done["figures"]] == [2]
