"""Test helpers over the bundled schemas: self-contained copies for generators, and JSON walking."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from gym_contract import schemas

REPO = Path(__file__).resolve().parent.parent

# Keywords that only annotate; dropped from the copies handed to instance generators.
ANNOTATIONS = ("description", "examples", "title", "$comment", "default", "discriminator", "$schema", "$id")


def inline(name: str) -> dict[str, Any]:
    """The named schema with every `$ref` replaced by its target, so that it stands alone."""
    resolver = schemas.registry().resolver()
    root = resolver.lookup(schemas.schema_id(name))
    return _inline(root.contents, root.resolver)


def _inline(node: Any, resolver: Any) -> Any:
    if isinstance(node, list):
        return [_inline(item, resolver) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        resolved = resolver.lookup(node["$ref"])
        target = _inline(resolved.contents, resolved.resolver)
        siblings = {k: _inline(v, resolver) for k, v in node.items() if k != "$ref" and k not in ANNOTATIONS}
        return {"allOf": [target, siblings]} if siblings else target
    inlined: dict[str, Any] = {}
    for key, value in node.items():
        if key in ANNOTATIONS or key == "$defs":
            continue
        if key in ("properties", "dependentRequired"):
            inlined[key] = (
                {k: _inline(v, resolver) for k, v in value.items()} if key == "properties" else copy.deepcopy(value)
            )
        else:
            inlined[key] = _inline(value, resolver)
    return inlined


def objects(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every JSON object inside ``value`` with its path, the outermost first."""
    if isinstance(value, dict):
        yield path, value
        for key, child in value.items():
            yield from objects(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from objects(child, (*path, index))


def model_entities() -> dict[str, Any]:
    """Schema name -> the public model (or type adapter) that must agree with it."""
    from pydantic import TypeAdapter

    from gym_contract import models

    return {
        "model_call_ref": models.ModelCallRef,
        "observation_gap": models.ObservationGap,
        "agent_invocation": models.AgentInvocation,
        "conversation_item": TypeAdapter(models.ConversationItem),
        "tool_call_observation": models.ToolCallObservation,
        "context_compaction": models.ContextCompactionObservation,
        "sandbox_observation": models.SandboxObservation,
        "agent_observations": models.AgentObservationBundle,
        "trajectory": models.TrajectoryRecord,
        "trajectory_turn": models.TrajectoryTurn,
        "trajectory_model_call": models.TrajectoryModelCall,
        "trajectory_tool_call": models.TrajectoryToolCall,
        "model_call_record": models.ModelCallRecord,
        "model_call_capture": models.ModelCallCapture,
        "capture_exchange": models.CaptureExchange,
        "agent_outcome": models.AgentOutcome,
    }


def model_accepts(model: Any, data: Any) -> bool:
    """Whether the model accepts ``data``, checked from Python objects and from JSON text alike."""
    import json

    from pydantic import ValidationError

    validate_python = getattr(model, "model_validate", None) or model.validate_python
    validate_json = getattr(model, "model_validate_json", None) or model.validate_json
    try:
        validate_python(data)
        python_verdict = True
    except ValidationError:
        python_verdict = False
    try:
        validate_json(json.dumps(data))
        json_verdict = True
    except ValidationError:
        json_verdict = False
    assert python_verdict == json_verdict, f"Python and JSON validation disagree on {data!r}"
    return python_verdict


def dump(model: Any, instance: Any) -> Any:
    """JSON-mode dump of a validated instance, for a model class or a type adapter."""
    if hasattr(model, "dump_python"):
        return model.dump_python(instance, mode="json")
    return instance.model_dump(mode="json")


def load(model: Any, data: Any) -> Any:
    validate_python = getattr(model, "model_validate", None) or model.validate_python
    return validate_python(data)


def with_repeated_key(value: Any, target: int) -> tuple[bytes, int]:
    """Compact JSON of ``value`` as orjson writes it, except that the ``target``-th non-empty object
    (in document order) writes its first key twice; also how many non-empty objects there are."""
    seen = 0

    def write(item: Any) -> bytes:
        nonlocal seen
        if isinstance(item, dict) and item:
            index, seen = seen, seen + 1
            members = [orjson.dumps(key) + b":" + write(child) for key, child in item.items()]
            if index == target:
                members.insert(0, members[0])
            return b"{" + b",".join(members) + b"}"
        if isinstance(item, list):
            return b"[" + b",".join(write(child) for child in item) + b"]"
        if isinstance(item, int) and not isinstance(item, bool):
            return str(item).encode()  # orjson stops at 64 bits; JSON does not
        return orjson.dumps(item)

    return write(value), seen


def run_in_process(*args: str) -> tuple[int, str, str]:
    """`gym-contract ARGS` in this process: exit status, stdout, stderr (an exception is not caught)."""
    import contextlib
    import io

    from gym_contract.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


class Pieces:
    """A binary stream that hands out its bytes a few at a time, like a slow pipe."""

    def __init__(self, data: bytes, piece: int) -> None:
        self._data, self._piece, self._at = data, piece, 0

    def read(self, size: int) -> bytes:
        piece = self._data[self._at : self._at + min(size, self._piece)]
        self._at += len(piece)
        return piece
