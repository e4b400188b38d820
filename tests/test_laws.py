"""The laws of trust, each stated once over every entry point it concerns.

The capability test files hold the same laws entry point by entry point, for a failure that names
its place; here each law is one property, so that `HYPOTHESIS_PROFILE=thorough` runs each of them
100,000 times at a cost a single machine can pay.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gym_contract import (
    KINDS,
    Capture,
    ContractError,
    LineageIndex,
    aggregate_metrics,
    assistant_fingerprint,
    attach_trajectory,
    capture_attachment,
    chain,
    check_files,
    classify_claude_code,
    classify_opencode,
    collect,
    conversation_digest,
    coverage_matrix,
    decide,
    derive_record,
    detect_kind,
    is_valid,
    iter_diagnostics,
    join,
    project,
    rollout_coverage,
    rollout_id_from_run_body,
    stamp,
    validate,
)
from gym_contract._json_writing import dumps
from gym_contract.interop import to_atif, to_otel
from gym_contract.models import AgentObservationBundle
from gym_contract.projection import ContradictoryEvidenceError, build_trajectory
from gym_contract.reading._json_parsing import loads
from gym_contract.validation import check_line
from tests.rollout_strategies import rollouts
from tests.strategies import (
    COMPRESSION_MAGIC,
    compressed_streams,
    hostile_records,
    interpreters_own_stack,
    lines_beside_a_number,
    records_holding_non_finite,
)
from tests.test_totality import hostile_lines

NOW = 1_786_100_000.0


def _errors(record: Any, kind: str | None = None) -> list[str]:
    return [f"{d.code} {d.path}" for d in iter_diagnostics(record, kind, now=NOW) if d.severity == "error"]


@given(hostile_records())
def test_law_no_entry_point_raises_on_any_value(value):
    """Any JSON value, or any example record broken at random, given to every entry point of the library."""
    with interpreters_own_stack():
        for kind in (None, *KINDS):
            found = list(iter_diagnostics(value, kind, now=NOW))
            assert is_valid(value, kind, now=NOW) == all(d.severity != "error" for d in found)
            with contextlib.suppress(ContractError):
                validate(value, kind, now=NOW)
        detect_kind(value)
        call = derive_record(value, 0)
        capture_attachment(Capture("7-0", (call,)))
        aggregate_metrics([call])
        with contextlib.suppress(ValidationError):
            join(AgentObservationBundle.model_validate(value), [call])
        with contextlib.suppress(ValueError):
            rollout_id_from_run_body(value)
        if isinstance(value, dict):
            project(value, value)
            attach_trajectory(value, value)
            collect(value)
            with contextlib.suppress(ContradictoryEvidenceError, KeyError, ValueError):
                build_trajectory(value, value)
            for kind in (None, "rollout", "trajectory"):
                rollout_coverage(value, kind)
        coverage_matrix([value])
        items = value if isinstance(value, list) else [value]
        assistant_fingerprint(items)
        conversation_digest(items)
        stamp("call", items, items)
        LineageIndex([stamp("call", items, items)]).resolve(items)
        chain([call])
        classify_claude_code(items)
        classify_opencode(value if isinstance(value, dict) else None, items)
        with contextlib.suppress(ContractError):
            decide(value)
        with contextlib.suppress(ValueError):  # documented: a value that is no rollout record, trajectory or bundle
            to_otel([value])
        with contextlib.suppress(ValueError):
            to_atif(value)


@given(records_holding_non_finite())
def test_law_a_python_value_no_json_text_holds_raises_only_where_documented(value):
    """NaN and the infinities come from no JSON text, only from a caller's own values: the entry points
    that never raise do not; the lineage functions raise the ValueError they document."""
    with interpreters_own_stack():
        found = list(iter_diagnostics(value, now=NOW))
        assert is_valid(value, now=NOW) == all(d.severity != "error" for d in found)
        call = derive_record(value, 0)
        capture_attachment(Capture("7-0", (call,)))
        project(value, value)
        attach_trajectory(value, value)
        collect(value)
        rollout_coverage(value)
        classify_claude_code([value])
        classify_opencode(value, [value])
        with contextlib.suppress(ValueError):
            to_otel([value])
        for hashing in (lambda: chain([call]), lambda: stamp("call", [value], [value])):
            with contextlib.suppress(ValueError):
                hashing()


@given(st.lists(st.one_of(hostile_lines(), st.just(b""), st.just(b"   ")), min_size=1, max_size=8))
def test_law_a_file_of_n_lines_gives_a_report_that_accounts_for_all_n(lines):
    """Any mix of damaged, ill-typed, blank and sound lines: every one is counted, once, in one report.

    A file that begins with gzip's or zstd's magic bytes is read as the compressed stream it says it
    is, whatever its name; its lines are those of the stream, and they add up all the same.
    """
    with interpreters_own_stack():
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "hostile.jsonl")
            path.write_bytes(b"\n".join(lines) + b"\n")
            report = check_files([str(path)], now=NOW)
        assert report.blank_lines + report.damaged_lines + report.records == report.lines
        if not lines[0].startswith(COMPRESSION_MAGIC):
            assert report.lines == len(lines)
        assert sum(report.by_severity.values()) == sum(report.by_code.values())


@given(hostile_lines())
def test_law_what_validate_accepts_every_command_processes_and_writes(line):
    """A line validate passes is collected and projected, and what is written reads back the same and passes."""
    with interpreters_own_stack():
        checked = check_line(line, now=NOW)
        if checked.record is None or any(d.severity == "error" for d in checked.diagnostics):
            return
        record = loads(line)
        written = dumps(collect(record))
        assert dumps(loads(written)) == written
        if checked.kind == "rollout":
            assert [d for d in check_line(written, "rollout", now=NOW).diagnostics if d.severity == "error"] == []
        items = [record]
        stamp("call", items, items)
        rollout_coverage(record)
        classify_claude_code(items)


@given(rollouts())
def test_law_the_projector_and_the_validator_agree(rollout):
    """What collect writes from a realistic rollout carries no error; from a sound one, neither does the whole."""
    with interpreters_own_stack():
        with tempfile.TemporaryDirectory() as directory:
            rollout.write_capture(Path(directory))
            collected = collect(loads(dumps(rollout.record)), [directory])
        errors = _errors(collected, "rollout")
        assert [e for e in errors if e.split()[1].startswith(("/ng_trajectory", "/ng_model_call_capture"))] == []
        if not _errors(rollout.record, "rollout"):
            assert errors == []


@given(lines_beside_a_number())
def test_law_a_number_out_of_range_beside_a_string_changes_nothing_validate_accepts(lines):
    """A line with a number no fast parser holds is read by another parser, held to the same rules on text:
    what validate accepts from it is collected and written, and reads back the same."""
    with_number, with_zero = lines
    assert [d.code for d in check_line(with_number, now=NOW).diagnostics] == [
        d.code for d in check_line(with_zero, now=NOW).diagnostics
    ]
    checked = check_line(with_number, now=NOW)
    if checked.record is not None and not any(d.severity == "error" for d in checked.diagnostics):
        written = dumps(collect(loads(with_number)))
        assert dumps(loads(written)) == written


@given(compressed_streams())
def test_law_every_legal_framing_of_a_compressed_file_is_read_whole(stream):
    """gzip members, zstd frames with or without their size, skippable frames anywhere: all lines are read."""
    _, compressed, plain = stream
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "rollouts.jsonl")
        path.write_bytes(compressed)
        report = check_files([str(path)], now=NOW)
    assert (report.lines, report.by_code.get("input_truncated")) == (len(plain.splitlines()), None)
