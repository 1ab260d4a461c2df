"""The worker pool is sized by the CPU quota a container is given (``--cpus``), not by the host's cores."""

from __future__ import annotations

import os

import pytest

from app.core.cpus import quota_cpus, usable_cores


def cgroup(tmp_path, v2: str | None = None, v1: tuple[str, str] | None = None):
    if v2 is not None:
        (tmp_path / "cpu.max").write_text(v2)
    if v1 is not None:
        (tmp_path / "cpu").mkdir()
        (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text(v1[0])
        (tmp_path / "cpu" / "cpu.cfs_period_us").write_text(v1[1])
    return tmp_path


@pytest.mark.parametrize("v2, v1, quota", [
    ("50000 100000\n", None, 0.5),  # cgroup v2, --cpus=0.5
    ("max 100000\n", None, None),  # no quota
    (None, ("150000\n", "100000\n"), 1.5),  # cgroup v1, --cpus=1.5
    (None, ("-1\n", "100000\n"), None),
    (None, None, None),  # no cgroup files at all
    ("garbage\n", None, None),
])
def test_the_quota_is_read_from_cgroup_v2_or_v1(tmp_path, v2, v1, quota):
    assert quota_cpus(cgroup(tmp_path, v2, v1)) == quota


def test_workers_follow_the_quota_rounded_up_and_never_exceed_the_cpus_seen(tmp_path):
    seen = len(os.sched_getaffinity(0))
    assert usable_cores(cgroup(tmp_path, "50000 100000")) == 1
    assert usable_cores(cgroup(tmp_path, "6400000 100000")) == seen  # a quota above the CPUs: the CPUs
    assert usable_cores(cgroup(tmp_path, "max 100000")) == seen
