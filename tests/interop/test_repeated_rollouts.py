"""What export writes where rollout ids do not name one file each: ids that come again, ids that cannot name a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract import cli
from gym_contract.interop import to_otel
from tests.support import REPO

ROLLOUTS = REPO / "examples" / "rollouts.jsonl"


def main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def spans_of(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [span for part in request["resourceSpans"] for scope in part["scopeSpans"] for span in scope["spans"]]


def repeated_rollouts(tmp_path: Path) -> str:
    """The six example rollouts, then 0-0 and 0-1 again, then 0-0 a third time."""
    lines = ROLLOUTS.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "repeated.jsonl"
    path.write_text("".join([*lines, lines[0], lines[1], lines[0]]), encoding="utf-8")
    return str(path)


def test_to_otel_makes_a_repeated_rollout_id_a_trace_of_its_own_with_ids_no_other_span_has():
    record = json.loads((REPO / "examples" / "rollout-7-0.jsonl").read_text(encoding="utf-8"))
    request = to_otel([record, record, record])
    spans = spans_of(request)
    assert len({span["spanId"] for span in spans}) == len(spans)
    assert len({span["traceId"] for span in spans}) == 3
    # The first record of an id keeps the ids it has alone: a file without repeats is written as before.
    assert request["resourceSpans"][0] == to_otel([record])["resourceSpans"][0]


def test_export_otel_gives_every_record_a_trace_of_its_own_and_says_which_ids_repeat(tmp_path, capsys):
    status, out, err = main(capsys, "export", "otel", repeated_rollouts(tmp_path))
    assert status == 0
    spans = spans_of(json.loads(out))
    assert len({span["spanId"] for span in spans}) == len(spans)
    assert len({span["traceId"] for span in spans}) == 9
    assert err.splitlines() == [
        "gym-contract: warning: rollout 0-0 is in 3 records: each is a trace of its own, its ids hashed from "
        "'0-0', '0-0 #2', '0-0 #3'",
        "gym-contract: warning: rollout 0-1 is in 2 records: each is a trace of its own, its ids hashed from "
        "'0-1', '0-1 #2'",
    ]
    status, alone, err = main(capsys, "export", "otel", str(ROLLOUTS))
    assert (status, err) == (0, "")
    assert json.loads(out)["resourceSpans"][:6] == json.loads(alone)["resourceSpans"]


def test_export_atif_names_a_repeated_rollouts_files_apart_from_any_rollout_id_and_says_so(tmp_path, capsys):
    status, out, err = main(capsys, "export", "atif", repeated_rollouts(tmp_path), "-o", str(tmp_path / "atif"))
    assert status == 0
    names = [Path(path).name for path in out.split()]
    assert names[6:] == ["0-0+2.json", "0-1+2.json", "0-0+3.json"]  # `+` is in no rollout id
    assert err.splitlines() == [
        "gym-contract: warning: rollout 0-0 is in 3 records: each is written to a file of its own: "
        "0-0.json, 0-0+2.json, 0-0+3.json",
        "gym-contract: warning: rollout 0-1 is in 2 records: each is written to a file of its own: "
        "0-1.json, 0-1+2.json",
    ]
    assert json.loads((tmp_path / "atif" / "0-0+3.json").read_text())["session_id"] == "0-0"


def test_export_atif_never_writes_outside_its_directory_whatever_the_rollout_id(tmp_path: Path, capsys):
    record = json.loads((REPO / "examples" / "rollout-7-0.jsonl").read_text(encoding="utf-8"))
    record["_ng_task_index"] = "../escaped"  # the rollout id becomes ../escaped-0
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(json.dumps(record) + "\n", encoding="utf-8")
    output = tmp_path / "deep" / "atif"
    status, out, err = main(capsys, "export", "atif", str(rollouts), "-o", str(output))
    assert status == 0
    assert [Path(path) for path in out.split()] == [output / "line-1.json"]
    assert sorted(path.name for path in tmp_path.rglob("*.json")) == ["line-1.json"]
    assert err == (
        f"gym-contract: warning: {rollouts}:1: the rollout id '../escaped-0' cannot name a file: "
        "written as line-1.json\n"
    )
