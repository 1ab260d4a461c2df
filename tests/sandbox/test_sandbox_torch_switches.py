"""torch's global switches programs set at their top (`torch.backends.cudnn.deterministic = True`,
`torch.use_deterministic_algorithms(True)`): readable and settable as in a CPU build of PyTorch, per run."""
from __future__ import annotations

import pytest
from sandbox_testing import err, ok, same_as_cpython

# (it ends by putting torch's defaults back: CPython runs it in the test process)
SWITCHES = """import torch
torch.backends.cudnn.enabled = False
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = True
print(torch.backends.cudnn.enabled, torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
      torch.backends.cudnn.allow_tf32)
print(torch.backends.mps.is_available(), torch.cuda.is_available(), torch.backends.cudnn.is_available())
print(torch.are_deterministic_algorithms_enabled())
torch.use_deterministic_algorithms(True, warn_only=True)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
device = torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")
print(device)
for bad in ("enabled", "benchmark"):
    try:
        if bad == "enabled":
            torch.backends.cudnn.enabled = 1
        else:
            torch.backends.cudnn.benchmark = None
    except RuntimeError as e:
        print(e)
try:
    torch.use_deterministic_algorithms(1)
except TypeError as e:
    print(e)
torch.use_deterministic_algorithms(False)
torch.backends.cudnn.enabled = True
torch.backends.cudnn.deterministic = False
torch.backends.cudnn.benchmark = False
"""


def test_switches_as_pytorch():
    pytest.importorskip("torch")
    same_as_cpython(SWITCHES)


def test_switches_are_per_run():
    ok("import torch\ntorch.backends.cudnn.deterministic = True\ntorch.use_deterministic_algorithms(True)")
    assert ok("import torch\nprint(torch.backends.cudnn.deterministic, torch.are_deterministic_algorithms_enabled())") \
        == "False False\n"


@pytest.mark.parametrize("source, error", [
    ("import torch\ntorch.backends.cudnn.version = 1", "TypeError"),
    ("import torch\ntorch.backends.cudnn.enabled = [0] * 10 ** 6", "RuntimeError"),
    ("import torch\ntorch.backends.cudnn.enabled.__class__.__bases__", "AttributeError"),
    ("import torch\ntorch.use_deterministic_algorithms()", "TypeError"),
    ("import torch\ntorch.use_deterministic_algorithms(True, warn_only='yes')", "TypeError"),
    ("import torch\ntorch.backends.cuda = None", "TypeError"),
])
def test_switches_under_hostile_input(source, error):
    e = err(source)
    assert e["type"] == error, e
