"""The semantic rules of each kind of record: bundles, trajectories, captures and raw exchanges."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from gym_contract._json_pointer import pointer
from gym_contract._values import count, indexed_objects, integer, nonempty, obj, preview, text
from gym_contract._vocabulary import CAPTURED_TOKEN_FIELDS, MODEL_CONTEXT_LIMIT, TRANSIENT_KINDS, all_token_counts
from gym_contract.diagnostics import Diagnostic
from gym_contract.validation._rules import (
    EARLIEST_PLAUSIBLE,
    Context,
    Path,
    gap_rules,
    interval_rules,
    invocation_rules,
    reference_rule,
    repeated,
    rollout_id_rule,
    timestamp_rule,
    token_rules,
    tool_rules,
)


def bundle_rules(bundle: dict[str, Any], ctx: Context) -> Iterator[Diagnostic]:
    """An `ng_agent_observations` bundle: the reference's two checks and ours (partial evidence is legal)."""
    invocations: list[tuple[Path, dict[str, Any]]] = []
    tools: list[tuple[Path, dict[str, Any]]] = []
    compactions: list[tuple[Path, dict[str, Any]]] = []
    by_kind = {"agent_invocation": invocations, "tool_call": tools, "context_compaction": compactions}
    for index, record in indexed_objects(bundle.get("records")):
        group = by_kind.get(text(record.get("kind")) or "")
        if group is not None:
            group.append((("records", index), record))
    yield from invocation_rules(invocations, ctx)
    known = _invocation_ids(invocations)
    yield from tool_rules(tools, ctx)
    for path, tool in tools:
        yield from reference_rule(path, tool.get("invocation_id"), known, "tool call", ctx)
    for path, compaction in compactions:
        yield from reference_rule(path, compaction.get("invocation_id"), known, "compaction", ctx)
        yield from compaction_rules(path, compaction, ctx)
    yield from gap_rules(bundle.get("gaps"), ("gaps",))


def _invocation_ids(invocations: Sequence[tuple[Path, dict[str, Any]]]) -> set[str]:
    return {named for _, invocation in invocations if (named := text(invocation.get("invocation_id"))) is not None}


def compaction_rules(path: Path, compaction: dict[str, Any], ctx: Context) -> Iterator[Diagnostic]:
    yield from timestamp_rule((*path, "observed_at"), compaction.get("observed_at"), ctx)
    before, after = count(compaction.get("tokens_before")), count(compaction.get("tokens_after"))
    if before is not None and after is not None and after > before:
        yield Diagnostic.of(
            "compaction_tokens_grew",
            f"tokens_after {preview(after)} > tokens_before {preview(before)} (legal: producers count differently)",
            pointer(*path, "tokens_after"),
        )


def trajectory_rules(trajectory: dict[str, Any], ctx: Context) -> Iterator[Diagnostic]:
    """An `ng_trajectory` record: identity, uniqueness, references, timing and token arithmetic."""
    yield from rollout_id_rule("/rollout_id", trajectory.get("rollout_id"))
    invocations = [(("invocations", i), r) for i, r in indexed_objects(trajectory.get("invocations"))]
    yield from invocation_rules(invocations, ctx)
    known = _invocation_ids(invocations)

    by_id: dict[str, int] = {}
    by_response: set[tuple[str | None, str | None, str]] = set()
    for index, call in indexed_objects(trajectory.get("model_calls")):
        path = ("model_calls", index)
        call_id = call.get("model_call_id")
        if type(call_id) is not str:
            call_id = nonempty(call_id)
        if call_id and (prior := repeated(by_id, call_id, index)) is not None:
            yield Diagnostic.of(
                "model_call_id_duplicate",
                f"model_call_id {call_id!r} is already used by model_calls[{prior}]",
                pointer(*path, "model_call_id"),
            )
        metadata = call.get("response_metadata")
        if type(metadata) is dict:
            response_id, model_ref = nonempty(metadata.get("response_id")), metadata.get("model_ref")
            if response_id is not None and type(model_ref) is dict:
                by_response.add((text(model_ref.get("type")), text(model_ref.get("name")), response_id))
        yield from interval_rules(path, call, ctx)
        stats = call.get("token_stats")
        if type(stats) is dict:
            yield from token_rules(
                (*path, "token_stats"),
                stats.get("prompt_tokens"),
                stats.get("completion_tokens"),
                stats.get("total_tokens"),
                stats.get("cached_tokens"),
            )

    def resolves(ref: dict[str, Any]) -> bool:
        call_id, model_ref = nonempty(ref.get("model_call_id")), obj(ref.get("model_ref"))
        if call_id is not None:
            return call_id in by_id
        response_id = nonempty(ref.get("response_id"))
        if model_ref is None or response_id is None:
            return False
        return (text(model_ref.get("type")), text(model_ref.get("name")), response_id) in by_response

    def dangling(base: Path, refs: Any) -> Iterator[Diagnostic]:
        for index, ref in indexed_objects(refs):
            call_id = ref.get("model_call_id")
            if type(call_id) is str and call_id in by_id:
                continue  # the common case of `resolves`, told here: it runs for every reference
            if not resolves(ref):
                shown = nonempty(ref.get("model_call_id")) or text(ref.get("response_id"))
                yield Diagnostic.of(
                    "model_call_reference_dangling",
                    f"model call {preview(shown)} is not among this trajectory's model_calls",
                    pointer(*base, "model_calls", index),
                )

    for path, invocation in invocations:
        yield from dangling(path, invocation.get("model_calls"))

    turns_seen: dict[tuple[str, int], int] = {}
    task_id, rollout_id = text(trajectory.get("task_id")), text(trajectory.get("rollout_id"))
    for index, turn in indexed_objects(trajectory.get("turns")):
        path = ("turns", index)
        if turn.get("task_id") != task_id or turn.get("rollout_id") != rollout_id:
            for field, expected in (("task_id", task_id), ("rollout_id", rollout_id)):
                given = text(turn.get(field))
                if given is not None and expected is not None and given != expected:
                    yield Diagnostic.of(
                        "turn_identity_mismatch",
                        f"turn {field} {preview(given)} differs from the trajectory's {preview(expected)}",
                        pointer(*path, field),
                    )
        invocation_id, turn_no = text(turn.get("invocation_id")), integer(turn.get("turn_no"))
        key = (invocation_id, turn_no) if invocation_id is not None and turn_no is not None else None
        if key is not None and (prior := repeated(turns_seen, key, index)) is not None:
            yield Diagnostic.of(
                "turn_number_duplicate",
                f"turn {preview(key[1])} of invocation {preview(key[0])} already appears at turns[{prior}]",
                pointer(*path, "turn_no"),
            )
        if invocation_id not in known:
            yield from reference_rule(path, invocation_id, known, "turn", ctx)
        stamp = turn.get("timestamp")
        if not (type(stamp) is float and EARLIEST_PLAUSIBLE <= stamp <= ctx.latest_plausible):
            yield from timestamp_rule((*path, "timestamp"), stamp, ctx)
        yield from dangling(path, turn.get("model_calls"))

    tools = [(("tool_calls", i), r) for i, r in indexed_objects(trajectory.get("tool_calls"))]
    yield from tool_rules(tools, ctx)
    for path, tool in tools:
        owner = tool.get("invocation_id")
        if not (type(owner) is str and owner in known):
            yield from reference_rule(path, owner, known, "tool call", ctx)
    yield from gap_rules(trajectory.get("gaps"), ("gaps",))


def capture_rules(capture: dict[str, Any], ctx: Context) -> Iterator[Diagnostic]:
    """An `ng_model_call_capture` attachment: its id, its calls, and sums that hide unknown values."""
    yield from rollout_id_rule("/rollout_id", capture.get("rollout_id"))
    calls = indexed_objects(capture.get("calls"))
    for index, call in calls:
        yield from model_call_record_rules(("calls", index), call, ctx)
    metrics = obj(capture.get("metrics"))
    if metrics is not None:
        for field in CAPTURED_TOKEN_FIELDS:
            if metrics.get(field) is None:
                continue
            values: list[Any] = [call.get(field) for _, call in calls]
            if all_token_counts(values):
                continue
            known = sum(1 for value in values if count(value) is not None)
            if 0 < known < len(calls):
                yield Diagnostic.of(
                    "metrics_partial_sum",
                    f"{field} {preview(metrics.get(field))} sums {known} of {len(calls)} calls; the rest are unknown",
                    f"/metrics/{field}",
                )
    yield from gap_rules(capture.get("gaps"), ("gaps",))


def model_call_record_rules(path: Path, call: dict[str, Any], ctx: Context) -> list[Diagnostic]:
    """One captured call: plausible timestamps and token arithmetic (a list: it runs for every call)."""
    found: list[Diagnostic] = []
    for field in ("started_at", "completed_at"):
        stamp = call.get(field)
        if not (type(stamp) is float and EARLIEST_PLAUSIBLE <= stamp <= ctx.latest_plausible):
            found.extend(timestamp_rule((*path, field), stamp, ctx))
    tokens = call.get("tokens_in"), call.get("tokens_out"), call.get("tokens_total"), call.get("cached_tokens")
    found.extend(token_rules(path, *tokens))
    return found


def exchange_rules(exchange: dict[str, Any], ctx: Context) -> Iterator[Diagnostic]:
    """One raw capture line: its timestamps."""
    yield from timestamp_rule(("started_at",), exchange.get("started_at"), ctx)
    yield from timestamp_rule(("completed_at",), exchange.get("completed_at"), ctx)


def outcome_rules(outcome: dict[str, Any], ctx: Context) -> Iterator[Diagnostic]:
    """An `ng_agent_outcome`: its status agrees with its failure kind."""
    kind, status = text(outcome.get("failure_kind")), text(outcome.get("response_status"))
    if kind in TRANSIENT_KINDS and status == "completed":
        yield Diagnostic.of(
            "outcome_status_inconsistent",
            f"failure_kind {kind!r} is a transient failure, yet response_status is 'completed'",
            "/response_status",
        )
    if kind == MODEL_CONTEXT_LIMIT and outcome.get("partial_work_retained") is not True:
        yield Diagnostic.of(
            "outcome_partial_work_missing",
            "model_context_limit is an incomplete run whose partial work is kept; partial_work_retained is not true",
            "/partial_work_retained",
        )
