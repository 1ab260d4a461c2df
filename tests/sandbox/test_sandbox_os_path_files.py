"""`os.path.exists/isfile/isdir/getsize` answer from the run's own in-memory files (issue 21 section 3): after
`torch.save(m.state_dict(), 'ckpt.pt')` the checkpoint exists, as a program that checks before loading expects;
nothing of the server's disk is ever seen, and bad names answer as CPython's os.path does."""
from __future__ import annotations

import pytest
from sandbox_testing import err, leaks, ok

CHECKPOINT = """import torch
import os
m = torch.nn.Linear(3, 2)
print(os.path.exists('ckpt.pt'), os.path.isfile('ckpt.pt'))
torch.save(m.state_dict(), 'ckpt.pt')
print(os.path.exists('ckpt.pt'), os.path.isfile('ckpt.pt'), os.path.isdir('ckpt.pt'), os.path.getsize('ckpt.pt') > 0)
print(os.path.exists('./ckpt.pt'), os.path.exists('ckpt.pt/'), os.path.exists('other.pt'))
if os.path.exists('ckpt.pt'):
    m.load_state_dict(torch.load('ckpt.pt'))
    print('reloaded')
os.makedirs('runs', exist_ok=True)
torch.save({'w': m.weight}, os.path.join('runs', 'best.pt'))
print(os.path.isdir('runs'), os.path.exists('runs'), os.path.isfile('runs'), os.path.isdir('.'))
with open('log.txt', 'w') as f:
    f.write('hello')
print(os.path.getsize('log.txt'), os.path.isfile('log.txt'))
"""


def test_checkpoint_exists_after_save():
    out = ok(CHECKPOINT)
    assert out == ("False False\nTrue True False True\nTrue False False\nreloaded\nTrue True False True\n"
                   "5 True\n")


@pytest.mark.parametrize("path", ["'/etc/passwd'", "'../ckpt.pt'", "'../../etc/passwd'", "'/proc/self/environ'",
                                  "'/work'", "'/tmp'", "'~'", "'/program/../etc/passwd'", "'ckpt.pt\\0'",
                                  "'a' * 10 ** 5", "''", "'..'", "'/' + 'x/' * 3000", "'ckpt.pt' * 1000"])
def test_paths_outside_the_run_do_not_exist(path):
    source = (f"import os\nimport torch\ntorch.save(torch.ones(2), 'ckpt.pt')\np = {path}\n"
              "print(os.path.exists(p), os.path.isfile(p))")
    out = ok(source)
    assert out == "False False\n"
    assert not leaks(out)


def test_a_folder_of_the_run_is_a_folder_not_the_servers():
    out = ok("import os\nprint(os.path.isdir('/'), os.path.isdir('/program'), os.path.isdir('/etc'), "
             "os.path.isdir('/tmp'), os.path.isdir('..'))")
    assert out == "True True False False False\n"


@pytest.mark.parametrize("path", ["'missing.pt'", "'/etc/passwd'", "'../x'"])
def test_getsize_of_a_missing_file_is_file_not_found(path):
    e = err(f"import os\nos.path.getsize({path})")
    assert e["type"] == "FileNotFoundError" and "No such file or directory" in e["message"]
    assert not leaks(e["message"])


@pytest.mark.parametrize("value", ["None", "3.5", "['a']", "print", "b'x'"])
def test_wrong_types_are_type_errors(value):
    for fn in ("exists", "isfile", "getsize"):
        e = err(f"import os\nos.path.{fn}({value})")
        assert e["type"] == "TypeError", (fn, e)


def test_huge_names_are_cheap_and_refused():
    e = err("import os\nos.path.getsize('a' * 10 ** 6)")
    assert e["type"] in ("OSError", "FileNotFoundError")
    out = ok("import os\nprint(all(not os.path.exists(str(i)) for i in range(2000)))")
    assert out == "True\n"
