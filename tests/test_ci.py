"""CI runs the README's test command as the README writes it."""

from __future__ import annotations

import subprocess

from tests.support import REPO


def test_ci_runs_the_second_command_of_the_readme_and_it_runs_the_tests():
    printed = subprocess.run([str(REPO / ".ci" / "readme_test_command")], capture_output=True, text=True, check=True)
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    block = readme[readme.index("```bash") + 1 :]
    assert printed.stdout == block[1] + "\n"
    assert printed.stdout == 'python -m pip install ".[dev]" && python -m pytest\n'
    assert 'bash -c "$(.ci/readme_test_command)"' in (REPO / ".ci" / "run").read_text(encoding="utf-8")
