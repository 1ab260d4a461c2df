"""Shared by the red-team tests (tests/sandbox/test_redteam_*.py): shared-list programs, `refused`, `sealed`."""
from __future__ import annotations

import re

from sandbox_testing import err

# Three levels of one shared list: 3,000 list items created, 1,000,000 seen by anyone who flattens it.
SHARED_1E6 = "x = [0] * 100\ny = [x] * 100\nz = [y] * 100\n"
# The same with 1,000 per level: 1,000,000,000 seen, past max_live_elements (16,000,000) by far.
SHARED_1E9 = "x = [0] * 1000\ny = [x] * 1000\nz = [y] * 1000\n"
# Four levels of ten: 10,000 items seen, 40 created.
SHARED_1E4 = "x = [0] * 10\ny = [x] * 10\nz = [y] * 10\nw = [z] * 10\n"


def refused(source: str, kind: str, line: int | None = None) -> None:
    """`source` fails with a `kind` error (on `line`, when given)."""
    e = err(source)
    assert e["type"] == kind
    if line is not None:
        assert e["line"] == line


# Only numbers, strings, tensors' data and names leave a run: no server address (a stand-in
# 0x7f0000000010, 0x7f0000000020, ... per run is allowed), no module path inside the engine.
ADDRESS = re.compile(r"0x[0-9a-fA-F]{5,}")
STAND_IN = re.compile(r"0x7f0000[0-9a-f]{6}")


def sealed(text: str) -> None:
    """No real address and no engine-internal name in `text` (stand-in addresses are fine)."""
    for a in ADDRESS.findall(text):
        assert STAND_IN.fullmatch(a), f"real address {a} in {text[:300]!r}"
    assert "engine." not in text and "sandbox." not in text, text[:300]
