"""The exact join of observed model-call references to captured model calls (CONTRACT 1.14).

Calls are matched by `model_call_id`, or by the (`model_ref`, `response_id`) pair, and by
nothing else: never by time, text or position. A reference that matches no call, or several, or
a call someone else already owns, is left as the producer wrote it and named by a gap; every
captured call that no invocation owns is named by a gap too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gym_contract.evidence._claude_code_compaction import associate_compaction_calls
from gym_contract.models import (
    AgentInvocation,
    AgentObservationBundle,
    ContextCompactionObservation,
    ModelCallRecord,
    ModelCallRef,
    ObservationGap,
)

__all__ = ["JOIN_GAP_CODES", "dedupe_gaps", "join"]

UNMATCHED = "model_call_reference_unmatched"
AMBIGUOUS = "model_call_reference_ambiguous"
CONFLICT = "model_call_reference_conflict"
UNOWNED = "model_call_ownership_unavailable"
JOIN_GAP_CODES = frozenset({UNMATCHED, AMBIGUOUS, CONFLICT})
_CAPTURE_DETAIL = "capture:"
_COMPACTION_DETAIL = "model_calls:"


def dedupe_gaps(gaps: Iterable[ObservationGap]) -> list[ObservationGap]:
    """Gaps without repeats of the same (code, invocation_id, detail), first occurrence kept."""
    seen: set[tuple[str, str | None, str | None]] = set()
    kept = []
    for gap in gaps:
        key = (gap.code, gap.invocation_id, gap.detail)
        if key not in seen:
            seen.add(key)
            kept.append(gap)
    return kept


def _server_key(ref: Any) -> tuple[str, str] | None:
    # Only type and name identify a model server; extra keys a producer adds do not.
    return None if ref is None else (ref.type, ref.name)


Server = tuple[Any, Any] | None
"""A model server as the join tells servers apart: its (type, name), or None when not known."""


class CallIndex:
    """Model calls by `model_call_id` and by (server, `response_id`): the calls a reference names.

    Each call is given as its (`model_call_id`, server, `response_id`). A reference with an id names
    the calls with that id (and its server and response id, when it gives them); one without names
    the calls of its server with its response id. The join takes a reference only when it names
    exactly one call.
    """

    def __init__(self, keys: Sequence[tuple[str | None, Server, str | None]]) -> None:
        self.keys = keys
        # Every combination of ids a reference may give is looked up at once: calls that share an id
        # (a capture line written twice) are not filtered again for each reference that names them.
        self.by_id: dict[str, list[int]] = {}
        self.by_id_and_server: dict[tuple[str, Server], list[int]] = {}
        self.by_id_and_response: dict[tuple[str, str | None], list[int]] = {}
        self.by_all: dict[tuple[str, Server, str | None], list[int]] = {}
        self.by_response: dict[tuple[Server, str], list[int]] = {}
        for index, (call_id, server, response_id) in enumerate(keys):
            if call_id:
                self.by_id.setdefault(call_id, []).append(index)
                self.by_id_and_server.setdefault((call_id, server), []).append(index)
                self.by_id_and_response.setdefault((call_id, response_id), []).append(index)
                self.by_all.setdefault((call_id, server, response_id), []).append(index)
            if server is not None and response_id:
                self.by_response.setdefault((server, response_id), []).append(index)

    def matches(self, call_id: str | None, server: Server, response_id: str | None) -> list[int]:
        """The indexes of the calls a reference with these ids names."""
        if call_id:
            if server is not None and response_id:
                return self.by_all.get((call_id, server, response_id), [])
            if server is not None:
                return self.by_id_and_server.get((call_id, server), [])
            if response_id:
                return self.by_id_and_response.get((call_id, response_id), [])
            return self.by_id.get(call_id, [])
        if server is None or not response_id:
            return []
        return self.by_response.get((server, response_id), [])


class _CaptureIndex(CallIndex):
    """The captured calls of a join, and who owns each."""

    def __init__(self, calls: Sequence[ModelCallRecord]) -> None:
        super().__init__([(call.model_call_id, _server_key(call.model_ref), call.response_id) for call in calls])
        self.calls = calls
        self.owner: dict[int, str] = {}

    def named_by(self, ref: ModelCallRef) -> list[int]:
        return self.matches(ref.model_call_id, _server_key(ref.model_ref), ref.response_id)

    def canonical(self, index: int) -> ModelCallRef:
        call = self.calls[index]
        # A matched call carries the id it was matched by, so the ref is valid without checking it again.
        return ModelCallRef.model_construct(
            model_call_id=call.model_call_id, model_ref=call.model_ref, response_id=call.response_id
        )

    def captured_id(self, index: int) -> str | None:
        call = self.calls[index]
        return call.model_call_id or call.response_id


def _ref_id(ref: ModelCallRef) -> str | None:
    return ref.model_call_id or ref.response_id


def _is_earlier_join_gap(gap: ObservationGap) -> bool:
    """Gaps a previous join wrote, dropped so that joining again gives the same bundle.

    Beyond the reference, which drops only the `capture:` ownership gaps, the `model_calls:`
    ownership gaps of compactions are dropped too: kept, they would move ahead of the gaps the
    new join writes, and a second join would not give the same bundle.
    """
    if gap.code in JOIN_GAP_CODES:
        return True
    detail = gap.detail or ""
    if gap.code != UNOWNED:
        return False
    return (gap.invocation_id is None and detail.startswith(_CAPTURE_DETAIL)) or detail.startswith(_COMPACTION_DETAIL)


def join(bundle: AgentObservationBundle, calls: Iterable[ModelCallRecord]) -> AgentObservationBundle:
    """A new bundle whose references to captured calls are canonical where exactly one call matches.

    Captured calls are taken in `call_index` order whatever order they come in, so the result
    depends only on the evidence. For `source == "claude_code"`, Claude Code's hidden compaction
    calls are first associated with their compactions (PRODUCERS 5.4).
    """
    ordered = sorted(calls, key=lambda c: (c.call_index, c.model_call_id or "", c.response_id or ""))
    if bundle.source == "claude_code":
        try:
            bundle = associate_compaction_calls(bundle, ordered)
        except Exception as error:  # a failed association must not stop the exact join
            failed = ObservationGap(code="compaction_model_call_join_failed", detail=type(error).__name__)
            bundle = bundle.model_copy(update={"gaps": [*bundle.gaps, failed]})
    index = _CaptureIndex(ordered)
    join_gaps: list[ObservationGap] = []

    def gap(code: str, invocation_id: str | None, detail: str | None) -> None:
        join_gaps.append(ObservationGap(code=code, invocation_id=invocation_id, detail=detail))

    records: list[Any] = list(bundle.records)
    for position, record in enumerate(records):
        if isinstance(record, AgentInvocation):
            refs = []
            for ref in record.model_calls:
                candidates = index.named_by(ref)
                if len(candidates) != 1:
                    gap(AMBIGUOUS if candidates else UNMATCHED, record.invocation_id, _ref_id(ref))
                    refs.append(ref)
                elif candidates[0] in index.owner:
                    gap(CONFLICT, record.invocation_id, index.captured_id(candidates[0]))
                    refs.append(ref)
                else:
                    index.owner[candidates[0]] = record.invocation_id
                    refs.append(index.canonical(candidates[0]))
            records[position] = record.model_copy(update={"model_calls": refs})

    for position, record in enumerate(records):
        if isinstance(record, ContextCompactionObservation):
            records[position] = _join_compaction(record, index, gap)

    gaps = [g for g in bundle.gaps if not _is_earlier_join_gap(g)] + join_gaps
    for call_position, call in enumerate(ordered):
        if call_position not in index.owner:
            shown = call.model_call_id or call.response_id or "unknown"
            gaps.append(ObservationGap(code=UNOWNED, detail=f"{_CAPTURE_DETAIL}{shown}:call_index={call.call_index}"))
    return bundle.model_copy(update={"records": records, "gaps": dedupe_gaps(gaps)})


def _join_compaction(compaction: ContextCompactionObservation, index: _CaptureIndex, gap: Any) -> Any:
    """Compaction calls must be owned by the compaction's own invocation; boundaries may be unowned."""
    owner_id = compaction.invocation_id
    refs = []
    for ref in compaction.model_calls:
        candidates = index.named_by(ref)
        if len(candidates) != 1:
            gap(AMBIGUOUS if candidates else UNMATCHED, owner_id, f"model_calls:{_ref_id(ref)}")
            refs.append(ref)
            continue
        owner = index.owner.get(candidates[0])
        if owner != owner_id:
            code = CONFLICT if owner is not None else UNOWNED
            gap(code, owner_id, f"model_calls:{index.captured_id(candidates[0])}")
            refs.append(ref)
        else:
            refs.append(index.canonical(candidates[0]))
    update: dict[str, Any] = {"model_calls": refs}
    for field in ("before_model_call", "after_model_call"):
        ref = getattr(compaction, field)
        if ref is None:
            continue
        candidates = index.named_by(ref)
        if len(candidates) != 1:
            gap(AMBIGUOUS if candidates else UNMATCHED, owner_id, f"{field}:{_ref_id(ref)}")
            continue
        owner = index.owner.get(candidates[0])
        if owner is not None and owner != owner_id:
            gap(CONFLICT, owner_id, f"{field}:{index.captured_id(candidates[0])}")
        else:
            update[field] = index.canonical(candidates[0])
    return compaction.model_copy(update=update)
