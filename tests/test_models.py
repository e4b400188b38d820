"""The public models on reference records and on every structural rule of the contract, beside the schema."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from gym_contract import (
    AgentInvocation,
    AgentObservationBundle,
    ContextCompactionObservation,
    ModelCallRef,
    TrajectoryRecord,
    schemas,
)
from tests.support import REPO, model_accepts, model_entities

ENTITIES = model_entities()
POLICY = {"type": "responses_api_models", "name": "policy"}
REFERENCE_ROLLOUTS = REPO / "examples" / "reference" / "nemo_gym_claude_code_math_rollouts.jsonl"


def judged(name: str, data: object) -> tuple[bool, bool]:
    """(schema verdict, model verdict) for one instance."""
    return schemas.validator(name).is_valid(data), model_accepts(ENTITIES[name], data)


def test_the_reference_trajectory_example_validates_and_dumps_with_every_key():
    example = schemas.get("trajectory")["examples"][0]
    record = TrajectoryRecord.model_validate(example)
    assert record.model_dump(mode="json") == example


def _reference_conversations():
    for line_no, line in enumerate(REFERENCE_ROLLOUTS.read_text().splitlines(), start=1):
        row = json.loads(line)
        yield pytest.param(row["responses_create_params"]["input"] + row["response"]["output"], id=f"line-{line_no}")


@pytest.mark.parametrize("conversation", list(_reference_conversations()))
def test_real_gym_conversation_items_validate(conversation):
    invocation = {"kind": "agent_invocation", "invocation_id": "root", "conversation": conversation}
    assert judged("agent_invocation", invocation) == (True, True)
    model = AgentInvocation.model_validate(invocation)
    kinds = {type(item).__name__ for item in model.conversation}
    assert kinds <= {"EasyInputMessage", "FunctionCall", "FunctionCallOutput", "OutputMessage"}
    # Items keep every key they came with (provider extras included) through a dump.
    for original, dumped in zip(conversation, model.model_dump(mode="json")["conversation"], strict=True):
        assert original == {key: value for key, value in dumped.items() if key in original}


# ModelCallRef: `model_call_id`, or `model_ref` + `response_id`; empty strings count as missing.
@pytest.mark.parametrize(
    ("data", "valid"),
    [
        ({"model_call_id": "abc"}, True),
        ({"model_ref": POLICY, "response_id": "resp_1"}, True),
        ({"model_call_id": "abc", "model_ref": POLICY, "response_id": "resp_1"}, True),
        ({"model_call_id": "abc", "response_id": None}, True),
        ({}, False),
        ({"response_id": "resp_1"}, False),
        ({"model_ref": POLICY}, False),
        ({"model_call_id": ""}, False),
        ({"model_call_id": "", "model_ref": POLICY, "response_id": ""}, False),
        ({"model_call_id": None, "model_ref": None, "response_id": "resp_1"}, False),
        ({"model_call_id": "", "model_ref": POLICY, "response_id": "resp_1"}, True),
        ({"model_call_id": "abc", "surprise": 1}, False),
    ],
)
def test_model_call_ref_rule(data, valid):
    assert judged("model_call_ref", data) == (valid, valid)


def test_model_call_ref_error_names_the_rule():
    with pytest.raises(ValidationError, match="model_call_id, or both model_ref and response_id, are required"):
        ModelCallRef.model_validate({"response_id": "resp_1"})


TOOL = {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call_1"}
SANDBOX = {"kind": "sandbox", "role": "agent"}
COMPACTION = {"kind": "context_compaction", "invocation_id": "root"}
TURN = {"invocation_id": "root", "task_id": "7", "rollout_id": "7-0", "turn_no": 1, "timestamp": 1.0, "step_count": 0}


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("tool_call_observation", {**TOOL, "status": "exploded"}, id="enum"),
        pytest.param("tool_call_observation", {**TOOL, "duration_ms": -1}, id="negative-duration"),
        pytest.param("tool_call_observation", {**TOOL, "output": "x"}, id="output-only-on-trajectory-tool-calls"),
        pytest.param("tool_call_observation", {**TOOL, "kind": "turn"}, id="wrong-kind"),
        pytest.param("tool_call_observation", {"kind": "tool_call", "invocation_id": "root"}, id="required"),
        pytest.param("tool_call_observation", {**TOOL, "started_at": "2026-01-01"}, id="type"),
        pytest.param("tool_call_observation", {**TOOL, "timing_source": "guess"}, id="timing-source"),
        pytest.param("sandbox_observation", {**SANDBOX, "outcome": "exploded"}, id="sandbox-outcome"),
        pytest.param("sandbox_observation", {**SANDBOX, "peak_memory_mib": -0.5}, id="sandbox-bound"),
        pytest.param("sandbox_observation", {"kind": "sandbox"}, id="sandbox-role-required"),
        pytest.param("context_compaction", {**COMPACTION, "tokens_before": -1}, id="compaction-bound"),
        pytest.param("context_compaction", {**COMPACTION, "tokens_after": 1.5}, id="compaction-integer"),
        pytest.param("context_compaction", {**COMPACTION, "outcome": "completed!"}, id="compaction-outcome"),
        pytest.param("context_compaction", {**COMPACTION, "model_calls": [{}]}, id="compaction-model-call-ref"),
        pytest.param("agent_invocation", {"invocation_id": "r", "status": "done"}, id="invocation-status"),
        pytest.param("agent_invocation", {"invocation_id": 3}, id="invocation-id-type"),
        pytest.param("agent_invocation", {"invocation_id": "r", "turns": []}, id="invocation-unknown-key"),
        pytest.param("observation_gap", {"invocation_id": "r"}, id="gap-code-required"),
        pytest.param("observation_gap", {"code": "x", "severity": "high"}, id="gap-unknown-key"),
        pytest.param("agent_observations", {"records": []}, id="bundle-source-required"),
        pytest.param(
            "agent_observations", {"source": "pi", "records": [{**TURN, "kind": "turn"}]}, id="turn-in-bundle"
        ),
        pytest.param("agent_observations", {"source": "pi", "records": [{"invocation_id": "r"}]}, id="record-no-kind"),
        pytest.param(
            "agent_observations",
            {"source": "pi", "records": [{"invocation_id": "", "tool_call_id": ""}]},
            id="record-no-kind-pinned",  # found by the agreement property test
        ),
        pytest.param("trajectory_turn", {**TURN, "turn_no": 0}, id="turn-number-from-1"),
        pytest.param("trajectory_turn", {**TURN, "step_count": -1}, id="step-count-bound"),
        pytest.param("trajectory_turn", {**TURN, "turn_no": "1"}, id="no-string-to-number-coercion"),
        pytest.param("trajectory_turn", {**TURN, "resolved": 1}, id="no-number-to-bool-coercion"),
        pytest.param("trajectory", {"task_id": "7", "rollout_id": "7-0", "schema_version": "2.0"}, id="schema-version"),
        pytest.param("trajectory", {"task_id": "7"}, id="rollout-id-required"),
        pytest.param("trajectory_model_call", {"token_stats": {"prompt_tokens": -5}}, id="token-stats-bound"),
        pytest.param("trajectory_model_call", {"response_metadata": {"latency_ttft_ms": -1}}, id="ttft-bound"),
        pytest.param("trajectory_model_call", {"token_stats": None}, id="token-stats-not-null"),
        pytest.param("trajectory_model_call", {"duration_ms": -1}, id="model-call-duration-bound"),
        pytest.param("model_call_record", {"call_index": -1}, id="call-index-bound"),
        pytest.param("model_call_record", {}, id="call-index-required"),
        pytest.param(
            "agent_outcome",
            {
                "harness": "x",
                "classifier": {"name": "c", "version": "1"},
                "response_status": "failed",
                "failure_kind": "bad_luck",
            },
            id="failure-kind",
        ),
        pytest.param(
            "agent_outcome",
            {
                "harness": "x",
                "classifier": {"name": "c", "version": "1"},
                "response_status": "failed",
                "error_message": "x" * 16_001,
            },
            id="message-bound",
        ),
    ],
)
def test_structural_violations_are_rejected_by_schema_and_model(name, data):
    assert judged(name, data) == (False, False)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("tool_call_observation", TOOL, id="tool-minimal"),
        pytest.param("trajectory_tool_call", {**TOOL, "output": {"any": ["json"]}}, id="trajectory-tool-output"),
        pytest.param("trajectory_tool_call", {k: v for k, v in TOOL.items() if k != "kind"}, id="tool-kind-default"),
        pytest.param("context_compaction", {"invocation_id": "root"}, id="compaction-kind-default"),
        pytest.param("context_compaction", {**COMPACTION, "tokens_before": 10, "tokens_after": 11}, id="tokens-grow"),
        pytest.param("trajectory_turn", {**TURN, "turn_no": 1.0}, id="integral-float-is-an-integer"),
        pytest.param("trajectory_turn", {**TURN, "timestamp": 5}, id="integer-is-a-number"),
        pytest.param("agent_observations", {"source": "pi"}, id="bundle-minimal"),
        pytest.param("observation_gap", {"code": "a_code_not_in_the_registry"}, id="open-gap-codes"),
        pytest.param("model_call_record", {"call_index": 0, "provider_extra": 1}, id="record-allows-extras"),
        pytest.param("capture_exchange", {"model_call_id": "x", "dialect": None}, id="exchange-minimal"),
        pytest.param(
            "agent_invocation",
            {"invocation_id": "r", "parent_invocation_id": "not-in-this-bundle"},
            id="missing-parent-is-structurally-fine",
        ),
    ],
)
def test_structurally_valid_records_are_accepted_by_schema_and_model(name, data):
    assert judged(name, data) == (True, True)


TRAINING_TOKENS = {"prompt_token_ids": [1, 2], "generation_token_ids": [3], "generation_log_probs": [-0.1]}


@pytest.mark.parametrize(
    ("extra", "valid"),
    [
        ({}, True),
        (TRAINING_TOKENS, True),
        ({**TRAINING_TOKENS, "routed_experts": "nrlre1:int8:1x1x1:AA=="}, True),
        ({**TRAINING_TOKENS, "routed_experts": None}, True),
        ({"prompt_token_ids": [1, 2]}, False),
        ({"prompt_token_ids": [1], "generation_token_ids": [3]}, False),
        ({"routed_experts": [[[1]]]}, False),
        ({**TRAINING_TOKENS, "prompt_token_ids": None}, False),
        ({**TRAINING_TOKENS, "generation_log_probs": ["x"]}, False),
    ],
)
@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": "q", "type": "message"},
        {
            "id": "msg-1",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "a", "annotations": []}],
        },
        {"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
    ],
)
def test_training_token_fields_come_all_together_or_not_at_all(item, extra, valid):
    assert judged("conversation_item", {**item, **extra}) == (valid, valid)


def test_bundle_records_are_told_apart_by_kind():
    bundle = AgentObservationBundle.model_validate(
        {
            "source": "claude_code",
            "records": [TOOL, SANDBOX, COMPACTION, {"kind": "agent_invocation", "invocation_id": "root"}],
        }
    )
    assert [type(r).__name__ for r in bundle.records] == [
        "ToolCallObservation",
        "SandboxObservation",
        "ContextCompactionObservation",
        "AgentInvocation",
    ]


def test_a_standalone_compaction_without_kind_takes_its_default():
    assert ContextCompactionObservation.model_validate({"invocation_id": "root"}).kind == "context_compaction"


def test_a_bundle_record_without_kind_is_rejected_even_where_its_own_schema_defaults_it():
    bundle = {"source": "claude_code", "records": [{"invocation_id": "root", "outcome": "completed"}]}
    assert judged("agent_observations", bundle) == (False, False)


def test_defaults_match_the_reference_dump():
    dumped = TrajectoryRecord.model_validate({"task_id": "7", "rollout_id": "7-0", "model_calls": [{}]}).model_dump(
        mode="json"
    )
    assert dumped["schema_version"] == "1.0"
    assert dumped["invocations"] == dumped["turns"] == dumped["tool_calls"] == dumped["gaps"] == []
    call = dumped["model_calls"][0]
    assert call["token_stats"] == dict.fromkeys(
        ("prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens", "cached_tokens")
    )
    assert call["response_metadata"]["model_ref"] is None


def test_public_names_are_curated():
    import gym_contract

    assert "AgentObservationBundle" in gym_contract.__all__
    assert all(not name.startswith("_") or name == "__version__" for name in gym_contract.__all__)
    assert all(hasattr(gym_contract, name) for name in gym_contract.__all__)


def test_models_accept_nested_model_instances_as_well_as_plain_data():
    from gym_contract import ModelServerRef

    ref = ModelCallRef(model_ref=ModelServerRef(type="responses_api_models", name="policy"), response_id="resp_1")
    assert ref.model_dump(mode="json") == {"model_call_id": None, "model_ref": POLICY, "response_id": "resp_1"}
    with pytest.raises(ValidationError, match="model_call_id, or both model_ref and response_id"):
        ModelCallRef(model_ref=ModelServerRef(type="responses_api_models", name="policy"))


def test_an_object_holding_none_of_the_members_a_conditional_names_is_judged_as_jsonschema_judges_it():
    from gym_contract._model_base import ContractModel, _described, _failure

    shortcut = [model for model in _subclasses(ContractModel) if model.__conditional_members__ is not None]
    assert {model.__name__ for model in shortcut} >= {"FunctionCall", "InputVideo", "ModelCallRef"}
    for model in shortcut:
        assert model.__conditional_checker__ is not None
        # Members the keywords never look at, of every JSON type: the verdict, and its words, are the empty object's.
        data = {"a_member": "text", "another": [1, {"nested": None}], "more": {"k": 1.5}}
        error = _failure(model.__conditional_checker__, data)
        said = None if error is None else _described(error) or error.message
        assert model.__refusal_without_members__ == said, model.__name__
        if said is not None:
            with pytest.raises(ValidationError, match=re.escape(said)):
                model.model_validate(data)


def _subclasses(model: type) -> list[type]:
    found = []
    for subclass in model.__subclasses__():
        found += [subclass, *_subclasses(subclass)]
    return found
