"""``pip install .`` (a wheel, not editable) carries what the widget needs: the page's modules, styles, vendored
libraries and template inside the package (setup.py), so a notebook far from the checkout draws the graph."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.notebook.conftest import ROOT

SKIP = shutil.ignore_patterns(".git", ".venv", "test-artifacts", "__pycache__", "*.pyc", "build", "*.egg-info",
                              ".pytest_cache", ".ruff_cache", ".hypothesis", "node_modules")

CHECK = textwrap.dedent("""
    import sys, pathlib
    import flowgrad
    from flowgrad.page import page_root, widget_esm
    venv = pathlib.Path(sys.prefix).resolve()
    assert venv in pathlib.Path(flowgrad.__file__).resolve().parents, flowgrad.__file__
    root = page_root()
    assert venv in root.parents and root.name == "_page", root
    for rel in ("static/js/main.js", "static/css/app.css", "static/vendor/katex/katex.min.css", "static/vendor/d3.js",
                "templates/index.html"):
        assert (root / rel).is_file(), rel
    esm = widget_esm()
    assert "export default { render }" in esm and "data:font/woff2;base64," in esm and "fg/js/main.js" in esm
    t = flowgrad.trace("import torch\\nx = torch.tensor(2.0, requires_grad=True)\\ny = x * x\\ny.backward()\\nprint(x.grad)\\n")
    assert t.stdout == "tensor(4.)\\n", t.stdout
    from flowgrad.widget import FlowgradWidget
    w = t.widget()
    assert isinstance(w, FlowgradWidget) and w.trace == t.json.decode()
    print("ok", len(esm))
""")


@pytest.mark.slow
def test_a_wheel_install_carries_the_page(tmp_path):
    pytest.importorskip("anywidget")
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=SKIP)

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of the checkout on the path

    def run(*cmd, **kw):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, **kw)
        assert out.returncode == 0, f"{cmd[:3]} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
        return out

    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"), str(src))
    wheel = next((tmp_path / "wheel").glob("flowgrad-*.whl"))
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", str(venv))
    py = venv / "bin" / "python"
    # the dependencies come from this interpreter's site-packages (a plain path: its editable finder is not loaded)
    purelib = run(str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    (tmp_path / "elsewhere").mkdir()
    # installed before the dependencies' path is added: pip must not take the checkout's own install for it
    out = run(str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel))
    assert "Successfully installed flowgrad" in out.stdout, out.stdout
    Path(purelib, "zz_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    out = run(str(py), "-c", CHECK, cwd=str(tmp_path / "elsewhere"))
    assert out.stdout.startswith("ok"), out.stdout + out.stderr
