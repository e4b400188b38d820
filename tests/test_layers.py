"""The package's layers: import-linter keeps the contracts of pyproject.toml, and an import that breaks one fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO

# import-linter's command line, run by this interpreter: it checks the gym_contract package in the working
# directory against the contracts of the pyproject.toml there.
LINT_IMPORTS = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's report on the gym_contract package in ``root`` (wide lines, no cache left behind)."""
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_the_package_keeps_its_layers():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_guide_draws_the_layers_of_the_contract():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - import-linter brings tomli where the standard library has no tomllib
        import tomli as tomllib
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(contract["layers"] for contract in contracts["contracts"] if contract["id"] == "layers")
    page = (REPO / "docs" / "guides" / "package.md").read_text(encoding="utf-8")
    diagram = page.split("## The layers", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    # Each layer is a line: a label in the first 15 columns, the layer, and perhaps a remark in brackets.
    drawn = [re.sub(r"\s*\(.*\)$", "", line[15:]) for line in diagram.splitlines() if line.strip() != "▼"]
    assert drawn == layers


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # A shared helper reaching up into a folder.
        ("_values.py", "from gym_contract.validation import KINDS", "gym_contract._values is not allowed to import"),
        # Two folders of one layer importing each other.
        ("lineage/__init__.py", "from gym_contract.evidence import _join", "gym_contract.lineage is not allowed"),
        # The engine importing a public module that only re-exports.
        ("validation/_rules.py", "from gym_contract.capture import read_capture", "gym_contract.validation is not"),
        # One harness's classifier using another's.
        ("outcome/_opencode.py", "from gym_contract.outcome import _claude_code", "gym_contract.outcome._opencode"),
        # A new top-level module that the layers do not name yet.
        ("extra.py", "from gym_contract import models", "gym_contract.extra"),
    ],
)
def test_an_import_across_the_layers_breaks_a_contract(tmp_path: Path, module: str, line: str, broken: str):
    shutil.copytree(REPO / "gym_contract", tmp_path / "gym_contract", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    path = tmp_path / "gym_contract" / module
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + f"\n{line}\n", encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert broken in result.stdout
