"""torch.set_num_threads / get_num_threads, as a setting of one run.

The engine computes on one thread whatever a program asks (its digits are PyTorch's on one thread: engine/mkl.py):
the call is checked as PyTorch checks it and remembered for the run (reset by engine.reset_run_state), so a program
that starts with `torch.set_num_threads(1)` runs as written.
"""
from __future__ import annotations

import os

_INT64_MAX = 2 ** 63 - 1


def _cpus() -> int:
    """PyTorch's default on this machine: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_STATE = {"threads": None}


def reset() -> None:
    _STATE["threads"] = None


def set_num_threads(n) -> None:
    if type(n) is not int:  # bool included, as in torch
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if not -_INT64_MAX - 1 <= n <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _STATE["threads"] = n


def get_num_threads() -> int:
    return _STATE["threads"] or _cpus()
