"""``jupyter nbconvert --to notebook --execute`` of a notebook using the magic: the executed notebook holds a widget
view, the program's stdout exactly as PyTorch prints it, and a failing program's error with its line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.notebook.conftest import ROOT
from tests.notebook.programs import FAILS_ON_LINE_4, SEEDED, torch_stdout

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def notebook(cells: list[str]) -> dict:
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": src} for i, src in enumerate(cells)],
    }


@pytest.mark.slow
def test_nbconvert_executes_the_magic(tmp_path):
    for mod in ("anywidget", "nbconvert", "ipykernel"):
        pytest.importorskip(mod)
    path = tmp_path / "magic.ipynb"
    path.write_text(json.dumps(notebook(["%load_ext flowgrad", "%%flowgrad\n" + SEEDED, "%%flowgrad\n" + FAILS_ON_LINE_4])))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                          "--ExecutePreprocessor.timeout=120", "--output", "executed.ipynb", str(path)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    cells = json.loads((tmp_path / "executed.ipynb").read_text())["cells"]
    _, ok, failed = (c["outputs"] for c in cells)

    stdout = "".join("".join(o["text"]) for o in ok if o["output_type"] == "stream" and o["name"] == "stdout")
    assert not [o for o in ok if o["output_type"] == "stream" and o["name"] == "stderr"]
    views = [o for o in ok if o["output_type"] == "display_data" and WIDGET_VIEW in o["data"]]
    assert len(views) == 1 and views[0]["data"][WIDGET_VIEW]["model_id"]
    assert "".join(views[0]["data"]["text/plain"]).startswith("<flowgrad.Trace: 1 passes (1 drawn)")
    assert stdout.startswith("tensor(") and "grad_fn=<MeanBackward0>" in stdout
    expected = torch_stdout(SEEDED)
    if expected is not None:
        assert stdout == expected

    err = "".join("".join(o["text"]) for o in failed if o["output_type"] == "stream" and o["name"] == "stderr")
    assert err.startswith("line 4: y = x @ w\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")
    assert any(o["output_type"] == "display_data" and WIDGET_VIEW in o["data"] for o in failed)
