"""Colorbars in programs (plt.colorbar, fig.colorbar(im, ax=ax), cbar.set_label) against real matplotlib: the
same program run by real Python draws figures with the same SVG elements (axes, images, colorbar, labels)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from sandbox_testing import err, run

PROGRAM = """import numpy as np
import matplotlib.pyplot as plt
np.random.seed(0)
data = np.random.rand(8, 8)
print('before')
plt.imshow(data, cmap='viridis')
plt.colorbar()
plt.title('weights')
plt.show()
print('between')
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
im = axes[0].imshow(np.eye(4), cmap='hot', vmin=0, vmax=1)
fig.colorbar(im, ax=axes[0])
sc = axes[1].scatter(np.arange(5), np.arange(5), c=np.arange(5), cmap='coolwarm')
cb = plt.colorbar(sc, ax=axes[1], shrink=0.8, label='value')
cb.set_label('c value')
print(type(im).__name__, type(sc).__name__, type(cb).__name__)
plt.show()
print('after')
"""

# real matplotlib: every figure plt.show() shows, drawn to SVG with the sandbox's settings
REFERENCE = """
import io, json, sys
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
shown = []
def show(*a, **k):
    for n in plt.get_fignums():
        buf = io.StringIO()
        with matplotlib.rc_context({'svg.fonttype': 'path', 'svg.hashsalt': 'flowgrad'}):
            plt.figure(n).savefig(buf, format='svg', metadata={'Date': None, 'Creator': None})
        shown.append(buf.getvalue())
    plt.close('all')
plt.show = show
out = io.StringIO()
real = sys.stdout
sys.stdout = out
exec(compile(sys.argv[1], '<program>', 'exec'), {'__name__': '__main__'})
sys.stdout = real
print(json.dumps({'stdout': out.getvalue(), 'svgs': shown}))
"""


def _ids(svg):
    return re.findall(r'id="([A-Za-z_]+?)_?\d*"', svg)


def test_colorbars_draw_as_real_matplotlib_draws_them():
    out = run(PROGRAM)
    assert out.error is None, out.error
    r = subprocess.run([sys.executable, "-c", REFERENCE, PROGRAM], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr[-2000:]
    ref = json.loads(r.stdout)
    assert out.stdout == ref["stdout"]
    assert [f["at"] for f in out.figures] == [len("before\n"), len("before\nbetween\nAxesImage PathCollection Colorbar\n")]
    assert len(out.figures) == len(ref["svgs"]) == 2
    for mine, theirs in zip(out.figures, ref["svgs"]):
        assert _ids(mine["svg"]) == _ids(theirs) and len(_ids(theirs)) > 20  # the same elements in the same order: axes, image, colorbar, text
        assert mine["svg"].count("<image") == theirs.count("<image")


def test_colorbar_misuse_says_what_matplotlib_says():
    e = err("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.colorbar()")
    assert e["type"] == "RuntimeError" and e["message"].startswith("No mappable was found to use for colorbar")
    e = err("import matplotlib.pyplot as plt\nplt.colorbar(3)")
    assert e["type"] == "TypeError"
    e = err("import matplotlib.pyplot as plt\nim = plt.imshow([[1, 2]])\nplt.figure()\nax = plt.gca()\n"
            "plt.colorbar(im, ax=ax)")
    assert e["type"] == "TypeError"
    e = err("import matplotlib.pyplot as plt\nim = plt.imshow([[1, 2]])\nplt.show()\nplt.colorbar(im)")
    assert e["type"] == "RuntimeError" and "closed" in e["message"]
