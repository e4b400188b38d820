"""`project`'s output, byte for byte: pinned on the repository's rollouts, alike however a bundle is validated."""

from __future__ import annotations

import copy
import hashlib
import io
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from gym_contract._json_writing import dumps
from gym_contract.evidence._projecting import project_source
from gym_contract.evidence._projection import ProducerTrajectory, observations_refusal
from gym_contract.reading import _sources
from tests.support import REPO
from tests.test_make_corpus import make_corpus

CAPTURE_DIR = REPO / "examples" / "capture"

# The first 16 hex digits of the SHA-256 of each projection, with and without the example capture
# directory. A change to the projection, or to tools/make_corpus.py, changes them: a deliberate one
# says so here.
PINNED = {
    "examples/rollouts.jsonl": ("9b8d8066e158bcf7", "40b686d93eff3cec"),
    "examples/rollout-7-0.jsonl": ("74c1b2aaecd0a106", "95183f082ef2cbbe"),
    "examples/damaged_rollouts.jsonl": ("e1ff0e068471ee96", "231bf0c0a0829c41"),
    "docs/examples/project_rollouts.jsonl": ("88f8cf3fa2add676", "a3c0380c035c3081"),
    # Real rollout records of NeMo Gym's Claude Code agent.
    "examples/reference/nemo_gym_claude_code_math_rollouts.jsonl": ("672e84d3351f9c3a", "5072bbe1c36a17d1"),
    "corpus.jsonl": ("5dabf1f05d5679ad", "4b8b9009969f8554"),
    "incremental.jsonl": ("88725da7bace2f85", "d608c937772cafa0"),
}
CORPORA = {
    # Half the records with one defect each: producer trajectories and bundles refused as well as taken.
    "corpus.jsonl": ["--records", "24", "--seed", "11", "--record-kb", "24", "--invalid-share", "0.5"],
    "incremental.jsonl": ["--records", "8", "--seed", "12", "--record-kb", "24", "--requests", "incremental"],
}


def projected(path: Path, capture_dirs: list[str], *, json_document: bool = False) -> bytes:
    out = io.BytesIO()
    with _sources.open_source(str(path)) as source:
        project_source(source, capture_dirs, out.write, json_document=json_document)
    return out.getvalue()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpora")
    for name, options in CORPORA.items():
        assert make_corpus.main([str(folder / name), *options]) == 0
    return folder


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_projection_of_each_input_is_the_one_pinned(name: str, corpora: Path):
    path = corpora / name if name in CORPORA else REPO / name
    digests = tuple(hashlib.sha256(projected(path, dirs)).hexdigest()[:16] for dirs in ([], [str(CAPTURE_DIR)]))
    assert digests == PINNED[name]


# ------------------------------------------------------------------------------------------ the bundle


def _rollout() -> dict[str, Any]:
    """A rollout whose producer trajectory and observations hold the same invocations, as producers write them."""
    record = make_corpus.make_record(random.Random("reuse"), 0, 0, 24)
    assert _invocations(record)
    return record


def _invocations(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in record["ng_agent_observations"]["records"] if r.get("kind") == "agent_invocation"]


def _set(key: str, in_trajectory: Any, in_bundle: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["ng_trajectory"]["invocations"][0][key] = in_trajectory
        _invocations(record)[0][key] = in_bundle

    return change


def _untagged(record: dict[str, Any]) -> None:
    for invocation in [*record["ng_trajectory"]["invocations"], *_invocations(record)]:
        del invocation["kind"]


def _reordered(record: dict[str, Any]) -> None:
    records = record["ng_agent_observations"]["records"]
    records[:] = [dict(reversed(r.items())) if r.get("kind") == "agent_invocation" else r for r in records]


def _broken_in_bundle(record: dict[str, Any]) -> None:
    _invocations(record)[0]["conversation"].append({"type": "no_such_item"})


def _broken_in_trajectory(record: dict[str, Any]) -> None:
    record["ng_trajectory"]["invocations"][0]["conversation"].append({"type": "no_such_item"})


CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "as written": lambda record: None,
    # Equal to `==`, yet other JSON values: neither model may stand for the other.
    "true for 1": _set("duration_ms", 1, True),
    "1.0 for 1": _set("duration_ms", 1, 1.0),
    "-0.0 for 0.0": _set("duration_ms", 0.0, -0.0),
    "no tag in either": _untagged,
    "keys in another order": _reordered,
    "broken in the bundle only": _broken_in_bundle,
    "broken in the trajectory only": _broken_in_trajectory,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_bundle_is_judged_alike_whether_or_not_the_producers_invocations_stand_in(change: str):
    record = _rollout()
    CHANGES[change](record)
    producer = ProducerTrajectory(record["ng_trajectory"])
    alone = observations_refusal(record["ng_agent_observations"])
    helped = observations_refusal(copy.deepcopy(record["ng_agent_observations"]), producer.invocations)
    assert alone[1] == helped[1]
    assert (alone[0] is None) == (helped[0] is None)
    if alone[0] is not None and helped[0] is not None:
        assert dumps(alone[0].model_dump(mode="python")) == dumps(helped[0].model_dump(mode="python"))


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_projection_of_a_rollout_is_its_projection_without_the_trajectory_to_lean_on(change: str, tmp_path: Path):
    record = _rollout()
    CHANGES[change](record)
    # The same bundle projected beside a trajectory that holds none of its invocations: each validated on its own.
    apart = copy.deepcopy(record)
    apart["ng_trajectory"]["invocations"] = []
    lines = tmp_path / "rollouts.jsonl"
    for dirs in ([], [str(CAPTURE_DIR)]):
        lines.write_bytes(orjson.dumps(record) + b"\n")
        whole = orjson.loads(projected(lines, dirs))
        lines.write_bytes(orjson.dumps(apart) + b"\n")
        alone = orjson.loads(projected(lines, dirs))
        assert dumps(whole.get("ng_agent_observations")) == dumps(alone.get("ng_agent_observations"))
        gap_codes = {gap["code"] for gap in whole.get("ng_trajectory", {}).get("gaps", [])}
        assert ("agent_observations_invalid" in gap_codes) == (
            "agent_observations_invalid" in {gap["code"] for gap in alone.get("ng_trajectory", {}).get("gaps", [])}
        )


# ------------------------------------------------------------------------------------------ the input's form


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run([sys.executable, "-m", "gym_contract", *args], capture_output=True, check=False)
    assert b"Traceback" not in result.stderr
    return result


def test_a_json_document_is_read_as_validate_reads_it(tmp_path: Path):
    rollouts = REPO / "examples" / "rollouts.jsonl"
    records = [orjson.loads(line) for line in rollouts.read_bytes().splitlines() if line.strip()]
    as_lines = projected(rollouts, [str(CAPTURE_DIR)])
    array, single = tmp_path / "rollouts.json", tmp_path / "rollout.json"
    array.write_bytes(orjson.dumps(records, option=orjson.OPT_INDENT_2))
    single.write_bytes(orjson.dumps(records[0], option=orjson.OPT_INDENT_2))
    for path, expected in ((array, as_lines), (single, as_lines.splitlines(keepends=True)[0])):
        out = tmp_path / f"{path.stem}.out.jsonl"
        result = run("project", str(path), "--capture-dir", str(CAPTURE_DIR), "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert out.read_bytes() == expected
        assert orjson.loads(result.stdout)["damaged_lines"] == 0
        assert run("validate", str(path), "--quiet").returncode == 0


def test_a_damaged_json_document_is_reported_as_validate_reports_it(tmp_path: Path):
    document = tmp_path / "rollouts.json"
    document.write_bytes(b'[{"_ng_task_index": 1, "_ng_rollout_index": 0}, 3]')
    result = run("project", str(document), "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 1
    assert orjson.loads(result.stdout)["rollouts"] == 1
    # An element has no line of its own: its place in the document names it, as `validate` names it.
    assert b"rollouts.json (record 1): record_not_object: element 1 of the array is a JSON number" in result.stderr
    assert b"rollouts.json (record 1): record_not_object" in run("coverage", str(document)).stderr
    document.write_bytes(b'{"_ng_task_index": ')
    result = run("project", str(document), "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 1
    assert b"rollouts.json:1: json_invalid" in result.stderr


def test_stdin_is_read_as_jsonl_as_validate_reads_it():
    rollouts = REPO / "examples" / "rollouts.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "project", "-"],
        input=rollouts.read_bytes(),
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == projected(rollouts, [])
