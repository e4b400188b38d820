"""The reference's verdict on documents, for `tools/reference_diff.py`; run in the reference's own environment.

    REFERENCE_PYTHON tools/reference_verdicts.py NEMO_GYM_CHECKOUT < documents.jsonl > verdicts.jsonl

Each input line is `{"kind": K, "document": D}`; each output line says whether NeMo Gym's Pydantic
model for K takes D as it validates input (`lax`), whether it takes it without coercing a value of
one JSON type into another (`strict`), and, when it refuses, the first error's location and type.
A capture exchange is judged by whether the reference derives a `ModelCallRecord` from it, and
the record it derives is returned as it would write it (`record`). Nothing
of this package is imported here: the reference's environment does not have it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MEMBER_TYPES: dict[str, str] = {}
"""The `type` each member of the reference's conversation-item union is tagged with, by class name."""


def judges(checkout: str) -> dict[str, Any]:
    """A function per kind that raises as the reference refuses a document of that kind."""
    sys.path.insert(0, checkout)
    import typing

    from nemo_gym import rollout_observability as observability
    from nemo_gym.base_responses_api_model import ModelCallRecord, build_model_call_record
    from nemo_gym.openai_utils import NeMoGymResponseInputItem
    from pydantic import TypeAdapter

    def model(cls: Any) -> Any:
        # As the reference reads (a parsed value, validated laxly); strictly, from the JSON text.
        return lambda document, strict: (
            cls.model_validate_json(json.dumps(document), strict=True) if strict else cls.model_validate(document)
        )

    item = TypeAdapter(NeMoGymResponseInputItem)
    for member in typing.get_args(typing.get_args(NeMoGymResponseInputItem)[0]):
        tag = member.model_fields["type"].annotation if "type" in getattr(member, "model_fields", {}) else None
        if typing.get_args(tag):
            MEMBER_TYPES[member.__name__] = typing.get_args(tag)[0]

    def exchange(document: Any, strict: bool) -> Any:
        if not isinstance(document, dict):  # the reference's reader counts a line that is no object as invalid
            raise ValueError("not an object")
        record = build_model_call_record(document, call_index=0)
        if strict:  # the fields the record takes from the exchange as they are, without coercion
            taken = {field: document.get(key) for key, field in _TAKEN_AS_IS.items()}
            ModelCallRecord.model_validate_json(json.dumps({**taken, "call_index": 0}), strict=True)
        return record.model_dump(mode="json")

    return {
        "model_call_ref": model(observability.ModelCallRef),
        "agent_invocation": model(observability.AgentInvocation),
        "tool_call_observation": model(observability.ToolCallObservation),
        "context_compaction": model(observability.ContextCompactionObservation),
        "sandbox_observation": model(observability.SandboxObservation),
        "observation_gap": model(observability.ObservationGap),
        "agent_observations": model(observability.AgentObservationBundle),
        "trajectory": model(observability.TrajectoryRecord),
        "trajectory_model_call": model(observability.TrajectoryModelCall),
        "trajectory_turn": model(observability.TrajectoryTurn),
        "trajectory_tool_call": model(observability.TrajectoryToolCall),
        "model_call_record": model(ModelCallRecord),
        "conversation_item": lambda document, strict: (
            item.validate_json(json.dumps(document), strict=True) if strict else item.validate_python(document)
        ),
        "capture_exchange": exchange,
    }


# Exchange keys the reference's `build_model_call_record` copies into record fields unchanged.
_TAKEN_AS_IS = {
    "model_call_id": "model_call_id",
    "model_ref": "model_ref",
    "dialect": "dialect",
    "status_code": "status_code",
    "started_at": "started_at",
    "completed_at": "completed_at",
    "error_category": "error_category",
    "latency_ms": "latency_total_ms",
    "latency_ttft_ms": "latency_ttft_ms",
}


def verdict(judge: Any, document: Any) -> dict[str, Any]:
    """Whether the reference takes ``document`` laxly and strictly, and its complaint when it does not."""
    found: dict[str, Any] = {}
    for mode in ("lax", "strict"):
        try:
            taken = judge(document, mode == "strict")
            found[mode] = True
            if mode == "lax" and isinstance(taken, dict):  # the record derived from a capture line
                found["record"] = taken
        except Exception as error:  # any refusal is the verdict being measured
            found[mode] = False
            if mode == "lax":
                found["error"] = _deepest_error(error, document)
    return found


def _deepest_error(error: Exception, document: Any) -> dict[str, Any]:
    """The complaint that says most: from the union member the item's own `type` names, the deepest."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            every = errors(include_url=False, include_input=False)
            named = [found for found in every if _names_its_member(found["loc"], document)]
            first = max(named or every, key=lambda found: len(found["loc"]))
            return {"loc": list(first["loc"]), "type": first["type"], "msg": first["msg"]}
        except Exception:  # fall through to the exception's class
            pass
    return {"loc": [], "type": type(error).__name__, "msg": str(error)[:200]}


def _names_its_member(loc: Any, document: Any) -> bool:
    """Whether ``loc`` goes through the union member whose `type` is the type of the item it is in."""
    node = document
    for part in loc:
        if isinstance(part, str) and part in MEMBER_TYPES:
            return isinstance(node, dict) and node.get("type") == MEMBER_TYPES[part]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    return False


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    by_kind = judges(argv[0])
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(verdict(by_kind[request["kind"]], request["document"])), flush=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
