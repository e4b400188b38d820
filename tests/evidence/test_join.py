"""The join of observations to captured calls (CONTRACT 1.14), step by step, and its laws."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from gym_contract.join import join
from gym_contract.models import AgentObservationBundle, ModelCallRecord, ModelCallRef
from gym_contract.validation import iter_diagnostics

POLICY = {"type": "responses_api_models", "name": "policy"}
JUDGE = {"type": "responses_api_models", "name": "judge"}


def call(index: int, call_id: str | None, response_id: str | None = None, server=POLICY, **fields) -> ModelCallRecord:
    return ModelCallRecord.model_validate(
        {"call_index": index, "model_call_id": call_id, "response_id": response_id, "model_ref": server, **fields}
    )


def bundle(*records, gaps=(), source="pi") -> AgentObservationBundle:
    return AgentObservationBundle.model_validate({"source": source, "records": list(records), "gaps": list(gaps)})


def invocation(invocation_id: str, *refs: dict) -> dict:
    return {"kind": "agent_invocation", "invocation_id": invocation_id, "model_calls": list(refs)}


def by_response(response_id: str, server=POLICY) -> dict:
    return {"model_ref": server, "response_id": response_id}


def gaps_of(result: AgentObservationBundle) -> list[tuple[str, str | None, str | None]]:
    return [(g.code, g.invocation_id, g.detail) for g in result.gaps]


def refs_of(result: AgentObservationBundle, invocation_id: str) -> list[dict]:
    record = next(r for r in result.records if getattr(r, "invocation_id", None) == invocation_id)
    return [ref.model_dump(mode="json") for ref in record.model_calls]


CALLS = [call(0, "c0", "resp_a"), call(1, "c1", "resp_b"), call(2, "c2", "resp_c", server=JUDGE)]


def test_refs_by_response_id_become_canonical_and_unowned_calls_are_reported():
    result = join(bundle(invocation("root", by_response("resp_a"), by_response("resp_b"))), CALLS)
    assert refs_of(result, "root") == [
        {"model_call_id": "c0", "model_ref": POLICY, "response_id": "resp_a"},
        {"model_call_id": "c1", "model_ref": POLICY, "response_id": "resp_b"},
    ]
    assert gaps_of(result) == [("model_call_ownership_unavailable", None, "capture:c2:call_index=2")]


def test_a_ref_by_model_call_id_is_filtered_by_its_server_and_response_id():
    result = join(bundle(invocation("root", {"model_call_id": "c0", "model_ref": JUDGE})), CALLS)
    assert refs_of(result, "root") == [{"model_call_id": "c0", "model_ref": JUDGE, "response_id": None}]
    assert ("model_call_reference_unmatched", "root", "c0") in gaps_of(result)
    mismatch = join(bundle(invocation("root", {"model_call_id": "c0", "response_id": "resp_z"})), CALLS)
    assert ("model_call_reference_unmatched", "root", "c0") in gaps_of(mismatch)


def test_unmatched_and_ambiguous_refs_stay_as_written():
    twins = [call(0, "x", "resp_same"), call(1, "y", "resp_same")]
    result = join(bundle(invocation("root", by_response("resp_same"), by_response("resp_none"))), twins)
    assert refs_of(result, "root") == [
        {"model_call_id": None, "model_ref": POLICY, "response_id": "resp_same"},
        {"model_call_id": None, "model_ref": POLICY, "response_id": "resp_none"},
    ]
    assert gaps_of(result) == [
        ("model_call_reference_ambiguous", "root", "resp_same"),
        ("model_call_reference_unmatched", "root", "resp_none"),
        ("model_call_ownership_unavailable", None, "capture:x:call_index=0"),
        ("model_call_ownership_unavailable", None, "capture:y:call_index=1"),
    ]


def test_the_first_claimant_owns_and_later_claims_conflict():
    result = join(
        bundle(
            invocation("a", {"model_call_id": "c0"}, {"model_call_id": "c0"}), invocation("b", by_response("resp_a"))
        ),
        CALLS[:1],
    )
    assert refs_of(result, "a")[0]["response_id"] == "resp_a"
    assert refs_of(result, "a")[1] == {"model_call_id": "c0", "model_ref": None, "response_id": None}
    assert refs_of(result, "b") == [{"model_call_id": None, "model_ref": POLICY, "response_id": "resp_a"}]
    assert gaps_of(result) == [
        ("model_call_reference_conflict", "a", "c0"),
        ("model_call_reference_conflict", "b", "c0"),
    ]


def compaction(invocation_id: str, **fields) -> dict:
    return {"kind": "context_compaction", "invocation_id": invocation_id, **fields}


def test_compaction_calls_must_belong_to_the_compactions_invocation():
    records = [
        invocation("root", {"model_call_id": "c0"}, {"model_call_id": "c1"}),
        invocation("child", {"model_call_id": "c2"}),
        compaction("root", model_calls=[{"model_call_id": "c1"}]),  # owned by root: accepted
        compaction("child", model_calls=[{"model_call_id": "c0"}]),  # owned by root: conflict
        compaction("root", model_calls=[{"model_call_id": "c9"}]),  # nothing matches
    ]
    calls = [*CALLS, call(3, "c3", "resp_d")]
    result = join(bundle(*records), calls)
    compactions = [r for r in result.records if r.kind == "context_compaction"]
    assert compactions[0].model_calls[0].response_id == "resp_b"
    assert compactions[1].model_calls[0].response_id is None
    assert gaps_of(result) == [
        ("model_call_reference_conflict", "child", "model_calls:c0"),
        ("model_call_reference_unmatched", "root", "model_calls:c9"),
        ("model_call_ownership_unavailable", None, "capture:c3:call_index=3"),
    ]


def test_an_unowned_compaction_call_is_reported_not_taken():
    result = join(bundle(invocation("root"), compaction("root", model_calls=[{"model_call_id": "c0"}])), CALLS[:1])
    assert ("model_call_ownership_unavailable", "root", "model_calls:c0") in gaps_of(result)


def test_compaction_boundaries_may_be_unowned_but_not_owned_by_another_invocation():
    records = [
        invocation("root", {"model_call_id": "c0"}),
        invocation("child", {"model_call_id": "c1"}),
        compaction("root", before_model_call=by_response("resp_a"), after_model_call={"model_call_id": "c2"}),
        compaction("root", before_model_call={"model_call_id": "c1"}, after_model_call=by_response("resp_zz")),
    ]
    result = join(bundle(*records), CALLS)
    first, second = [r for r in result.records if r.kind == "context_compaction"]
    assert first.before_model_call.model_call_id == "c0"  # owned by root: canonical
    assert first.after_model_call.response_id == "resp_c"  # owned by nobody: canonical too
    assert second.before_model_call.response_id is None  # owned by child: left as written
    assert gaps_of(result) == [
        ("model_call_reference_conflict", "root", "before_model_call:c1"),
        ("model_call_reference_unmatched", "root", "after_model_call:resp_zz"),
        ("model_call_ownership_unavailable", None, "capture:c2:call_index=2"),
    ]


def test_earlier_join_gaps_are_dropped_and_producer_gaps_kept():
    earlier = [
        {"code": "model_call_reference_unmatched", "invocation_id": "root", "detail": "old"},
        {"code": "model_call_ownership_unavailable", "detail": "capture:gone:call_index=9"},
        {"code": "model_call_ownership_unavailable", "invocation_id": "root"},  # the producer's own
        {"code": "no_sandbox_runtime"},
        {"code": "no_sandbox_runtime"},
    ]
    result = join(bundle(invocation("root", {"model_call_id": "c0"}), gaps=earlier), CALLS[:1])
    assert gaps_of(result) == [
        ("model_call_ownership_unavailable", "root", None),
        ("no_sandbox_runtime", None, None),
    ]


def test_a_call_without_ids_is_reported_as_unknown():
    result = join(bundle(), [call(4, None, None)])
    assert gaps_of(result) == [("model_call_ownership_unavailable", None, "capture:unknown:call_index=4")]


def test_other_records_are_shared_and_the_input_is_not_changed():
    source = bundle(invocation("root", by_response("resp_a")), {"kind": "sandbox", "role": "agent"})
    before = source.model_dump(mode="json")
    result = join(source, CALLS)
    assert source.model_dump(mode="json") == before
    assert result.records[1] is source.records[1]


def test_a_joined_bundle_validates_clean():
    result = join(bundle(invocation("root", by_response("resp_a"))), CALLS)
    assert [d.code for d in iter_diagnostics(result.model_dump(mode="json"), "bundle")] == []


# ----------------------------------------------------------------------------------------------- laws

CALL_IDS = ["k0", "k1", "k2", "k3"]
RESPONSE_IDS = ["r0", "r1", "r2"]
SERVERS = [POLICY, JUDGE]


@st.composite
def evidence(draw):
    """Bundles and captures that share, repeat and miss ids on purpose."""
    calls = [
        call(
            index,
            draw(st.sampled_from([*CALL_IDS, None])),
            draw(st.sampled_from([*RESPONSE_IDS, None])),
            server=draw(st.sampled_from(SERVERS)),
            started_at=draw(st.floats(1.7e9, 1.8e9)),
        )
        for index in range(draw(st.integers(0, 6)))
    ]
    ref = st.one_of(
        st.builds(lambda i: {"model_call_id": i}, st.sampled_from(CALL_IDS)),
        st.builds(by_response, st.sampled_from(RESPONSE_IDS), st.sampled_from(SERVERS)),
    )
    invocations = [invocation(f"inv{n}", *draw(st.lists(ref, max_size=4))) for n in range(draw(st.integers(0, 3)))]
    compactions = [
        compaction(
            draw(st.sampled_from(["inv0", "inv1"])),
            model_calls=draw(st.lists(ref, max_size=2)),
            before_model_call=draw(st.one_of(st.none(), ref)),
            after_model_call=draw(st.one_of(st.none(), ref)),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    return bundle(*invocations, *compactions, gaps=[{"code": "no_sandbox_runtime"}]), calls


@given(evidence())
def test_join_is_idempotent(case):
    source, calls = case
    once = join(source, calls)
    assert join(once, calls) == once


@given(evidence(), st.randoms(use_true_random=False))
def test_the_order_of_captured_calls_does_not_matter(case, rng: random.Random):
    source, calls = case
    shuffled = list(calls)
    rng.shuffle(shuffled)
    assert join(source, shuffled) == join(source, calls)


def canonical(captured: ModelCallRecord) -> ModelCallRef | None:
    """The ref the join writes for a call; None for a call no ref can name (no ids at all)."""
    if not (captured.model_call_id or captured.response_id):
        return None
    return ModelCallRef(
        model_call_id=captured.model_call_id, model_ref=captured.model_ref, response_id=captured.response_id
    )


@given(evidence())
def test_every_call_is_owned_once_or_reported_once(case):
    source, calls = case
    result = join(source, calls)
    reported = [
        g.detail for g in result.gaps if g.code == "model_call_ownership_unavailable" and g.invocation_id is None
    ]
    held = [ref for r in result.records if r.kind == "agent_invocation" for ref in r.model_calls]
    triples = [canonical(c) for c in calls]
    for captured in calls:
        shown = captured.model_call_id or captured.response_id or "unknown"
        mentions = reported.count(f"capture:{shown}:call_index={captured.call_index}")
        assert mentions <= 1
        # With a model_call_id, a canonical ref cannot be confused with a ref as the producer wrote it.
        if captured.model_call_id and triples.count(canonical(captured)) == 1:
            owners = held.count(canonical(captured))
            assert (owners, mentions) in ((1, 0), (0, 1))


@given(evidence())
def test_a_ref_is_canonical_only_when_exactly_one_call_matches(case):
    source, calls = case
    result = join(source, calls)
    reference_gaps = {(g.invocation_id, g.detail) for g in result.gaps if g.code.startswith("model_call_reference_")}
    # A conflict names the call already owned (its captured id), not the id the ref was written with.
    conflicted = {g.invocation_id for g in result.gaps if g.code == "model_call_reference_conflict"}
    for before, after in zip(source.records, result.records, strict=True):
        if before.kind != "agent_invocation":
            continue
        for ref, joined in zip(before.model_calls, after.model_calls, strict=True):
            named = (before.invocation_id, ref.model_call_id or ref.response_id)
            if joined != ref:
                # Replaced: by the canonical ref of a call that carries the id the producer wrote.
                assert joined in [canonical(c) for c in calls]
                assert ref.model_call_id in (None, joined.model_call_id)
                assert ref.response_id in (None, joined.response_id)
            elif named not in reference_gaps and before.invocation_id not in conflicted:
                # Left alone without a gap only when it already was the canonical ref of its call.
                assert ref in [canonical(c) for c in calls]


@given(evidence(), st.floats(-1e6, 1e6))
def test_time_changes_no_ownership(case, shift):
    source, calls = case
    moved = [c.model_copy(update={"started_at": (c.started_at or 0) + shift}) for c in calls]
    assert join(source, moved).records == join(source, calls).records
