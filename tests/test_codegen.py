"""Generated models stay in step with the schemas: tools/codegen.py --check passes, and fails on a hand edit."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(root / "tools" / "codegen.py"), "--check"], capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what codegen reads and writes, so that tests may damage it."""
    root = tmp_path_factory.mktemp("checkout")
    for part in ("schemas", "tools", "gym_contract/_generated"):
        shutil.copytree(REPO / part, root / part)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")  # where the tools' versions are pinned
    return root


def test_committed_models_are_in_step_and_generation_is_deterministic(checkout: Path):
    result = _check(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    # A second generation, in another process and folder, gives the same files again.
    again = _check(checkout)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_hand_edit_of_a_generated_file_is_caught(checkout: Path):
    target = checkout / "gym_contract" / "_generated" / "v1" / "trajectory_schema.py"
    original = target.read_text()
    target.write_text(original.replace("turn_no:", "turn_number:", 1))
    try:
        result = _check(checkout)
    finally:
        target.write_text(original)
    assert result.returncode == 1
    assert "turn_number" in result.stdout
    assert "out of step" in result.stdout


def test_a_schema_edit_without_regeneration_is_caught(checkout: Path):
    target = checkout / "schemas" / "v1" / "observation_gap.schema.json"
    original = target.read_text()
    target.write_text(original.replace('"detail": {', '"details": {', 1))
    try:
        result = _check(checkout)
    finally:
        target.write_text(original)
    assert result.returncode == 1


def test_every_generated_module_carries_the_do_not_edit_header():
    for module in (REPO / "gym_contract" / "_generated" / "v1").glob("*_schema.py"):
        schema = module.name.removesuffix("_schema.py") + ".schema.json"
        assert module.read_text().startswith(f"# generated from schemas/v1/{schema} by tools/codegen.py — do not edit")


def test_only_the_facade_imports_generated_code():
    importers = [
        path.relative_to(REPO).as_posix()
        for path in (REPO / "gym_contract").rglob("*.py")
        if "_generated" not in path.parts and "gym_contract._generated" in path.read_text()
    ]
    assert importers == ["gym_contract/models.py"]


def _codegen_module():
    spec = importlib.util.spec_from_file_location("codegen_under_test", REPO / "tools" / "codegen.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_the_tools_the_check_installs_the_pinned_ones_once_and_compares(monkeypatch, capsys, tmp_path: Path):
    """The tools' environment is made, filled by pip, marked, used, and reused. Here it runs this test's
    interpreter, which has the pinned tools, so pip finds nothing to download; `.ci/run` runs the check
    with a plain Python, where pip installs them from the index."""
    codegen = _codegen_module()
    monkeypatch.setattr(codegen, "TOOLS_HOME", tmp_path / "tools")
    monkeypatch.setattr(codegen, "unusable_tools", lambda: ["datamodel-code-generator is not installed"])
    made: list[Path] = []

    def environment(folder: Path, **options: object) -> None:
        made.append(folder)
        (folder / "bin").mkdir(parents=True)
        python = folder / "bin" / "python"
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)

    monkeypatch.setattr(codegen.venv, "create", environment)
    assert codegen.main(["--check"]) == 0
    out, err = capsys.readouterr()
    assert "is in step with schemas/v1" in out
    assert "installing datamodel-code-generator==0.89.0 ruff==0.17.6 into" in err
    assert (made[0] / "installed.txt").read_text().split() == ["datamodel-code-generator==0.89.0", "ruff==0.17.6"]
    # The environment is reused, not made again: the next generation runs its Python.
    assert codegen.tool_python() == str(made[0] / "bin" / "python")
    assert len(made) == 1
    assert "installing" not in capsys.readouterr().err


def test_tools_that_cannot_be_installed_are_reported_in_one_line_and_nothing_is_compared(
    monkeypatch, capsys, tmp_path: Path
):
    codegen = _codegen_module()
    monkeypatch.setattr(codegen, "TOOLS_HOME", tmp_path / "tools")
    monkeypatch.setattr(codegen, "unusable_tools", lambda: ["datamodel-code-generator is not installed"])

    def offline(folder: Path, **options: object) -> None:  # pip as it fails with no network
        (folder / "bin").mkdir(parents=True)
        python = folder / "bin" / "python"
        python.write_text("#!/bin/sh\necho 'ERROR: No matching distribution found for ruff==0.17.6' >&2\nexit 1\n")
        python.chmod(0o755)

    monkeypatch.setattr(codegen.venv, "create", offline)
    assert codegen.main(["--check"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    said = err.strip().splitlines()
    assert len(said) == 2  # what is installed, then why it could not be
    assert "nothing was compared" in said[1]
    assert "pip said: ERROR: No matching distribution found for ruff==0.17.6" in said[1]
    assert list((tmp_path / "tools").iterdir()) == []  # nothing half-made is left to be taken for installed


def test_another_version_of_a_tool_is_not_taken_for_the_pinned_one(monkeypatch):
    codegen = _codegen_module()
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.0.1" if name == "ruff" else real(name))
    assert codegen.unusable_tools() == [
        f"ruff 0.0.1 is installed but the models are generated with {codegen.pinned_versions()['ruff']}"
    ]


def test_a_failing_generator_is_reported_not_taken_for_drift(monkeypatch, capsys):
    codegen = _codegen_module()
    monkeypatch.setattr(codegen, "CODEGEN_ARGS", [*codegen.CODEGEN_ARGS, "--no-such-option"])
    assert codegen.main(["--check"]) == 2
    out, err = capsys.readouterr()
    assert "out of step" not in out + err
    assert "datamodel-code-generator failed" in err
