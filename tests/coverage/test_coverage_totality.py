"""Coverage never raises: any record is rated or skipped, any rollout file gives a matrix it writes whole."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gym_contract.coverage import CRITERIA, VERDICTS, coverage_matrix, rollout_coverage
from gym_contract.diagnostics import Diagnostic
from gym_contract.reading._json_parsing import loads
from gym_contract.reading._records import iter_records
from tests.strategies import file_lines, hostile_records, jsonl
from tests.support import REPO, run_in_process

KINDS = st.sampled_from([None, "rollout", "trajectory", "bundle"])
GROUPS = st.sampled_from(["source", "agent"])
FORMATS = st.sampled_from(["json", "text", "markdown"])


@given(hostile_records(), KINDS)
def test_any_record_is_rated_on_every_criterion_or_skipped(record: Any, kind: str | None) -> None:
    coverage = rollout_coverage(record, kind)
    if coverage is not None:
        assert [verdict.criterion for verdict in coverage.verdicts] == list(CRITERIA)
        assert all(verdict.verdict in VERDICTS and verdict.reasons for verdict in coverage.verdicts)


@given(st.lists(hostile_records(), max_size=5))
def test_the_matrix_of_any_records_counts_every_rated_one(records: list[Any]) -> None:
    rated = [record for record in records if isinstance(record, dict) and rollout_coverage(record) is not None]
    matrix = coverage_matrix(records)
    assert matrix.total == len(rated)
    assert sum(matrix.to_dict()["all"]["V"].values()) <= 7 * len(rated)


def expected_document(path: Path, by: str) -> dict[str, Any]:
    """What `gym-contract coverage --format json` reports, from the library."""
    entries = [entry for _, entry in iter_records(str(path))]
    records = [entry for entry in entries if not isinstance(entry, Diagnostic)]
    matrix = coverage_matrix(records, by)  # type: ignore[arg-type]
    other = sum(1 for record in records if rollout_coverage(record) is None)
    return {"by": by, **matrix.to_dict(), "damaged_lines": len(entries) - len(records), "other_records": other}


@given(
    file_lines(hostile_records()), st.sampled_from(["source", "agent"]), st.sampled_from(["json", "text", "markdown"])
)
def test_the_command_takes_any_rollout_file_and_its_json_reads_back_as_the_matrix(
    lines: list[bytes], by: str, output: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rollouts.jsonl"
        path.write_bytes(jsonl(lines))
        status, out, err = run_in_process("coverage", str(path), "--by", by, "--format", output, "--explain", "C6")
        expected = expected_document(path, by)
    assert status == (0 if expected["rollouts"] else 1)  # no rollout to rate: no_records, exit 1
    assert all(line.startswith("gym-contract: ") for line in err.splitlines())
    if output == "json":
        assert loads(out.encode()) == {
            **expected,
            "explain": {"criterion": "C6", "why_not_v": expected["why_not_v"].get("C6", {})},
        }


# ------------------------------------------------------------------------------ crash classes pinned


def rollout_with_tool_times(started: Any, completed: Any) -> dict[str, Any]:
    record = json.loads((REPO / "examples" / "rollouts.jsonl").read_text().splitlines()[0])
    for tool in record["ng_trajectory"]["tool_calls"]:
        tool["started_at"], tool["completed_at"] = started, completed
    return record


def test_tool_times_no_double_holds_are_rated_not_raised() -> None:
    coverage = rollout_coverage(rollout_with_tool_times(10**400, 10**401))
    assert coverage is not None
    assert coverage.verdict("C6").verdict in ("O", "V")


def test_the_command_rates_a_file_whose_tool_times_no_double_holds(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text(json.dumps(rollout_with_tool_times(10**400, 10**401)) + "\n")
    status, out, _ = run_in_process("coverage", str(path), "--format", "json")
    assert (status, loads(out.encode())["rollouts"]) == (0, 1)
