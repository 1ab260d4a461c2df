"""The programs the notebook tests run, and each run with real PyTorch for its stdout (test code, trusted)."""

from __future__ import annotations

import os
import subprocess
import sys

SEEDED = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.randn(4, 3)
loss = ((model(x) - 1) ** 2).mean()
loss.backward()
print(loss)
print(model.weight.grad)
"""

FAILS_ON_LINE_4 = """import torch
x = torch.ones(2, 3, requires_grad=True)
w = torch.ones(2, 3)
y = x @ w
print(y)
"""


def torch_stdout(source: str) -> str | None:
    """What real PyTorch prints for ``source`` (None when torch is not installed)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    return out.stdout
