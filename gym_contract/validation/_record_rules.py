"""The semantic rules of each kind of record: bundles, trajectories, captures and raw exchanges."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gym_contract._json_pointer import pointer
from gym_contract._objects import NO_MEMBERS, OBJECT_CLASSES, given, objects
from gym_contract._values import count, integer, nonempty, preview, text
from gym_contract._vocabulary import CAPTURED_TOKEN_FIELDS, MODEL_CONTEXT_LIMIT, TRANSIENT_KINDS, all_token_counts
from gym_contract.diagnostics import Diagnostic
from gym_contract.validation._rules import (
    EARLIEST_PLAUSIBLE,
    Context,
    Path,
    gap_rules,
    interval_rules,
    invocation_rules,
    located,
    reference_rule,
    rollout_id_rule,
    timestamp_rule,
    token_rules,
    tool_rules,
)


def bundle_rules(bundle: Any, ctx: Context) -> list[Diagnostic]:
    """An `ng_agent_observations` bundle: the reference's two checks and ours (partial evidence is legal)."""
    invocations: list[tuple[Path, Any]] = []
    tools: list[tuple[Path, Any]] = []
    compactions: list[tuple[Path, Any]] = []
    by_kind = {"agent_invocation": invocations, "tool_call": tools, "context_compaction": compactions}
    records = bundle.records
    for index, record in enumerate(records if type(records) is list else ()):
        kind = record.kind if type(record) in OBJECT_CLASSES else None
        group = by_kind.get(kind if type(kind) is str else text(kind) or "")
        if group is not None:
            group.append((("records", index), record))
    found = invocation_rules(invocations, ctx)
    known = _invocation_ids(invocations)
    found += tool_rules(tools, known, ctx)
    for path, compaction in compactions:
        found += reference_rule(path, compaction.invocation_id, known, "compaction", ctx)
        found += compaction_rules(path, compaction, ctx)
    found += gap_rules(bundle.gaps, ("gaps",))
    return found


def _invocation_ids(invocations: Sequence[tuple[Path, Any]]) -> set[str]:
    return {named for _, invocation in invocations if (named := text(invocation.invocation_id)) is not None}


def compaction_rules(path: Path, compaction: Any, ctx: Context) -> list[Diagnostic]:
    found = list(timestamp_rule((*path, "observed_at"), compaction.observed_at, ctx))
    before, after = count(compaction.tokens_before), count(compaction.tokens_after)
    if before is not None and after is not None and after > before:
        found.append(
            Diagnostic.of(
                "compaction_tokens_grew",
                f"tokens_after {preview(after)} > tokens_before {preview(before)} (legal: producers count differently)",
                pointer(*path, "tokens_after"),
            )
        )
    return found


def trajectory_rules(trajectory: Any, ctx: Context) -> list[Diagnostic]:
    """An `ng_trajectory` record: identity, uniqueness, references, timing and token arithmetic."""
    found = list(rollout_id_rule("/rollout_id", trajectory.rollout_id))
    invocations = located(trajectory.invocations, "invocations")
    found += invocation_rules(invocations, ctx)
    known = _invocation_ids(invocations)
    calls = trajectory.model_calls
    by_id = _model_call_rules(calls, ctx, found)
    responses: set[tuple[str | None, str | None, str]] | None = None  # read when a reference has no model_call_id

    def resolves(ref: Any) -> bool:
        nonlocal responses
        call_id, model_ref = nonempty(ref.model_call_id), ref.model_ref
        if call_id is not None:
            return call_id in by_id
        response_id = nonempty(ref.response_id)
        if type(model_ref) not in OBJECT_CLASSES or response_id is None:
            return False
        if responses is None:
            responses = _response_keys(calls)
        return (text(model_ref.type), text(model_ref.name), response_id) in responses

    def dangling(base: Path, refs: Any) -> None:
        """The references of ``base`` that resolve to no model call, into ``found``."""
        if type(refs) is not list:
            return
        for index, ref in enumerate(refs):
            if type(ref) not in OBJECT_CLASSES:
                continue
            call_id = ref.model_call_id
            if type(call_id) is str and call_id in by_id:
                continue  # the common case of `resolves`, told here: it runs for every reference
            if not resolves(ref):
                shown = nonempty(ref.model_call_id) or text(ref.response_id)
                found.append(
                    Diagnostic.of(
                        "model_call_reference_dangling",
                        f"model call {preview(shown)} is not among this trajectory's model_calls",
                        pointer(*base, "model_calls", index),
                    )
                )

    for path, invocation in invocations:
        dangling(path, invocation.model_calls)

    turns_seen: dict[tuple[str, int], int] = {}
    task_id, rollout_id = text(trajectory.task_id), text(trajectory.rollout_id)
    latest = ctx.latest_plausible
    turns = trajectory.turns
    for index, turn in enumerate(turns if type(turns) is list else ()):
        if type(turn) not in OBJECT_CLASSES:
            continue
        path = ("turns", index)
        if turn.task_id != task_id or turn.rollout_id != rollout_id:
            for field, expected in (("task_id", task_id), ("rollout_id", rollout_id)):
                stated = text(getattr(turn, field))
                if stated is not None and expected is not None and stated != expected:
                    found.append(
                        Diagnostic.of(
                            "turn_identity_mismatch",
                            f"turn {field} {preview(stated)} differs from the trajectory's {preview(expected)}",
                            pointer(*path, field),
                        )
                    )
        # Ids and numbers are almost always a str and an int: those skip the typed readers.
        invocation_id, turn_no = turn.invocation_id, turn.turn_no
        if type(invocation_id) is not str:
            invocation_id = text(invocation_id)
        if type(turn_no) is not int:
            turn_no = integer(turn_no)
        if invocation_id is not None and turn_no is not None:
            key = (invocation_id, turn_no)
            if (prior := turns_seen.setdefault(key, index)) != index:
                found.append(
                    Diagnostic.of(
                        "turn_number_duplicate",
                        f"turn {preview(key[1])} of invocation {preview(key[0])} already appears at turns[{prior}]",
                        pointer(*path, "turn_no"),
                    )
                )
        if invocation_id not in known:
            found += reference_rule(path, invocation_id, known, "turn", ctx)
        stamp = turn.timestamp
        if not (type(stamp) is float and EARLIEST_PLAUSIBLE <= stamp <= latest):
            found += timestamp_rule((*path, "timestamp"), stamp, ctx)
        dangling(path, turn.model_calls)

    found += tool_rules(located(trajectory.tool_calls, "tool_calls"), known, ctx)
    found += gap_rules(trajectory.gaps, ("gaps",))
    return found


def _model_call_rules(calls: Any, ctx: Context, found: list[Diagnostic]) -> set[str]:
    """Each model call's unique id, interval and token arithmetic, into ``found``; the ids, for references."""
    by_id: dict[str, int] = {}
    for index, call in enumerate(calls if type(calls) is list else ()):
        if type(call) not in OBJECT_CLASSES:
            continue
        path = ("model_calls", index)
        call_id = call.model_call_id
        if type(call_id) is not str:
            call_id = nonempty(call_id)
        if call_id and (prior := by_id.setdefault(call_id, index)) != index:
            found.append(
                Diagnostic.of(
                    "model_call_id_duplicate",
                    f"model_call_id {call_id!r} is already used by model_calls[{prior}]",
                    pointer(*path, "model_call_id"),
                )
            )
        found += interval_rules(path, call.started_at, call.completed_at, call.duration_ms, ctx)
        stats = call.token_stats
        if type(stats) in OBJECT_CLASSES:
            found += token_rules(
                ("model_calls", index, "token_stats"),
                stats.prompt_tokens,
                stats.completion_tokens,
                stats.total_tokens,
                stats.cached_tokens,
            )
    return set(by_id)


def _response_keys(calls: Any) -> set[tuple[str | None, str | None, str]]:
    """(model_ref.type, model_ref.name, response_id) of the calls: what a reference without a call id resolves by."""
    keys: set[tuple[str | None, str | None, str]] = set()
    for call in objects(calls):
        metadata = call.response_metadata
        if type(metadata) in OBJECT_CLASSES:
            response_id, model_ref = nonempty(metadata.response_id), metadata.model_ref
            if response_id is not None and type(model_ref) in OBJECT_CLASSES:
                keys.add((text(model_ref.type), text(model_ref.name), response_id))
    return keys


def capture_rules(capture: Any, ctx: Context) -> list[Diagnostic]:
    """An `ng_model_call_capture` attachment: its id, its calls, and sums that hide unknown values."""
    found = list(rollout_id_rule("/rollout_id", capture.rollout_id))
    calls = located(capture.calls, "calls")
    for path, call in calls:
        found += model_call_record_rules(path, call, ctx)
    metrics = capture.metrics if type(capture.metrics) in OBJECT_CLASSES else NO_MEMBERS
    summed = [field for field in CAPTURED_TOKEN_FIELDS if given(getattr(metrics, field))]
    # The common case, told in one pass: every call counts every summed field, and no sum hides an unknown.
    if summed and not all_token_counts([getattr(call, field) for _, call in calls for field in summed]):
        for field in summed:
            values: list[Any] = [getattr(call, field) for _, call in calls]
            if all_token_counts(values):
                continue
            known = sum(1 for value in values if count(value) is not None)
            if 0 < known < len(calls):
                message = f"{field} {preview(getattr(metrics, field))} sums {known} of {len(calls)} calls"
                message += "; the rest are unknown"
                found.append(Diagnostic.of("metrics_partial_sum", message, f"/metrics/{field}"))
    found += gap_rules(capture.gaps, ("gaps",))
    return found


def model_call_record_rules(path: Path, call: Any, ctx: Context) -> Sequence[Diagnostic]:
    """One captured call: plausible timestamps and token arithmetic."""
    found = token_rules(path, call.tokens_in, call.tokens_out, call.tokens_total, call.cached_tokens)
    started, completed, latest = call.started_at, call.completed_at, ctx.latest_plausible
    if type(started) is float and type(completed) is float and EARLIEST_PLAUSIBLE <= started <= completed <= latest:
        return found  # the common case, told without a call of the timestamp rule
    return [
        *timestamp_rule((*path, "started_at"), started, ctx),
        *timestamp_rule((*path, "completed_at"), completed, ctx),
        *found,
    ]


def exchange_rules(exchange: Any, ctx: Context) -> list[Diagnostic]:
    """One raw capture line: its timestamps."""
    found = [*timestamp_rule(("started_at",), exchange.started_at, ctx)]
    found += timestamp_rule(("completed_at",), exchange.completed_at, ctx)
    return found


def outcome_rules(outcome: Any, ctx: Context) -> list[Diagnostic]:
    """An `ng_agent_outcome`: its status agrees with its failure kind."""
    found: list[Diagnostic] = []
    kind, status = text(outcome.failure_kind), text(outcome.response_status)
    if kind in TRANSIENT_KINDS and status == "completed":
        found.append(
            Diagnostic.of(
                "outcome_status_inconsistent",
                f"failure_kind {kind!r} is a transient failure, yet response_status is 'completed'",
                "/response_status",
            )
        )
    if kind == MODEL_CONTEXT_LIMIT and outcome.partial_work_retained is not True:
        message = "model_context_limit is an incomplete run whose partial work is kept"
        message += "; partial_work_retained is not true"
        found.append(Diagnostic.of("outcome_partial_work_missing", message, "/partial_work_retained"))
    return found
