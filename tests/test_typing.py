"""The package is strictly typed: mypy --strict, as configured in pyproject.toml, finds nothing."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO


def test_mypy_strict_passes_on_the_package():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")
