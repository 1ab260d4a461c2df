"""The code style the project keeps (ruff settings in pyproject.toml), checked inside `make test`."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run([ruff, "check", "engine", "app", "sandbox", "tests", "bench"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
