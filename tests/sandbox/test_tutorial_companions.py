"""What the NLP tutorials (seq2seq translation, char-RNN name classification) reach for beside torch: `glob` and
`os.listdir` over the run's own files, `from io import open`, `plt.switch_backend('agg')` / `ion` / `ioff`,
`np.split` / `np.array_split`. Each prints what CPython prints (in a subprocess, in a folder of its own: the program
makes its files first); what they are handed is bounded."""
from __future__ import annotations

import subprocess
import sys

import pytest
from sandbox_testing import err, leaks, run

FILES = """import glob
import os
from io import open
os.makedirs("data/names", exist_ok=True)
for name, text in (("English", "Abbot\\nAbel"), ("French", "Abel\\nBain"), ("Greek", "Adamos")):
    with open(f"data/names/{name}.txt", "w", encoding="utf-8") as f:
        f.write(text)
with open("data/.hidden.txt", "w") as f:
    f.write("x")
with open("data/readme.md", "w") as f:
    f.write("y")
def findFiles(path):
    return sorted(glob.glob(path))
print(findFiles("data/names/*.txt"))
print(sorted(glob.glob("./data/names/?????.txt")), sorted(glob.glob("data/*")), glob.glob("nothing/*.txt"))
print(sorted(glob.glob("data/**/*.txt", recursive=True)), sorted(glob.glob("data/**", recursive=True)))
print(sorted(glob.glob("data/*.md")), sorted(glob.glob("data/[rq]*")), glob.escape("a[1]*.txt"))
for filename in findFiles("data/names/*.txt"):
    category = os.path.splitext(os.path.basename(filename))[0]
    lines = open(filename, encoding="utf-8").read().strip().split("\\n")
    print(category, lines)
print(sorted(os.listdir("data")), sorted(os.listdir("data/names")), "data" in os.listdir("."))
try:
    os.listdir("missing")
except FileNotFoundError as e:
    print("FileNotFoundError")
"""

PLOTS_AND_SPLITS = """import matplotlib.pyplot as plt
import numpy as np
plt.switch_backend("agg")
plt.ioff()
print(plt.isinteractive())
plt.ion()
print(plt.isinteractive())
plt.plot([1, 2, 3])
print(np.array_split(np.arange(7), 3))
print(np.split(np.arange(10), [2, 5]), np.split(np.arange(6).reshape(2, 3), 3, axis=1))
np.random.seed(0)
print([b.tolist() for b in np.array_split(np.random.permutation(10), 4)])
try:
    np.split(np.arange(10), 3)
except ValueError as e:
    print(e)
"""


@pytest.mark.parametrize("source", [FILES, PLOTS_AND_SPLITS], ids=["files", "plots_and_splits"])
def test_a_program_prints_what_cpython_prints(source, tmp_path):
    expected = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert expected.returncode == 0, expected.stderr
    out = run(source)
    assert out.error is None, out.error
    assert out.stdout == expected.stdout


@pytest.mark.parametrize("source, kind", [
    ("import numpy as np\nx = np.array_split(np.arange(10), 10 ** 9)", "LimitExceeded"),
    ("import numpy as np\nx = np.split(np.arange(10), list(range(10 ** 7)))", "LimitExceeded"),
    ("import glob\nx = glob.glob('*' * 10 ** 6)", "OSError"),
    ("import glob\nx = glob.glob(print)", "TypeError"),
    ("import os\nx = os.listdir('x' * 10 ** 6)", "OSError"),
    ("import matplotlib.pyplot as plt\nplt.switch_backend(print)", "TypeError"),
])
def test_what_they_are_handed_is_bounded(source, kind):
    e = err(source + "\n")
    assert e["type"] == kind, e
    assert e["line"] == 2 and not leaks(e["message"])


def test_a_pattern_over_many_files_stays_within_the_run_s_file_budget():
    out = run("import glob\nfor i in range(60):\n    open(f'f{i}.txt', 'w').close()\n"
              "for i in range(200):\n    x = glob.glob('*' + 'a*' * 60 + '.txt')\nprint(len(glob.glob('f1*.txt')))\n")
    assert out.error is None and out.stdout == "11\n"


@pytest.mark.parametrize("line", ["glob.glob.fn", "glob.glob.__self__", "glob.__dict__", "os.listdir.fn",
                                  "plt.switch_backend.__closure__", "plt.isinteractive.fn"])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import glob, os\nimport matplotlib.pyplot as plt\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 3 and not leaks(e["message"])
