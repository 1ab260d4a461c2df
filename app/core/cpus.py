"""How many cores this process may use: the cgroup's CPU quota (a container's ``--cpus``), else the affinity mask."""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def quota_cpus(root: Path = CGROUP) -> float | None:
    """The CPU quota in cores (cgroup v2 ``cpu.max``, else v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``); None: none."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        if quota == "max":
            return None
        return int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def usable_cores(root: Path = CGROUP) -> int:
    """Cores from the affinity mask, capped by the cgroup quota rounded up (``--cpus=0.5`` → 1, ``--cpus=1.5`` → 2)."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        cores = max(1, os.cpu_count() or 1)
    quota = quota_cpus(root)
    if quota is not None and quota > 0:
        cores = min(cores, max(1, math.ceil(quota)))
    return cores
