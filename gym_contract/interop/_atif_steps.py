"""What ATIF steps and the contract's conversation items have in common, read the same way in both directions.

An ATIF step written from conversation items is read back into items by `items_of_step`; the writer
calls the same function to find out whether the step's own fields say everything, and keeps the
items under the step's `extra` when they do not. So a round trip never depends on two readings that
might drift apart.
"""

from __future__ import annotations

import re
from typing import Any

from gym_contract._json_writing import python_text
from gym_contract._values import obj, objects, text

__all__ = [
    "ATIF_VERSIONS",
    "EXTRA_KEY",
    "READABLE_VERSION",
    "content_text",
    "gym_extra",
    "items_of_step",
    "tool_extra",
]

ATIF_VERSIONS: tuple[str, ...] = ("1.7", "1.8")
"""The ATIF versions `to_atif` writes: 1.7 brought embedded subagent trajectories, 1.8 audio content."""

READABLE_VERSION = re.compile(r"ATIF-v1\.[0-8]")
"""The `schema_version`s `from_atif` reads: every published 1.x up to 1.8."""

EXTRA_KEY = "gym_contract"
"""The key, in any ATIF `extra`, under which this package keeps what ATIF has no field for."""


def gym_extra(value: Any) -> dict[str, Any]:
    """The `extra.gym_contract` object of an ATIF object, or an empty one."""
    extra = obj(value.get("extra")) if isinstance(value, dict) else None
    return obj(extra.get(EXTRA_KEY)) or {} if extra is not None else {}


def tool_extra(tool_call: dict[str, Any]) -> dict[str, Any]:
    """What the writer kept of a tool call beyond ATIF's fields: its observation, item id and raw arguments."""
    return gym_extra(tool_call)


def content_text(content: Any) -> tuple[str | None, bool]:
    """The text of an ATIF message or observation content, and whether that text is all it holds.

    A string is itself; an array of content parts gives its text parts joined, and is lossy when it
    holds an image or audio part, which a conversation item of text cannot carry.
    """
    if content is None or isinstance(content, str):
        return content, True
    parts = objects(content)
    texts = [part["text"] for part in parts if part.get("type") == "text" and isinstance(part.get("text"), str)]
    return "".join(texts), len(texts) == len(content)


def _message(role: str, content: Any) -> list[dict[str, Any]]:
    message, _ = content_text(content)
    return [{"type": "message", "role": role, "content": message}] if message else []


def _function_call(tool_call: dict[str, Any]) -> dict[str, Any]:
    kept = tool_extra(tool_call)
    arguments = kept.get("arguments")
    if not isinstance(arguments, str):
        arguments = python_text(tool_call.get("arguments") if isinstance(tool_call.get("arguments"), dict) else {})
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": tool_call.get("tool_call_id"),
        "name": tool_call.get("function_name"),
        "arguments": arguments,
    }
    for key in ("id", "status"):
        if isinstance(kept.get(f"item_{key}"), str):
            item[key] = kept[f"item_{key}"]
    return item


def items_of_step(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation items an ATIF step stands for.

    Items the writer kept under `extra.gym_contract.items` are taken as they are. Otherwise: a system
    or user message is a message of that role; an agent step is its assistant message, then a
    `function_call` per tool call; each observation result tied to a tool call is its
    `function_call_output`, and one tied to none is a user message (what the model was shown next).
    Reasoning text becomes no item: a reasoning item needs an id ATIF does not have.
    """
    kept = gym_extra(step).get("items")
    if isinstance(kept, list):
        return objects(kept)
    source = step.get("source")
    items: list[dict[str, Any]] = []
    if source in ("system", "user"):
        items += _message(source, step.get("message"))
    elif source == "agent":
        items += _message("assistant", step.get("message"))
        items += [_function_call(tool_call) for tool_call in objects(step.get("tool_calls"))]
    for result in objects((obj(step.get("observation")) or {}).get("results")):
        output, _ = content_text(result.get("content"))
        if output is None:
            continue
        call_id = text(result.get("source_call_id"))
        if call_id is not None:
            items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        elif output:
            items.append({"type": "message", "role": "user", "content": output})
    return items
