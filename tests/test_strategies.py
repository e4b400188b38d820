"""gym_contract.strategies: clean values pass the engine, and every defect carries its code and no other."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from gym_contract import collect, derive_record, iter_diagnostics, schemas
from gym_contract import strategies as contract
from gym_contract.checking import check_files
from gym_contract.diagnostics import CODES
from tests.support import REPO

CLEAN = {
    "capture_exchange": contract.capture_exchanges(),
    "bundle": contract.bundles(),
    "rollout": contract.rollout_records(),
    "trajectory": contract.trajectories(),
    "model_call_capture": contract.model_call_captures(),
    "agent_outcome": contract.agent_outcomes(),
}


def codes_of_line(line: bytes, kind: str | None) -> set[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "record.jsonl"
        path.write_bytes(line + b"\n")
        return {diagnostic.code for diagnostic in check_files([str(path)], kind).diagnostics}


@pytest.mark.parametrize("kind", sorted(CLEAN))
def test_a_clean_value_has_no_diagnostic_at_all(kind: str):
    @given(CLEAN[kind])
    def law(value: dict[str, Any]) -> None:
        assert [d.to_dict() for d in iter_diagnostics(value, kind)] == []

    law()


def reported_with_its_code_alone(defect: contract.Defect) -> None:
    if defect.record is not None:
        assert {d.code for d in iter_diagnostics(defect.record, defect.kind)} == {defect.code}
    assert codes_of_line(defect.line, defect.kind) == {defect.code}


# A third of the profile's examples for each of the 27 codes: the union law below draws any of them too.
PER_CODE = settings(max_examples=max(1, settings.default.max_examples // 3))


@pytest.mark.parametrize("code", contract.DEFECT_CODES)
def test_a_defect_is_reported_with_its_code_and_no_other(code: str):
    @PER_CODE
    @given(contract.defects(code))
    def law(defect: contract.Defect) -> None:
        assert defect.code == code
        reported_with_its_code_alone(defect)

    law()


@given(contract.defects())
def test_any_defect_drawn_without_a_code_is_one_of_them(defect: contract.Defect):
    assert defect.code in contract.DEFECT_CODES
    reported_with_its_code_alone(defect)


def test_every_code_of_a_record_or_a_line_has_a_defect_strategy():
    about_files = {"input_unreadable", "input_truncated", "line_too_long", "no_records"}
    assert set(contract.DEFECT_CODES) == set(CODES) - about_files


def test_a_code_without_a_defect_strategy_is_refused():
    with pytest.raises(ValueError, match="no defect strategy for 'input_unreadable'"):
        contract.defects("input_unreadable")


@given(contract.rollouts())
def test_a_rollout_collected_in_memory_is_what_collect_writes_from_its_capture_file(rollout: contract.Rollout):
    with tempfile.TemporaryDirectory() as folder:
        rollout.write_capture(folder)
        assert rollout.collected() == collect(rollout.record, [folder])


@given(
    st.sampled_from(contract.DIALECTS).flatmap(
        lambda dialect: st.tuples(st.just(dialect), contract.capture_exchanges(dialect))
    )
)
def test_each_dialect_derives_a_record_whose_tokens_add_up(drawn: tuple[str, dict[str, Any]]):
    dialect, exchange = drawn
    record = derive_record(exchange, 0)
    assert record.dialect == dialect
    assert record.tokens_total == record.tokens_in + record.tokens_out
    assert 0 <= record.cached_tokens <= record.tokens_in
    assert record.latency_total_ms == exchange["latency_ms"]
    assert [call.model_dump() for call in record.tool_calls] == asked_for(exchange)


def asked_for(exchange: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls a drawn response asks for, read from the dialect's own shape."""
    response = exchange["response"]
    if exchange["dialect"] == "responses":
        calls = [item for item in response["output"] if item["type"] == "function_call"]
        return [{"call_id": c["call_id"], "name": c["name"], "arguments": json.loads(c["arguments"])} for c in calls]
    if exchange["dialect"] == "chat":
        calls = response["choices"][0]["message"].get("tool_calls", [])
        return [
            {"call_id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
            for c in calls
        ]
    blocks = [block for block in response["content"] if block["type"] == "tool_use"]
    return [{"call_id": b["id"], "name": b["name"], "arguments": b["input"]} for b in blocks]


@pytest.mark.parametrize("dialect", contract.DIALECTS)
def test_drawn_exchanges_of_each_dialect_ask_for_several_tool_calls_or_none(dialect: str):
    """Responses that ask for tools are drawn, so that what derives a record's `tool_calls` is exercised."""
    drawn = contract.capture_exchanges(dialect)
    asking = find(drawn, lambda exchange: len(derive_record(exchange, 0).tool_calls) > 1)
    answering = find(drawn, lambda exchange: not derive_record(exchange, 0).tool_calls)
    assert len(asked_for(asking)) > 1
    assert asked_for(answering) == []


@given(contract.capture_exchanges())
def test_every_drawn_exchange_is_valid_against_the_capture_schema(exchange: dict[str, Any]):
    assert [error.message for error in schemas.validator("capture_exchange").iter_errors(exchange)] == []


def _records(bundle: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in bundle["records"] if record["kind"] == kind]


def features(bundle: dict[str, Any]) -> set[str]:
    """What a bundle shows of real runs: which record kinds, subagents spawned by a call their parent made,
    references by response id."""
    found = {record["kind"] for record in bundle["records"]}
    invocations = {record["invocation_id"]: record for record in _records(bundle, "agent_invocation")}
    for record in invocations.values():
        if "parent_invocation_id" in record:
            parent = invocations[record["parent_invocation_id"]]
            assert record["spawned_by_tool_call_id"] in [item.get("call_id") for item in parent["conversation"]]
            found.add("subagent")
        if any("response_id" in reference for reference in record["model_calls"]):
            found.add("referenced by response id")
    return found


def test_the_strategies_reach_the_shapes_real_runs_have():
    """Not only the easy cases: over the profile's examples, subagents, every kind of observation,
    references by response id, and trajectories with turns from the harness's own trajectory."""
    seen: set[str] = set()

    @given(contract.bundles(), contract.trajectories())
    def collect_features(bundle: dict[str, Any], trajectory: dict[str, Any]) -> None:
        seen.update(features(bundle))
        if trajectory["turns"]:
            seen.add("turns")
            turn_calls = {ref["model_call_id"] for turn in trajectory["turns"] for ref in turn["model_calls"]}
            assert turn_calls <= {call["model_call_id"] for call in trajectory["model_calls"]}

    collect_features()
    expected = {"agent_invocation", "tool_call", "context_compaction", "sandbox", "subagent", "turns"}
    assert expected | {"referenced by response id"} <= seen


def test_without_hypothesis_the_import_names_the_extra():
    hidden = "import sys; sys.modules['hypothesis'] = None; import gym_contract.strategies"
    run = subprocess.run([sys.executable, "-c", hidden], capture_output=True, text=True, cwd=REPO, check=False)
    assert run.returncode == 1
    assert 'python -m pip install ".[strategies]" in a checkout of gym-contract' in run.stderr.strip().splitlines()[-1]
