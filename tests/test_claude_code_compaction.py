"""Claude Code's hidden compaction calls (PRODUCERS 5.4): associated only on a unique, exact summary match."""

from __future__ import annotations

from typing import Any

from gym_contract._claude_code_compaction import SUMMARY_PROMPT_MARKERS, persisted_summary
from gym_contract.join import join
from gym_contract.models import AgentObservationBundle, ModelCallRecord

POLICY = {"type": "responses_api_models", "name": "policy"}
OUTPUT = "<analysis>private notes</analysis>\n\n<summary>\nThe user asked for X.\n\n\n\nWe did Y.\n</summary>"
CONTINUE = (
    "\n\nContinue the conversation from where it left off without asking the user any further questions. "
    "Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with "
    '"I\'ll continue" or similar. Pick up the last task as if the break never happened.'
)


def summary_call(index: int, call_id: str, output: str = OUTPUT, **fields: Any) -> ModelCallRecord:
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": SUMMARY_PROMPT_MARKERS[1] + "…"}]}]}
    response = {"id": f"msg_{call_id}", "content": [{"type": "text", "text": output}]}
    values = {
        "call_index": index,
        "model_call_id": call_id,
        "model_ref": POLICY,
        "dialect": "messages",
        "status_code": 200,
        "request": request,
        "response": response,
        **fields,
    }
    return ModelCallRecord.model_validate(values)


def plain_call(index: int, call_id: str) -> ModelCallRecord:
    return ModelCallRecord.model_validate(
        {
            "call_index": index,
            "model_call_id": call_id,
            "response_id": f"msg_{call_id}",
            "model_ref": POLICY,
            "dialect": "messages",
            "status_code": 200,
        }
    )


def evidence(summary: str, *extra_compactions: dict) -> AgentObservationBundle:
    before, after = (
        {"model_ref": POLICY, "response_id": "msg_before"},
        {"model_ref": POLICY, "response_id": "msg_after"},
    )
    return AgentObservationBundle.model_validate(
        {
            "source": "claude_code",
            "records": [
                {"kind": "agent_invocation", "invocation_id": "S", "model_calls": [before, after]},
                {
                    "kind": "context_compaction",
                    "invocation_id": "S",
                    "outcome": "completed",
                    "summary": summary,
                    "before_model_call": before,
                    "after_model_call": after,
                },
                *extra_compactions,
            ],
            "gaps": [{"code": "compaction_model_call_reference_unavailable", "invocation_id": "S"}],
        }
    )


CALLS = [plain_call(0, "before"), summary_call(1, "hidden"), plain_call(2, "after")]


def test_the_persisted_summary_is_the_output_rewritten():
    assert persisted_summary(OUTPUT) == (
        "This session is being continued from a previous conversation that ran out of context. "
        "The summary below covers the earlier portion of the conversation.\n\n"
        "Summary:\nThe user asked for X.\n\nWe did Y."
    )


def test_a_unique_exact_match_is_owned_by_the_compaction_and_placed_between_its_boundaries():
    result = join(evidence(persisted_summary(OUTPUT) + CONTINUE), CALLS)
    invocation, compaction = result.records
    assert [ref.model_call_id for ref in invocation.model_calls] == ["before", "hidden", "after"]
    assert [ref.model_call_id for ref in compaction.model_calls] == ["hidden"]
    assert result.gaps == []  # the reference-unavailable gap is resolved, and every call is owned


def test_a_summary_that_differs_is_not_matched():
    result = join(evidence(persisted_summary(OUTPUT) + " and more"), CALLS)
    compaction = result.records[1]
    assert compaction.model_calls == []
    codes = [(g.code, g.invocation_id) for g in result.gaps]
    assert ("compaction_model_call_reference_unavailable", "S") in codes
    assert ("model_call_ownership_unavailable", None) in codes


def test_a_call_outside_the_boundaries_or_of_another_dialect_is_not_a_candidate():
    outside = [plain_call(0, "before"), plain_call(1, "after"), summary_call(2, "late")]
    assert join(evidence(persisted_summary(OUTPUT)), outside).records[1].model_calls == []
    other_dialect = [plain_call(0, "before"), summary_call(1, "hidden", dialect="responses"), plain_call(2, "after")]
    assert join(evidence(persisted_summary(OUTPUT)), other_dialect).records[1].model_calls == []
    failed = [plain_call(0, "before"), summary_call(1, "hidden", status_code=500), plain_call(2, "after")]
    assert join(evidence(persisted_summary(OUTPUT)), failed).records[1].model_calls == []


def test_two_candidates_are_ambiguous():
    twins = [plain_call(0, "before"), summary_call(1, "one"), summary_call(2, "two"), plain_call(3, "after")]
    result = join(evidence(persisted_summary(OUTPUT)), twins)
    assert result.records[1].model_calls == []
    assert ("compaction_model_call_match_ambiguous", "S", "candidate_count=2") in [
        (g.code, g.invocation_id, g.detail) for g in result.gaps
    ]


def test_other_sources_are_never_associated():
    bundle = evidence(persisted_summary(OUTPUT)).model_copy(update={"source": "opencode"})
    assert join(bundle, CALLS).records[1].model_calls == []
