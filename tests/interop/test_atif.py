"""ATIF both ways: exports keep every fact, real trajectories import as valid bundles, the round trip is a law."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from gym_contract.interop import ATIF_VERSIONS, AtifError, from_atif, to_atif
from gym_contract.models import AgentObservationBundle
from gym_contract.validation import iter_diagnostics
from tests.rollout_strategies import rollouts
from tests.schema_instances import schema_instances
from tests.support import REPO

ATIF_DATA = REPO / "tests" / "data" / "atif"
REAL_TRAJECTORIES = sorted(ATIF_DATA.glob("*.json"))
EXAMPLE_ROLLOUTS = [
    json.loads(line)
    for name in ("rollouts.jsonl", "rollout-7-0.jsonl")
    for line in (REPO / "examples" / name).read_text().splitlines()
]


def real(name: str) -> Any:
    """One of the real Harbor trajectories of tests/data/atif."""
    return json.loads((ATIF_DATA / f"{name}.trajectory.json").read_text())


def errors(bundle: dict[str, Any]) -> list[str]:
    return [str(d) for d in iter_diagnostics(bundle, "bundle") if d.severity == "error"]


def documents(root: dict[str, Any]) -> list[dict[str, Any]]:
    """The document and every trajectory embedded in it, depth first."""
    found = [root]
    for embedded in root.get("subagent_trajectories") or []:
        found += documents(embedded)
    return found


def normalised(bundle: dict[str, Any]) -> dict[str, Any]:
    """A bundle as the contract's model reads it: defaults filled in, records keyed so that order does not count."""
    dumped = AgentObservationBundle.model_validate(bundle).model_dump(mode="json")
    return {
        "source": dumped["source"],
        "records": sorted(json.dumps(record, sort_keys=True) for record in dumped["records"]),
        "gaps": dumped["gaps"],
    }


def test_the_versions_are_those_the_atif_package_and_the_rfc_define():
    assert ATIF_VERSIONS == ("1.7", "1.8")
    with pytest.raises(ValueError, match=r"unknown ATIF version '1\.6'"):
        to_atif(EXAMPLE_ROLLOUTS[0], "1.6")


@pytest.mark.parametrize("version", ATIF_VERSIONS)
def test_the_root_invocation_is_the_document_and_subagents_are_embedded_and_referenced(version):
    document = to_atif(EXAMPLE_ROLLOUTS[0], version)
    trajectory = EXAMPLE_ROLLOUTS[0]["ng_trajectory"]
    assert document["schema_version"] == f"ATIF-v{version}"
    assert document["session_id"] == trajectory["rollout_id"]
    ids = [d["trajectory_id"] for d in documents(document)]
    assert sorted(ids) == sorted(i["invocation_id"] for i in trajectory["invocations"])
    child = next(i for i in trajectory["invocations"] if i["parent_invocation_id"] is not None)
    references = [
        (result.get("source_call_id"), reference["trajectory_id"])
        for step in document["steps"]
        for result in (step.get("observation") or {}).get("results", [])
        for reference in result.get("subagent_trajectory_ref") or []
    ]
    assert references == [(child["spawned_by_tool_call_id"], child["invocation_id"])]


def test_step_metrics_come_from_the_calls_that_produced_the_step():
    record = EXAMPLE_ROLLOUTS[0]
    document = to_atif(record)
    calls = {call["model_call_id"]: call for call in record["ng_trajectory"]["model_calls"]}
    measured = [step for d in documents(document) for step in d["steps"] if "metrics" in step]
    assert measured, "the example's responses name the items of the conversation"
    for step in measured:
        (summary,) = step["metrics"]["extra"]["gym_contract"]["model_calls"]
        stats = calls[summary["model_call_id"]]["token_stats"]
        assert step["metrics"]["prompt_tokens"] == stats["prompt_tokens"]
        assert step["metrics"]["completion_tokens"] == stats["completion_tokens"]
        assert step["llm_call_count"] == 1
    total = sum(step["metrics"]["prompt_tokens"] for step in measured)
    assert total == sum(d["final_metrics"]["total_prompt_tokens"] for d in documents(document))


def test_an_unknown_token_count_stays_unknown_never_zero():
    record = copy.deepcopy(EXAMPLE_ROLLOUTS[0])
    for call in record["ng_trajectory"]["model_calls"]:
        call["token_stats"]["prompt_tokens"] = None
    document = to_atif(record)
    steps = [step for d in documents(document) for step in d["steps"] if "metrics" in step]
    assert steps
    assert all("prompt_tokens" not in step["metrics"] for step in steps)
    assert all("total_prompt_tokens" not in d["final_metrics"] for d in documents(document))
    unknown = document["final_metrics"]["extra"]["gym_contract"]["calls_with_unknown_tokens"]
    assert unknown["prompt_tokens"] >= 1
    assert all("completion_tokens" in step["metrics"] for step in steps)


def test_every_gap_compaction_and_unplaced_tool_call_is_kept_under_extra():
    bundle = {
        "source": "pi",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "root", "conversation": []},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t1", "started_at": 1786000000.0},
            {"kind": "tool_call", "invocation_id": "gone", "tool_call_id": "t2"},
            {"kind": "context_compaction", "invocation_id": "root", "tokens_before": 10, "tokens_after": 5},
        ],
        "gaps": [{"code": "no_sandbox_runtime"}, {"code": "tool_timing_unavailable", "invocation_id": "root"}],
    }
    kept = to_atif(bundle)["extra"]["gym_contract"]
    assert kept["gaps"] == bundle["gaps"]
    assert kept["tool_calls"] == [bundle["records"][1]]
    assert kept["records"] == [bundle["records"][3], bundle["records"][2]]
    assert normalised(from_atif(to_atif(bundle))) == normalised(bundle)


def test_several_top_level_invocations_make_a_rollout_document_that_embeds_them():
    bundle = {
        "source": "hermes",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "a", "conversation": [{"role": "user", "content": "x"}]},
            {"kind": "agent_invocation", "invocation_id": "b", "parent_invocation_id": "elsewhere"},
        ],
    }
    document = to_atif(bundle)
    assert document["steps"] == []
    assert [d["trajectory_id"] for d in document["subagent_trajectories"]] == ["a", "b"]
    assert normalised(from_atif(document)) == normalised(bundle)


@given(rollouts())
def test_law_bundle_to_atif_to_bundle_keeps_invocations_tool_calls_timings_and_gaps(rollout):
    bundle = rollout.record["ng_agent_observations"]
    seen: set[tuple[Any, Any]] = set()
    records = []
    for record in bundle["records"]:  # a tool observed twice is the contract's error, not this law's concern
        key = (record.get("invocation_id"), record.get("tool_call_id")) if record["kind"] == "tool_call" else None
        if key is None or key not in seen:
            records.append(record)
            seen.add(key)
    bundle = {**bundle, "records": records}
    if errors(bundle):
        return  # a bundle that breaks the contract is refused upstream; the law is about valid ones
    for version in ATIF_VERSIONS:
        back = from_atif(to_atif(bundle, version))
        assert errors(back) == []
        assert normalised(back) == normalised(bundle)


# Drawing whole bundles from the schema costs about 0.3 s each: a sixth of the profile's examples here,
# the rollouts() law above takes the full count.
@settings(max_examples=max(1, settings().max_examples // 6))
@given(schema_instances("agent_observations"))
def test_law_any_valid_bundle_the_schema_allows_survives_the_round_trip(bundle):
    # Every conversation item type, hosted tools and training variants included, and ids of any text.
    if errors(bundle):
        return
    back = from_atif(to_atif(bundle))
    assert errors(back) == []
    assert normalised(back) == normalised(bundle)


def test_law_counter_example_a_bundle_of_defaults_only_is_a_bundle_and_keeps_its_empty_source():
    bundle = {"source": ""}
    assert to_atif(bundle)["extra"]["gym_contract"]["source"] == ""
    assert normalised(from_atif(to_atif(bundle))) == normalised(bundle)


def test_law_counter_example_a_tool_call_reported_twice_in_one_bundle_is_kept_twice():
    tool = {"invocation_id": "", "kind": "tool_call", "tool_call_id": ""}
    bundle = {"source": "", "records": [tool, dict(tool)]}
    back = from_atif(to_atif(bundle))
    assert [record for record in back["records"] if record["kind"] == "tool_call"] == [tool, tool]


def test_an_output_written_before_its_call_survives_the_round_trip():
    bundle = {
        "source": "pi",
        "records": [
            {
                "kind": "agent_invocation",
                "invocation_id": "root",
                "conversation": [
                    {"type": "function_call_output", "call_id": "c", "output": "early"},
                    {"type": "function_call", "call_id": "c", "name": "lookup", "arguments": "[1]"},
                ],
            }
        ],
    }
    assert normalised(from_atif(to_atif(bundle))) == normalised(bundle)


@pytest.mark.parametrize("path", REAL_TRAJECTORIES, ids=lambda path: path.name)
def test_a_real_harbor_trajectory_becomes_a_valid_bundle_with_gaps_for_what_atif_cannot_say(path: Path):
    document = json.loads(path.read_text())
    bundle = from_atif(document)
    assert errors(bundle) == []
    (invocation,) = [r for r in bundle["records"] if r["kind"] == "agent_invocation"]
    assert invocation["status"] == "unknown"
    assert invocation["conversation"], "the steps are the conversation"
    codes = {gap["code"] for gap in bundle["gaps"]}
    assert {"invocation_outcome_unavailable", "model_response_id_unavailable"} <= codes
    tool_ids = [tc["tool_call_id"] for step in document["steps"] for tc in step.get("tool_calls") or []]
    tools = [r for r in bundle["records"] if r["kind"] == "tool_call"]
    assert [tool["tool_call_id"] for tool in tools] == tool_ids
    untimed = {gap["detail"] for gap in bundle["gaps"] if gap["code"] == "tool_timing_unavailable"}
    assert untimed == set(tool_ids)
    assert bundle["source"] == document["agent"]["name"]


def test_a_continued_history_and_reasoning_without_an_item_id_are_named_by_gaps():
    linear = from_atif(real("terminus-2-hello-world-context-summarization-linear-history"))
    assert any(gap["code"] == "agent_transcript_unavailable" for gap in linear["gaps"])
    invalid_json = from_atif(real("terminus-2-hello-world-invalid-json"))
    assert any(gap["code"] == "reasoning_item_id_missing" for gap in invalid_json["gaps"])


def test_openhands_tool_results_become_outputs_of_their_calls():
    document = real("openhands-hello-world")
    bundle = from_atif(document)
    (invocation,) = [r for r in bundle["records"] if r["kind"] == "agent_invocation"]
    items = invocation["conversation"]
    results = [r["source_call_id"] for s in document["steps"] for r in (s.get("observation") or {}).get("results", [])]
    outputs = [(n, item["call_id"]) for n, item in enumerate(items) if item["type"] == "function_call_output"]
    assert [call_id for _, call_id in outputs] == results == ["call_fake_1"]
    for position, call_id in outputs:  # each output follows the call it answers
        assert any(i["type"] == "function_call" and i["call_id"] == call_id for i in items[:position])


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "/: expected an ATIF trajectory object, not an array"),
        ({"schema_version": "ATIF-v2.0", "agent": {"name": "a"}, "steps": []}, "unknown ATIF version 'ATIF-v2.0'"),
        ({"schema_version": "ATIF-v1.8", "steps": []}, "/agent: expected the agent object"),
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"}, "steps": [{"step_id": 1, "source": "bot"}]},
         "/steps/0/source: expected system, user or agent"),
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"}, "steps": [],
          "subagent_trajectories": [{"schema_version": 1}]},
         "/subagent_trajectories/0/schema_version: expected the ATIF version string, not a number"),
        # What the atif package's models refuse too.
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"},
          "steps": [{"step_id": 5, "source": "user", "message": "hi"}]},
         "/steps/0/step_id: expected step number 1"),
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"},
          "steps": [{"step_id": 1, "source": "user", "message": "hi", "timestamp": "not a time"}]},
         "/steps/0/timestamp: expected an ISO 8601 date and time"),
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"},
          "steps": [{"step_id": 1, "source": "agent", "message": "",
                     "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": "notadict"}]}]},
         "/steps/0/tool_calls/0/arguments: expected an arguments object, not a string"),
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"},
          "steps": [{"step_id": 1, "source": "agent", "message": "", "observation": {"results": [{"content": 0.7}]}}]},
         "/steps/0/observation/results/0/content: expected a string or content parts"),
        ({"schema_version": "ATIF-v1.8", "agent": {"name": "a"},
          "steps": [{"step_id": 1, "source": "agent", "message": "", "observation": {"results": ["ok"]}}]},
         "/steps/0/observation/results/0: expected an observation result object"),
    ],
)  # fmt: skip
def test_a_document_that_is_not_atif_is_refused_with_where_and_why(document, message):
    with pytest.raises(AtifError) as refused:
        from_atif(document)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_subagent_referenced_but_not_embedded_is_an_invocation_with_a_gap_not_lost():
    document = {
        "schema_version": "ATIF-v1.8",
        "trajectory_id": "root",
        "agent": {"name": "a"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "go"},
            {"step_id": 2, "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "spawn", "function_name": "Task", "arguments": {}}],
             "observation": {"results": [{"source_call_id": "spawn",
                                          "subagent_trajectory_ref": [{"trajectory_id": "child"}]}]}},
        ],
        "subagent_trajectories": [],
    }  # fmt: skip
    bundle = from_atif(document)
    child = next(r for r in bundle["records"] if r.get("invocation_id") == "child")
    assert (child["parent_invocation_id"], child["spawned_by_tool_call_id"]) == ("root", "spawn")
    assert {"code": "subagent_transcript_missing", "invocation_id": "child"}.items() <= next(
        gap for gap in bundle["gaps"] if gap["code"] == "subagent_transcript_missing"
    ).items()
    assert errors(bundle) == []
