"""Helpers shared by the tests/app suite (a unique module name: tests/ is not a package)."""

from __future__ import annotations

import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def strict_json(text: str):
    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")

    return json.loads(text, parse_constant=bad)


def close(a, b, rel=1e-4, abs_=1e-5) -> bool:
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=rel, abs_tol=abs_)
