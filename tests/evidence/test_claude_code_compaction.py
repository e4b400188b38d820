"""Claude Code's hidden compaction calls (PRODUCERS 5.4): associated only on a unique, exact summary match."""

from __future__ import annotations

import json
from typing import Any

from gym_contract.cli import main
from gym_contract.evidence._claude_code_compaction import SUMMARY_PROMPT_MARKERS, persisted_summary
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


BEFORE = {"model_ref": POLICY, "response_id": "msg_before"}
AFTER = {"model_ref": POLICY, "response_id": "msg_after"}


def compaction_bundle(invocation_id: str, invocation_refs: list[dict], before: dict = BEFORE) -> AgentObservationBundle:
    """Invocation `invocation_id` and a completed compaction of invocation S whose summary matches "hidden"."""
    compaction = {
        "kind": "context_compaction",
        "invocation_id": "S",
        "outcome": "completed",
        "summary": persisted_summary(OUTPUT),
        "before_model_call": before,
        "after_model_call": AFTER,
    }
    return AgentObservationBundle.model_validate(
        {
            "source": "claude_code",
            "records": [
                {"kind": "agent_invocation", "invocation_id": invocation_id, "model_calls": invocation_refs},
                compaction,
            ],
            "gaps": [{"code": "compaction_model_call_reference_unavailable", "invocation_id": "S"}],
        }
    )


def gaps_of(bundle: AgentObservationBundle) -> list[tuple[str, str | None, str | None]]:
    return [(g.code, g.invocation_id, g.detail) for g in bundle.gaps]


def test_a_compaction_whose_invocation_is_not_in_the_bundle_stays_unresolved():
    result = join(compaction_bundle("T", [BEFORE, AFTER]), CALLS)
    assert result.records[1].model_calls == []
    gaps = gaps_of(result)
    assert ("compaction_model_call_reference_unavailable", "S", None) in gaps  # kept, as the reference keeps it
    assert ("model_call_ownership_unavailable", None, "capture:hidden:call_index=1") in gaps
    assert not any(detail and detail.startswith("model_calls:") for _, _, detail in gaps)


# A reference whose model_call_id names one captured call and whose response_id names another. The
# reference's association matches it by model_call_id alone and its join by every field, which finds
# nothing: its bundle would rest an association on a reference that it reports as unmatched, or refuse a
# call as owned that it then reports as owned by nobody. Pinned here: the association matches as the join.
CONTRADICTING = {"model_call_id": "before", "model_ref": POLICY, "response_id": "msg_other"}


def test_a_self_contradicting_boundary_orders_nothing_so_no_call_is_associated():
    calls = [plain_call(0, "before"), plain_call(1, "other"), summary_call(2, "hidden"), plain_call(3, "after")]
    result = join(compaction_bundle("S", [CONTRADICTING, AFTER], before=CONTRADICTING), calls)
    assert result.records[1].model_calls == []
    gaps = gaps_of(result)
    assert ("model_call_reference_unmatched", "S", "before_model_call:before") in gaps
    assert ("compaction_model_call_reference_unavailable", "S", None) in gaps


def test_a_self_contradicting_reference_does_not_hold_back_the_call_its_id_names():
    naming_hidden = {**CONTRADICTING, "model_call_id": "hidden", "response_id": "msg_before"}
    result = join(compaction_bundle("S", [BEFORE, naming_hidden, AFTER]), CALLS)
    assert [ref.model_call_id for ref in result.records[1].model_calls] == ["hidden"]
    # The contradicting reference matches nothing, and "hidden" is owned, through its compaction.
    assert gaps_of(result) == [("model_call_reference_unmatched", "S", "hidden")]


def test_the_join_command_leaves_a_compaction_without_its_invocation_unresolved(tmp_path, capsys):
    def line(call_id: str, **payloads: Any) -> str:
        exchange = {"model_call_id": call_id, "dialect": "messages", "model_ref": POLICY, "status_code": 200}
        return json.dumps({**exchange, "response": {"id": f"msg_{call_id}"}, **payloads}) + "\n"

    hidden = summary_call(1, "hidden")
    (tmp_path / "7-0.capture.jsonl").write_text(
        line("before") + line("hidden", request=hidden.request, response=hidden.response) + line("after")
    )
    observations = tmp_path / "observations.json"
    observations.write_text(compaction_bundle("T", [BEFORE, AFTER]).model_dump_json())
    assert main(["join", str(observations), "--capture", str(tmp_path), "--rollout-id", "7-0"]) == 0
    joined = json.loads(capsys.readouterr().out)
    assert joined["records"][1]["model_calls"] == []
    assert {"code": "compaction_model_call_reference_unavailable", "invocation_id": "S", "detail": None} in joined[
        "gaps"
    ]
