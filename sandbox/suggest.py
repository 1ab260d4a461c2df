"""Errors that teach: a did-you-mean for misspelt names and attributes, and "exists in PyTorch, not in
flowgrad" told apart from "does not exist in PyTorch" (``torch.tensr`` is a typo; ``torch.fft`` is a
real PyTorch module flowgrad does not have). PyTorch's names are data: ``pytorch_names.json``, written
by ``scripts/pytorch_names.py`` from torch 2.13."""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def pytorch_names() -> dict[str, frozenset]:
    raw = json.loads((Path(__file__).with_name("pytorch_names.json")).read_text())
    return {k: frozenset(v) for k, v in raw.items() if isinstance(v, list)}


def in_pytorch(owner: str, name: str) -> bool:
    """Whether PyTorch's ``owner`` ("torch", "torch.nn", "Tensor", …) has ``name``."""
    return name in pytorch_names().get(owner, ())


def closest(name: str, candidates) -> str | None:
    """The one candidate a typo most likely meant (None when nothing is close)."""
    if not name or len(name) > 64:
        return None
    got = difflib.get_close_matches(name, [c for c in candidates if not c.startswith("_")], n=1, cutoff=0.75)
    return got[0] if got else None


def did_you_mean(name: str, candidates) -> str:
    """". Did you mean: 'grad'?" (CPython's words), or ""."""
    best = closest(name, candidates)
    return f". Did you mean: '{best}'?" if best else ""


# names flowgrad refuses on purpose, and why (issue 21 §3: refuse rather than fake)
_NO_BFLOAT16 = " (numpy has no bfloat16, so flowgrad cannot compute in it exactly; use torch.float32)"
_WHY_NOT = {("torch", "bfloat16"): _NO_BFLOAT16, ("torch", "BFloat16Tensor"): _NO_BFLOAT16}


def missing_from_module(module: str, name: str, available) -> str:
    """The AttributeError of ``module.name``: PyTorch's text, then why."""
    head = f"module '{module}' has no attribute '{name}'"
    if in_pytorch(module, name):
        why = _WHY_NOT.get((module, name), "")
        return f"{head}: {module}.{name} exists in PyTorch but is not available in flowgrad{why}"
    if module in pytorch_names():  # a typo, not a gap: say so, then what was probably meant
        return f"{head}: {module}.{name} does not exist in PyTorch either{did_you_mean(name, available)}"
    return head + did_you_mean(name, available)


def missing_from_tensor(type_name: str, name: str, available) -> str:
    head = f"'{type_name}' object has no attribute '{name}'"
    if type_name == "Tensor" and in_pytorch("Tensor", name):
        return f"'Tensor' object attribute '{name}' exists in PyTorch but is not available in flowgrad"
    return head + did_you_mean(name, available)
