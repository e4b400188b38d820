"""CI runs the README's test command exactly as the README writes it."""

from __future__ import annotations

from tests.support import REPO

TEST_COMMAND = 'python -m pip install ".[dev]" && python -m pytest'


def readme_commands() -> list[str]:
    """The lines of the README's first code block: install and run the main job, then run the tests."""
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = readme.index("```bash") + 1
    return readme[start : readme.index("```", start)]


def test_the_readme_second_command_runs_the_tests():
    assert readme_commands()[1] == TEST_COMMAND


def test_ci_ends_by_running_that_command_as_written():
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert lines[-1] == readme_commands()[1]
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines
