"""Every command's `--help` ends with examples, and every example runs as written on the repository's data."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gym_contract.cli import build_parser
from gym_contract.cli._examples import EXAMPLES, command_paths
from tests.doc_blocks import run_shell
from tests.support import REPO

# An argument in capitals would stand for a file of the reader's own, which a test cannot run.
PLACEHOLDER = re.compile(r"(?<![\w/.-])[A-Z][A-Z_]*(\.[a-z]+)?(?![\w/])")
EVERY_EXAMPLE = sorted({line for lines in EXAMPLES.values() for line in lines})


def test_every_command_has_examples_and_every_example_a_command():
    paths = command_paths(build_parser())
    assert sorted(path for path in paths if not EXAMPLES.get(path)) == []
    assert sorted(set(EXAMPLES) - set(paths)) == []


def test_the_help_of_every_command_ends_with_its_examples():
    for path, lines in EXAMPLES.items():
        result = subprocess.run(
            [sys.executable, "-m", "gym_contract", *path.split(), "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.rstrip().endswith("\n".join(f"  $ {line}" for line in lines)), path


def test_every_example_has_its_input_in_the_repository():
    assert [line for line in EVERY_EXAMPLE if PLACEHOLDER.search(line)] == []
    assert len(EVERY_EXAMPLE) >= 20


@pytest.mark.parametrize("line", EVERY_EXAMPLE)
def test_an_example_runs_as_written(line, tmp_path):
    # The repository's data as the example sees it from the root; what it writes lands here.
    for name in ("examples", "docs", "schemas"):
        (tmp_path / name).symlink_to(REPO / name)
    command = " ".join(
        f"{shlex.quote(sys.executable)} -m gym_contract" if word == "gym-contract" else word for word in line.split(" ")
    )
    result = run_shell(command, cwd=tmp_path)
    # 0 or 1: a verdict, either way (the damaged example fails on purpose); never a usage error or a crash.
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout or any(Path(tmp_path).glob("*.jsonl")), "an example prints or writes something"
