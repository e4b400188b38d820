"""The hooks of `.pre-commit-hooks.yaml`, installed by the real pre-commit, as the Use in CI guide says, into a
repository that commits rollouts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.doc_blocks import REV_VARIABLE, pinned_revision, pre_commit_snippet, run_shell, this_interpreter_first
from tests.support import REPO

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


def _git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env)


@pytest.fixture(scope="module")
def hooked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh repository set up by the Use in CI guide's pre-commit snippet, run as written, with the
    guide's variables naming this checkout and its current commit."""
    pytest.importorskip("pre_commit", reason="pre-commit is in the dev extra")
    snippet = pre_commit_snippet()
    work = tmp_path_factory.mktemp("harness")
    env = {
        **this_interpreter_first(),
        **pinned_revision(),
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    _git("init", "-q", cwd=work)
    installed = run_shell(snippet.text, cwd=work, env=env, strict=True)
    assert installed.returncode == 0, f"{snippet}:\n{installed.stdout}{installed.stderr}"
    config = yaml.safe_load((work / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert config["repos"][0]["rev"] == env[REV_VARIABLE]
    assert [hook["id"] for hook in config["repos"][0]["hooks"]] == [
        hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    ]
    _git("add", ".pre-commit-config.yaml", cwd=work)
    assert _git("commit", "-q", "-m", "hooks", cwd=work, env=env).returncode == 0
    return work, env


def _commit(hooked: tuple[Path, dict[str, str]], name: str, content: bytes) -> subprocess.CompletedProcess[str]:
    work, env = hooked
    (work / name).parent.mkdir(parents=True, exist_ok=True)
    (work / name).write_bytes(content)
    _git("add", name, cwd=work)
    result = _git("commit", "-q", "-m", f"add {name}", cwd=work, env=env)
    if result.returncode != 0:
        _git("reset", "-q", "--hard", cwd=work)  # what failed is not kept for the next test
    return result


def test_a_damaged_rollout_file_fails_the_commit_with_its_diagnostics(hooked):
    result = _commit(hooked, "rollouts/bad.jsonl", (REPO / "examples" / "damaged_rollouts.jsonl").read_bytes())
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "gym-contract validate" in output
    assert "Failed" in output
    assert "schema_violation" in output
    assert "rollouts/bad.jsonl:1" in output


def test_a_sound_rollout_file_passes(hooked):
    result = _commit(hooked, "rollouts/good.jsonl", (REPO / "examples" / "rollouts.jsonl").read_bytes())
    assert result.returncode == 0, result.stdout + result.stderr


def _bundle() -> dict[str, Any]:
    for line in (REPO / "examples" / "rollouts.jsonl").read_text().splitlines():
        return dict(json.loads(line)["ng_agent_observations"])
    raise AssertionError("the example has a rollout")


def test_a_harness_bundle_is_checked_as_a_bundle(hooked):
    bundle = _bundle()
    assert _commit(hooked, "out/run.observations.json", json.dumps(bundle).encode()).returncode == 0
    bundle["records"][0]["kind"] = "not_a_kind"
    result = _commit(hooked, "out/broken.observations.json", json.dumps(bundle).encode())
    assert result.returncode != 0
    assert "schema_violation" in result.stdout + result.stderr


def test_check_jsonschema_reads_the_bundled_schemas_offline(tmp_path: Path):
    """The Use in CI guide's recipe: `--base-uri` set to the schema file itself resolves every `$ref` locally."""
    pytest.importorskip("check_jsonschema", reason="check-jsonschema is in the dev extra")
    folder = subprocess.run(
        [sys.executable, "-m", "gym_contract", "schema", "dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    schema = f"{folder}/agent_observations.schema.json"
    good, bad = tmp_path / "run.observations.json", tmp_path / "broken.observations.json"
    bundle = _bundle()
    good.write_text(json.dumps(bundle))
    bundle["records"][0]["kind"] = "not_a_kind"
    bad.write_text(json.dumps(bundle))

    def check(path: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "check_jsonschema", "--base-uri", Path(schema).as_uri(), "--schemafile"]
        return subprocess.run([*command, schema, str(path)], capture_output=True, text=True, check=False)

    passed = check(good)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    failed = check(bad)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Unresolvable" not in failed.stdout + failed.stderr
