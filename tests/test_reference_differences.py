"""Where the models and schemas differ from the reference implementation's, each difference pinned with our verdict.

Every class of document that NeMo Gym's Pydantic models judge otherwise than our schemas has a test here
and a line in the documented list ("Differences from the reference implementation" in
docs/concepts/versioning.md); `tools/reference_diff.py` counts the classes on generated documents
when the reference can be run beside this package.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics, models, schemas
from gym_contract.capture import read_capture
from tests.support import REPO, model_accepts

EXCHANGE = json.loads((REPO / "examples" / "capture" / "7-0.capture.jsonl").read_text().splitlines()[0])
INVOCATION = {"kind": "agent_invocation", "invocation_id": "root"}


def schema_accepts(name: str, document: Any) -> bool:
    return schemas.validator(name).is_valid(document)


def errors(kind: str, document: Any) -> list[str]:
    return sorted({d.code for d in iter_diagnostics(document, kind) if d.severity == "error"})


# --- kept: provider payloads inside conversation items are checked by JSON type only --------------


@pytest.mark.parametrize(
    "item",
    [
        # The reference's SDK types want each annotation to be a known citation with its fields.
        {"type": "message", "role": "assistant", "id": "m", "status": "completed",
         "content": [{"type": "output_text", "text": "x", "annotations": [{"type": "footnote", "n": 1}]}]},
        # ... a computer action to be one of the SDK's nine, with their fields.
        {"type": "computer_call", "id": "c", "call_id": "k", "status": "completed", "pending_safety_checks": [],
         "action": {"type": "gesture", "fingers": 3}},
        # ... code-interpreter outputs to be logs or images.
        {"type": "code_interpreter_call", "id": "i", "container_id": "k", "status": "completed", "code": "1",
         "outputs": [{"type": "chart", "svg": "<svg/>"}]},
        # ... a hosted call's status to be one of the SDK's literals.
        {"type": "image_generation_call", "id": "g", "status": "queued"},
        # ... a function call's output to be text, or a list of input content parts with their fields.
        {"type": "function_call_output", "call_id": "k", "output": [{"type": "input_text"}]},
    ],
    ids=["annotation", "computer-action", "code-outputs", "status", "output-part"],
)  # fmt: skip
def test_provider_payloads_inside_items_are_checked_by_json_type_only(item: dict[str, Any]):
    assert schema_accepts("conversation_item", item)
    assert model_accepts(models.AgentInvocation, {**INVOCATION, "conversation": [item]})
    wrong_type = {**item, "id": 7} if "id" in item else {**item, "call_id": 7}
    assert not schema_accepts("conversation_item", wrong_type)  # the item's own fields keep their types


# --- kept: a trajectory's rollout id keeps the pattern that names capture files ---------------------


def test_a_trajectory_whose_rollout_id_breaks_the_pattern_is_an_error_of_the_engine_not_of_the_schema():
    trajectory = {"task_id": "7", "rollout_id": "7 0"}
    assert schema_accepts("trajectory", trajectory)
    assert model_accepts(models.TrajectoryRecord, trajectory)
    assert errors("trajectory", trajectory) == ["rollout_id_invalid"]
    assert errors("trajectory", {**trajectory, "rollout_id": "7-0"}) == []


# --- kept: counts, positions and durations of captured calls are never negative ---------------------


@pytest.mark.parametrize(
    "field",
    [
        "call_index",
        "tokens_in",
        "tokens_out",
        "tokens_reasoning",
        "tokens_total",
        "cached_tokens",
        "cache_creation_tokens",
        "latency_total_ms",
        "latency_ttft_ms",
    ],
)
def test_a_captured_call_with_a_negative_count_or_latency_is_refused(field: str):
    record = {"call_index": 0, field: -1}
    assert not schema_accepts("model_call_record", record)
    assert not model_accepts(models.ModelCallRecord, record)
    assert schema_accepts("model_call_record", {"call_index": 0, field: 0})


@pytest.mark.parametrize("field", ["latency_ms", "latency_ttft_ms"])
def test_a_capture_line_with_a_negative_latency_is_refused_by_its_schema(field: str):
    assert not schema_accepts("capture_exchange", {**EXCHANGE, field: -0.5})
    assert schema_accepts("capture_exchange", {**EXCHANGE, field: 0})


# --- kept: the capture line's schema is what the middleware writes; reading takes what the reference reads


@pytest.mark.parametrize(
    "change",
    [
        {"model_call_id": None},
        {"request": ["not", "an", "object"]},
        {"response": "text"},
        {"dialect": "completions"},
        {"response_raw": 12},
    ],
    ids=["null-id", "request-list", "response-text", "dialect", "raw-number"],
)
def test_a_capture_line_the_middleware_cannot_write_is_refused_by_its_schema_yet_read(
    tmp_path: Path, change: dict[str, Any]
):
    line = {**EXCHANGE, **change}
    assert not schema_accepts("capture_exchange", line)
    (tmp_path / "7-0.capture.jsonl").write_text(json.dumps(line) + "\n")
    capture = read_capture(tmp_path, "7-0")
    assert capture.damaged_lines == ()
    assert len(capture.records) == 1  # derived, as the reference derives it


def test_a_capture_line_without_model_call_id_is_refused_by_its_schema_yet_read(tmp_path: Path):
    line = {key: value for key, value in EXCHANGE.items() if key != "model_call_id"}
    assert not schema_accepts("capture_exchange", line)
    (tmp_path / "7-0.capture.jsonl").write_text(json.dumps(line) + "\n")
    assert [record.model_call_id for record in read_capture(tmp_path, "7-0").records] == [None]


# --- matched: a captured tool call holds what the response held ------------------------------------


@pytest.mark.parametrize(
    "tool_call",
    [
        {"call_id": "c", "name": "lookup", "arguments": [1, 2]},  # arguments text "[1, 2]" parsed
        {"call_id": "c", "name": "lookup", "arguments": "q"},  # an Anthropic `input` that is text
        {"call_id": 5, "name": "lookup", "arguments": {}},  # a numeric id
        {"call_id": None, "name": None, "arguments": None},
        {},
    ],
    ids=["array-arguments", "text-arguments", "numeric-id", "nulls", "empty"],
)
def test_a_captured_tool_call_takes_any_json_value_as_the_reference_does(tool_call: dict[str, Any]):
    record = {"call_index": 0, "tool_calls": [tool_call]}
    assert schema_accepts("model_call_record", record)
    assert model_accepts(models.ModelCallRecord, record)
    assert not schema_accepts("model_call_record", {"call_index": 0, "tool_calls": ["c"]})  # still an object


def test_a_rollout_whose_capture_holds_such_a_tool_call_passes_validate(tmp_path: Path):
    rollout = json.loads((REPO / "examples" / "rollouts.jsonl").read_text().splitlines()[0])
    capture = rollout.setdefault("ng_model_call_capture", {"rollout_id": "7-0", "metrics": {"num_calls": 1}})
    capture["calls"] = [{"call_index": 0, "tool_calls": [{"call_id": 5, "name": "n", "arguments": [1]}]}]
    path = tmp_path / "rollout.jsonl"
    path.write_text(json.dumps(rollout) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(result.stdout)
    assert not [d for d in report["diagnostics"] if "/tool_calls" in (d.get("path") or "")], report["diagnostics"]


# --- the list itself ---------------------------------------------------------------------------------


def test_the_documented_list_names_every_class_pinned_here():
    page = (REPO / "docs" / "concepts" / "versioning.md").read_text(encoding="utf-8")
    differences = page.split("## Differences from the reference implementation", 1)[1]
    for phrase in (
        "annotations",  # provider payloads
        "`rollout_id_invalid`",
        "never negative",
        "`capture_exchange`",
        "tool call",
        "Cross-field rules",
    ):
        assert phrase in differences, phrase
