"""Fingerprint version 4: normalise conversation items of any dialect into tagged fields and hash them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from gym_contract._json_writing import python_text
from gym_contract._limits import MAX_DEPTH, depth_beyond
from gym_contract._values import nonempty, obj, text
from gym_contract.reading._json_parsing import with_room_for_nesting

FINGERPRINT_VERSION = 4

FINGERPRINT_DOMAIN = "nemo-gym-lineage"
DIGEST_DOMAIN = "nemo-gym-lineage-context"

# Field tags. Each field is framed as tag byte + 8-byte big-endian length + UTF-8 value.
TAG_ROLE = 0x01
TAG_SYSTEM = 0x02
TAG_TEXT = 0x03
TAG_PART_TYPE = 0x04
TAG_PART_JSON = 0x05
TAG_CALL_ID = 0x06
TAG_CALL_NAME = 0x07
TAG_CALL_ARGUMENTS = 0x08
TAG_RESULT_ID = 0x09
TAG_ITEM_TYPE = 0x0A
TAG_ITEM_JSON = 0x0B

TAGS: dict[str, int] = {
    "ROLE": TAG_ROLE,
    "SYSTEM": TAG_SYSTEM,
    "TEXT": TAG_TEXT,
    "PART_TYPE": TAG_PART_TYPE,
    "PART_JSON": TAG_PART_JSON,
    "CALL_ID": TAG_CALL_ID,
    "CALL_NAME": TAG_CALL_NAME,
    "CALL_ARGUMENTS": TAG_CALL_ARGUMENTS,
    "RESULT_ID": TAG_RESULT_ID,
    "ITEM_TYPE": TAG_ITEM_TYPE,
    "ITEM_JSON": TAG_ITEM_JSON,
}

SYSTEM_ROLES = frozenset({"system", "developer"})
TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})
REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking"})
TOOL_CALL_ITEM_TYPES = frozenset({"function_call", "custom_tool_call"})
TOOL_RESULT_ITEM_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
# Transport hints that a harness moves between requests; they say nothing about the conversation.
IGNORED_BLOCK_KEYS = frozenset({"cache_control"})

Field = tuple[int, str]


# --- canonical JSON ----------------------------------------------------------------------------------


def canonical_json(value: object) -> str:
    """Sorted keys, no whitespace, non-ASCII kept, numbers as the docs' lineage page specifies.

    Written without recursion, so content of any depth hashes. An integer is written exactly at any
    size, and a number no double holds (`NumberText`) as its JSON text. Raises ValueError for NaN or
    an infinity and TypeError for a value that is not JSON: neither can come from JSON text.
    """
    # Python's repr of a float is the shortest round-trip form, positional for exponents -4..15:
    # the docs spell the rule out so that other languages can reproduce it.
    return python_text(value, sort_keys=True, compact=True, allow_nan=False)


# Argument text longer than this may nest deeper than MAX_DEPTH levels (each level takes two characters).
_DEEP_ENOUGH = 2 * (MAX_DEPTH + 1)


def _argument_value(arguments: str) -> str | None:
    """The canonical JSON of argument text, or None when the text is not JSON as version 4 reads it.

    That is Python's `json.loads`: NaN and numbers beyond a double's range read, and then fail as
    canonical JSON; an integer of more than 4,300 digits fails. Nesting deeper than `MAX_DEPTH` fails
    too, always: the parser recurses, so the limit is checked rather than left to the stack.
    """
    try:
        parsed = with_room_for_nesting(lambda: json.loads(arguments))
        if len(arguments) >= _DEEP_ENOUGH and depth_beyond(parsed, MAX_DEPTH) is not None:
            return None
        return canonical_json(parsed)
    except (ValueError, RecursionError):
        return None


def canonical_arguments(arguments: object) -> str:
    """Tool-call arguments: null → "", JSON text → its canonical JSON, other text → stripped, else canonical JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        canonical = _argument_value(arguments)
        return canonical if canonical is not None else arguments.strip(" \t\n\r")
    return canonical_json(arguments)


# --- the dialects' payloads as a list of items ---------------------------------------------------------


def request_items(dialect: str | None, request: dict[str, Any] | None) -> list[Any] | None:
    """The conversation a request sends, as items; None when the request holds no conversation we can read.

    Anthropic's top-level `system` and the Responses API's `instructions` become a leading system item.
    """
    if request is None:
        return None
    if dialect == "chat" or (dialect is None and "messages" in request and "system" not in request):
        messages = request.get("messages")
        return list(messages) if isinstance(messages, list) else None
    if dialect == "messages" or (dialect is None and "messages" in request):
        messages = request.get("messages")
        if not isinstance(messages, list):
            return None
        system = request.get("system")
        return ([{"role": "system", "content": system}] if system is not None else []) + list(messages)
    if dialect == "responses" or (dialect is None and "input" in request):
        given = request.get("input")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else given
        if not isinstance(items, list):
            return None
        instructions = request.get("instructions")
        return ([{"role": "system", "content": instructions}] if instructions is not None else []) + list(items)
    return None


def response_items(dialect: str | None, response: dict[str, Any] | None) -> list[Any]:
    """What the model answered, as items; [] when there is no response."""
    if response is None:
        return []
    if dialect == "responses" or (dialect is None and "output" in response):
        output = response.get("output")
        return list(output) if isinstance(output, list) else []
    if dialect == "chat" or (dialect is None and "choices" in response):
        choices = response.get("choices")
        first = obj(choices[0]) if isinstance(choices, list) and choices else None
        message = obj((first or {}).get("message"))
        return [message] if message is not None else []
    if dialect == "messages" or (dialect is None and "content" in response):
        return [{"role": "assistant", "content": response.get("content")}]
    return []


# --- items → elements → fields -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Element:
    """One unit of a conversation, independent of how a dialect groups units into items."""

    role: str | None
    """Role whose turn this unit belongs to; None for units outside any turn (system items, other items)."""
    fields: tuple[Field, ...]
    model_authored: tuple[Field, ...] = ()
    """What the unit adds to the fingerprint."""


def _content_part(block: object, role: str) -> _Element | None:
    if block is None:
        return None
    if isinstance(block, str):
        return _Element(role, ((TAG_TEXT, block),), ((TAG_TEXT, block),)) if block else None
    as_object = obj(block)
    given_type = as_object.get("type") if as_object is not None else None
    # A type of any other JSON type names no kind of block: the part is hashed whole, typed "".
    block_type = text(given_type)
    if as_object is not None and (given_type is None or block_type in TEXT_BLOCK_TYPES):
        block_text = text(as_object.get("text"))
        if block_text is not None:
            return _Element(role, ((TAG_TEXT, block_text),), ((TAG_TEXT, block_text),)) if block_text else None
    if block_type in REASONING_TYPES:
        return None
    kept = {key: value for key, value in as_object.items() if key not in IGNORED_BLOCK_KEYS} if as_object else block
    fields = ((TAG_PART_TYPE, block_type or ""), (TAG_PART_JSON, canonical_json(kept)))
    return _Element(role, fields, fields)


def _tool_call(call_id: object, name: object, arguments: object) -> _Element:
    identity = nonempty(call_id) or ""
    name_text = text(name) or ""
    argument_text = canonical_arguments(arguments)
    fields = ((TAG_CALL_ID, identity), (TAG_CALL_NAME, name_text), (TAG_CALL_ARGUMENTS, argument_text))
    return _Element("assistant", fields, _call_identity(fields))


def _call_identity(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """What of a tool call the fingerprint hashes: its id when it has one, else its name and arguments."""
    # Version 4, rule 2: the id the backend issued is echoed verbatim; name and arguments may not be.
    call_id = fields[0]
    return (call_id,) if call_id[1] else fields


def _tool_result(call_id: object, output: object) -> list[_Element]:
    identity = text(call_id) or ""
    elements = [_Element("tool", ((TAG_RESULT_ID, identity),))]
    for part in _content_parts(output, "tool"):
        elements.append(_Element("tool", part.fields))
    return elements


def _content_parts(content: object, role: str) -> list[_Element]:
    blocks = content if isinstance(content, list) else [content]
    return [element for block in blocks if (element := _content_part(block, role)) is not None]


def _message_elements(message: dict[str, Any], role: str) -> list[_Element]:
    elements: list[_Element] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else [content]:
        as_object = obj(block)
        block_type = text(as_object.get("type")) if as_object is not None else None
        if as_object is not None and block_type == "tool_use":
            elements.append(_tool_call(as_object.get("id"), as_object.get("name"), as_object.get("input")))
        elif as_object is not None and block_type == "tool_result":
            elements += _tool_result(as_object.get("tool_use_id"), as_object.get("content"))
        else:
            elements += _content_parts(block, role)
    refusal = nonempty(message.get("refusal"))
    if refusal is not None:
        elements += _content_parts({"type": "refusal", "refusal": refusal}, role)
    calls = message.get("tool_calls")
    # An entry that is not an object is still a call: one without id, name or arguments.
    for call in calls if isinstance(calls, list) else []:
        call_object = obj(call) or {}
        function = obj(call_object.get("function")) or {}
        elements.append(_tool_call(call_object.get("id"), function.get("name"), function.get("arguments")))
    legacy = obj(message.get("function_call"))
    if legacy is not None:
        elements.append(_tool_call(None, legacy.get("name"), legacy.get("arguments")))
    return elements


def _item_elements(item: object) -> list[_Element]:
    as_object = obj(item)
    if as_object is None:
        return [_Element(None, ((TAG_ITEM_TYPE, ""), (TAG_ITEM_JSON, canonical_json(item))))]
    given_type = as_object.get("type")
    role, item_type = text(as_object.get("role")), text(given_type)
    if role is not None and (given_type is None or item_type == "message"):
        if role in SYSTEM_ROLES:
            # Version 4, rule 1: a system prompt may change on every request (today's date).
            return [_Element(None, ((TAG_SYSTEM, role),))]
        if role == "tool":
            return _tool_result(as_object.get("tool_call_id"), as_object.get("content"))
        return _message_elements(as_object, role)
    if item_type in TOOL_CALL_ITEM_TYPES:
        call_id = as_object.get("call_id") or as_object.get("id")
        arguments = as_object.get("arguments") if "arguments" in as_object else as_object.get("input")
        return [_tool_call(call_id, as_object.get("name"), arguments)]
    if item_type in TOOL_RESULT_ITEM_TYPES:
        return _tool_result(as_object.get("call_id"), as_object.get("output"))
    if item_type in REASONING_TYPES:
        return []
    kept = {key: value for key, value in as_object.items() if key not in IGNORED_BLOCK_KEYS}
    return [_Element(None, ((TAG_ITEM_TYPE, item_type or ""), (TAG_ITEM_JSON, canonical_json(kept))))]


def _elements(items: Sequence[object]) -> Iterator[_Element]:
    for item in items:
        yield from _item_elements(item)


def conversation_fields(items: Sequence[object]) -> tuple[list[Field], list[Field]]:
    """The fingerprint fields and the digest fields of `items`, in one pass over them.

    Fingerprint fields are what the model wrote (text, other parts, tool calls); digest fields are every
    element's fields, with a ROLE field wherever the speaking role changes.
    """
    authored: list[Field] = []
    fields: list[Field] = []
    running_role: str | None = None
    for element in _elements(items):
        if element.role is not None and element.role != running_role:
            fields.append((TAG_ROLE, element.role))
        running_role = element.role
        fields.extend(element.fields)
        if element.role == "assistant":
            authored.extend(element.model_authored)
    return authored, fields


def digest_fields(items: Sequence[object]) -> list[Field]:
    """The fields the context digest hashes."""
    return conversation_fields(items)[1]


def fingerprint_fields(items: Sequence[object]) -> list[Field]:
    """The fields the fingerprint hashes."""
    return conversation_fields(items)[0]


# --- hashing -----------------------------------------------------------------------------------------


def frame(field: Field) -> bytes:
    """One field on the wire: tag byte, 8-byte big-endian length of the value's UTF-8, the value."""
    tag, value = field
    # surrogatepass: a lone surrogate from a JSON escape is written as WTF-8 rather than refused.
    data = value.encode("utf-8", "surrogatepass")
    return bytes((tag,)) + len(data).to_bytes(8, "big") + data


def hash_fields(domain: str, fields: Sequence[Field]) -> str:
    """SHA-256 of the domain's UTF-8 bytes followed by the framed fields, as lowercase hex."""
    hasher = hashlib.sha256(domain.encode("utf-8"))
    for field in fields:
        hasher.update(frame(field))
    return hasher.hexdigest()


def prefix_digests(fields: Sequence[Field], lengths: set[int]) -> dict[int, str]:
    """The digest of the first n fields, for every n in `lengths` that is at most the number of fields."""
    hasher = hashlib.sha256(DIGEST_DOMAIN.encode("utf-8"))
    found: dict[int, str] = {}
    if 0 in lengths:
        found[0] = hasher.hexdigest()
    for count, field in enumerate(fields, start=1):
        hasher.update(frame(field))
        if count in lengths:
            found[count] = hasher.hexdigest()
    return found


def fingerprint_of(fields: Sequence[Field]) -> str:
    """The fingerprint of fingerprint fields; "" when there are none."""
    return hash_fields(FINGERPRINT_DOMAIN, fields) if fields else ""


def assistant_fingerprint(items: Sequence[object]) -> str:
    """The fingerprint of the model-authored content of `items`; "" when the model wrote nothing.

    Raises ValueError for NaN or an infinity in a hashed item, TypeError for a value that is not JSON.
    """
    return fingerprint_of(fingerprint_fields(items))


def conversation_digest(items: Sequence[object]) -> str:
    """The context digest of every item of a conversation (system content counts by role and position only).

    Raises ValueError for NaN or an infinity in a hashed item, TypeError for a value that is not JSON.
    """
    return hash_fields(DIGEST_DOMAIN, digest_fields(items))
