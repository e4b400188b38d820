"""One rollout's evidence gathered for export: invocations, tool calls, model calls, other records and gaps.

A rollout record, an `ng_trajectory`, an `ng_agent_observations` bundle or one of their models is
read into the same `Evidence`, so that the ATIF and OpenTelemetry writers see one shape. Nothing is
interpreted here: records are kept as the JSON values they are, and model calls only get their
token counts and timing under one set of names, whichever attachment they came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gym_contract._deep_values import exact_repr
from gym_contract._values import count, finite, obj, objects, text
from gym_contract._vocabulary import (
    CAPTURE,
    CAPTURED_TOKEN_FIELDS,
    OBSERVATIONS,
    TOKEN_FIELDS,
    TRAJECTORY,
    detect_kind,
)
from gym_contract.evidence._join import CallIndex, Server
from gym_contract.evidence._rollout_ids import rollout_id_from_run_body

__all__ = ["Evidence", "ModelCall", "evidence_of"]


@dataclass
class ModelCall:
    """One model call, from the trajectory's `model_calls` or the capture's `calls`: ids, timing, tokens."""

    model_call_id: str | None
    response_id: str | None
    model_ref: dict[str, Any] | None
    model: str | None
    dialect: str | None
    started_at: float | None
    completed_at: float | None
    duration_ms: float | None
    tokens: dict[str, int | None]
    finish_reason: str | None
    response_status: str | None
    error_category: str | None
    response: Any

    def summary(self) -> dict[str, Any]:
        """The call's ids, timing and token counts, without its payloads (None stays None: unknown)."""
        return {
            "model_call_id": self.model_call_id,
            "response_id": self.response_id,
            "model_ref": self.model_ref,
            "model": self.model,
            "started_at": self.started_at,
            "completed_at": self.completed_at,
            "duration_ms": self.duration_ms,
            **self.tokens,
        }

    def output_ids(self) -> set[str]:
        """The ids of what the response produced: output items and tool calls, in every dialect."""
        found: set[str] = set()
        response = self.response if isinstance(self.response, dict) else {}
        containers = [response.get("output"), response.get("content")]  # Responses; Anthropic Messages
        for choice in response.get("choices") or []:  # Chat Completions
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                containers.append(message.get("tool_calls"))
        for container in containers:
            for item in container if isinstance(container, list) else []:
                if isinstance(item, dict):
                    found.update(value for key in ("id", "call_id") if isinstance(value := item.get(key), str))
        return found


@dataclass
class Evidence:
    """What one rollout (or one bundle or trajectory) says, gathered for the writers."""

    source: str | None = None
    agent_name: str | None = None
    rollout_id: str | None = None
    task_id: str | None = None
    invocations: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    """Records with no place of their own in the output: compactions, sandboxes, repeated records."""
    gaps: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)

    def owners(self) -> dict[int, str]:
        """Index of each model call in `calls` -> the invocation whose reference names it, first come first served.

        A reference owns a call only when it names exactly that one, by the join's rule (`CallIndex`):
        never a guess by time or position.
        """
        index = CallIndex([(call.model_call_id, _server(call.model_ref), call.response_id) for call in self.calls])
        owned: dict[int, str] = {}
        for invocation in self.invocations:
            for ref in objects(invocation.get("model_calls")):
                candidates = index.matches(
                    text(ref.get("model_call_id")), _server(obj(ref.get("model_ref"))), text(ref.get("response_id"))
                )
                if len(candidates) == 1 and candidates[0] not in owned:
                    owned[candidates[0]] = invocation["invocation_id"]
        return owned


def _server(model_ref: dict[str, Any] | None) -> Server:
    return None if model_ref is None else (text(model_ref.get("type")), text(model_ref.get("name")))


def _trajectory_call(call: dict[str, Any]) -> ModelCall:
    metadata = obj(call.get("response_metadata")) or {}
    stats = obj(call.get("token_stats")) or {}
    return ModelCall(
        model_call_id=text(call.get("model_call_id")),
        response_id=text(metadata.get("response_id")),
        model_ref=obj(metadata.get("model_ref")),
        model=text(metadata.get("model")),
        dialect=text(metadata.get("dialect")),
        started_at=finite(call.get("started_at")),
        completed_at=finite(call.get("completed_at")),
        duration_ms=finite(call.get("duration_ms")),
        tokens={name: count(stats.get(name)) for name in TOKEN_FIELDS},
        finish_reason=text(metadata.get("finish_reason")),
        response_status=text(metadata.get("response_status")),
        error_category=text(metadata.get("error_category")),
        response=call.get("response"),
    )


def _captured_call(call: dict[str, Any]) -> ModelCall:
    # A captured call names its token counts otherwise than a trajectory does.
    tokens = {name: count(call.get(key)) for key, name in CAPTURED_TOKEN_FIELDS.items()}
    return ModelCall(
        model_call_id=text(call.get("model_call_id")),
        response_id=text(call.get("response_id")),
        model_ref=obj(call.get("model_ref")),
        model=text(call.get("model")),
        dialect=text(call.get("dialect")),
        started_at=finite(call.get("started_at")),
        completed_at=finite(call.get("completed_at")),
        duration_ms=finite(call.get("latency_total_ms")),
        tokens=tokens,
        finish_reason=text(call.get("finish_reason")),
        response_status=text(call.get("response_status")),
        error_category=text(call.get("error_category")),
        response=call.get("response"),
    )


def _gap_key(gap: dict[str, Any]) -> tuple[str, str, str]:
    """A gap's identity (code, invocation, detail), hashable whatever the values are."""
    return exact_repr(gap.get("code")), exact_repr(gap.get("invocation_id")), exact_repr(gap.get("detail"))


def _add_gaps(evidence: Evidence, gaps: list[dict[str, Any]]) -> None:
    """Gaps of one more attachment: those another attachment already reported are not repeated."""
    known = {_gap_key(gap) for gap in evidence.gaps}
    evidence.gaps.extend(gap for gap in gaps if _gap_key(gap) not in known)


def _add_records(evidence: Evidence, records: list[dict[str, Any]]) -> None:
    """Invocations and tool calls of one more attachment.

    An id another attachment already reported is the same fact told twice (a bundle and the
    trajectory projected from it): the first report stands. An id repeated within this attachment is
    a second, different report, and is kept aside with the other records, never dropped.
    """
    earlier_invocations = {invocation["invocation_id"] for invocation in evidence.invocations}
    earlier_tools = {(exact_repr(tool.get("invocation_id")), tool.get("tool_call_id")) for tool in evidence.tool_calls}
    invocation_ids: set[str] = set()
    tool_keys: set[tuple[str, str]] = set()
    for record in records:
        kind = record.get("kind", "agent_invocation" if "conversation" in record else None)
        if kind == "agent_invocation" and isinstance(record.get("invocation_id"), str):
            if record["invocation_id"] in earlier_invocations:
                continue
            if record["invocation_id"] in invocation_ids:
                evidence.records.append(record)
                continue
            invocation_ids.add(record["invocation_id"])
            evidence.invocations.append(record)
        elif kind == "tool_call" and isinstance(record.get("tool_call_id"), str):
            key = (exact_repr(record.get("invocation_id")), record["tool_call_id"])
            if key in earlier_tools:
                continue
            if key in tool_keys:
                evidence.records.append(record)
                continue
            tool_keys.add(key)
            evidence.tool_calls.append(record)
        else:
            evidence.records.append(record)


def _from_trajectory(evidence: Evidence, trajectory: dict[str, Any]) -> None:
    evidence.rollout_id = evidence.rollout_id or text(trajectory.get("rollout_id"))
    evidence.task_id = evidence.task_id or text(trajectory.get("task_id"))
    _add_records(evidence, [{"kind": "agent_invocation", **item} for item in objects(trajectory.get("invocations"))])
    _add_records(evidence, [{**item, "kind": "tool_call"} for item in objects(trajectory.get("tool_calls"))])
    evidence.calls.extend(_trajectory_call(call) for call in objects(trajectory.get("model_calls")))
    evidence.turns.extend(objects(trajectory.get("turns")))
    _add_gaps(evidence, objects(trajectory.get("gaps")))


def _from_bundle(evidence: Evidence, bundle: dict[str, Any]) -> None:
    evidence.source = text(bundle.get("source"))
    _add_records(evidence, objects(bundle.get("records")))
    _add_gaps(evidence, objects(bundle.get("gaps")))


def _json(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


def evidence_of(value: Any) -> Evidence:
    """The evidence of a rollout record, an `ng_trajectory`, an `ng_agent_observations` bundle, or their models.

    Raises ValueError for a value that is none of these.
    """
    value = _json(value)
    kind = detect_kind(value)
    if kind is None and isinstance(value, dict) and isinstance(value.get("source"), str) and set(value) == {"source"}:
        kind = "bundle"  # a bundle of defaults only: no records, no gaps
    evidence = Evidence()
    if kind == "bundle":
        evidence.gaps = list(objects(value.get("gaps")))  # one attachment: its gaps exactly, repeats included
        _from_bundle(evidence, {**value, "gaps": []})
    elif kind == "trajectory":
        _from_trajectory(evidence, value)
    elif kind == "rollout":
        try:
            evidence.rollout_id = rollout_id_from_run_body(value)
        except ValueError:
            evidence.rollout_id = None
        agent = value.get("agent_ref")
        evidence.agent_name = text(agent.get("name")) if isinstance(agent, dict) else None
        if isinstance(value.get(TRAJECTORY), dict):
            _from_trajectory(evidence, value[TRAJECTORY])
        if isinstance(value.get(OBSERVATIONS), dict):
            _from_bundle(evidence, value[OBSERVATIONS])
        capture = value.get(CAPTURE)
        if isinstance(capture, dict):
            if not evidence.calls:
                evidence.calls.extend(_captured_call(call) for call in objects(capture.get("calls")))
            _add_gaps(
                evidence, [{"invocation_id": None, "detail": None, **gap} for gap in objects(capture.get("gaps"))]
            )
            evidence.rollout_id = evidence.rollout_id or text(capture.get("rollout_id"))
    else:
        raise ValueError("expected a rollout record, an ng_trajectory or an ng_agent_observations bundle")
    return evidence
