"""Reading a version of the schemas: its JSON files, each proven a schema (or the gap-code registry) first.

`schema diff` compares whatever folder it is given, so nothing in a folder may reach the
comparison unchecked: a file is read as strict JSON (UTF-8, no lone surrogate, no repeated key),
nested no deeper than `MAX_SCHEMA_DEPTH`, and must be a JSON Schema by the draft 2020-12
metaschema, or, for `gap_codes.json`, a registry of the shape the comparison reads. Every other
file is refused with a `SchemaFolderError` that names the file and the JSON Pointer of the fault.
"""

from __future__ import annotations

import json
import math
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from gym_contract._json_pointer import pointer

__all__ = [
    "GAP_REGISTRY",
    "MAX_SCHEMA_DEPTH",
    "SchemaFolderError",
    "check_documents",
    "load_version",
    "released_versions",
]

GAP_REGISTRY = "gap_codes.json"

MAX_SCHEMA_DEPTH = 32
"""Levels of arrays and objects a schema file may nest. The contract's files nest at most 10; the
bound keeps every walk of the comparison and of the metaschema check far inside the interpreter's stack."""

# What the comparison reads of the registry: codes as strings, and the two fields it compares as sets.
_NAMES = {"type": ["array", "null"], "items": {"type": "string"}}
_REGISTRY_SHAPE = {
    "type": "object",
    "required": ["codes"],
    "properties": {
        "codes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["code"],
                "properties": {"code": {"type": "string"}, "emitted_by": _NAMES, "criteria": _NAMES},
            },
        }
    },
}
_MESSAGE_CHARS = 200


class SchemaFolderError(ValueError):
    """A file of a version of the schemas that cannot be compared: unreadable, not JSON, too deep, or not a schema."""


def released_versions() -> list[str]:
    """The contract versions whose schemas are kept as released (`schemas/released/<version>/`)."""
    root = _released_root()
    return sorted(entry.name for entry in root.iterdir() if entry.is_dir()) if root.is_dir() else []


def load_version(where: str) -> dict[str, Any]:
    """The JSON files of a schema folder, or of a released version named by its number (e.g. `1.0`), by file name.

    Raises `FileNotFoundError` when ``where`` is neither a folder nor a released version, another
    `OSError` when the folder cannot be listed, and `SchemaFolderError` (a `ValueError`) when one of
    its `.json` files cannot be read, is not strict JSON, nests deeper than `MAX_SCHEMA_DEPTH`, or is
    neither a JSON Schema nor the gap-code registry. Files of other names are not read.
    """
    folder: Any = Path(where)
    if not folder.is_dir():
        folder = _released_root() / where
        if not folder.is_dir():
            known = ", ".join(released_versions()) or "none"
            raise FileNotFoundError(f"{where!r} is neither a folder nor a released version (released: {known})")
    documents: dict[str, Any] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        label = f"{_shown(entry.name)} in {where}"
        if not _is_text(entry.name):
            raise SchemaFolderError(f"{label}: the file name is not UTF-8, so no report could name it")
        try:
            data = entry.read_bytes()
        except OSError as error:
            raise SchemaFolderError(f"{label}: cannot be read ({error.strerror or error})") from None
        documents[entry.name] = _parse(data, label)
    check_documents(documents, str(where))
    return documents


def check_documents(documents: dict[str, Any], where: str) -> None:
    """Raise `SchemaFolderError` unless every document is a JSON value the comparison can take: a JSON
    Schema by the draft 2020-12 metaschema, or (`gap_codes.json`) a registry with string codes, each
    listed once."""
    for name, document in documents.items():
        label = f"{_shown(name)} in {where}"
        problem = _value_problem(document) or (
            _registry_problem(document) if name == GAP_REGISTRY else _shape_problem(_metaschema(), document)
        )
        if problem is not None:
            at, message = problem
            raise SchemaFolderError(f"{label}, at {at or '/'}: {message}")


def _released_root() -> Any:
    checkout = Path(__file__).resolve().parent.parent.parent / "schemas" / "released"
    if checkout.is_dir():
        return checkout
    return resources.files("gym_contract") / "_schemas" / "released"


def _is_text(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: a lone surrogate (from an escape, or a file name's
    undecodable byte) cannot."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(name: str) -> str:
    """A file name as it can be printed: an undecodable byte shown as its escape (`\\xff`)."""
    return name if _is_text(name) else os.fsencode(name).decode("utf-8", "backslashreplace")


class _Repeating(dict):  # type: ignore[type-arg]
    """An object read from text that gave one of its keys twice; JSON parsers keep either value."""

    key: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen: set[str] = set()
    repeating = _Repeating(value)
    repeating.key = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
    return repeating


def _parse(data: bytes, label: str) -> Any:
    """One file's JSON text, read strictly and exactly, or the `SchemaFolderError` that says why not."""
    try:
        # orjson proves the text strict: UTF-8 without a byte order mark, no lone surrogate, no NaN,
        # nesting within its own limit; so the exact reading below never meets any of those.
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise SchemaFolderError(f"{label}: not JSON ({error})") from None
    problem = _value_problem(value)
    if problem is not None:
        raise SchemaFolderError(f"{label}, at {problem[0] or '/'}: {problem[1]}")
    # Read again, now that the depth is known to be small, to keep integers beyond 64 bits exact
    # (orjson makes them floats) and to find a key given twice (orjson keeps the last silently).
    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=_pairs)
    except ValueError as error:  # an integer of more digits than Python converts
        raise SchemaFolderError(f"{label}: {error}") from None
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Repeating):
            raise SchemaFolderError(f"{label}, at {pointer(*path) or '/'}: the key {item.key!r} is given twice")
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        stack.extend((child, (*path, key)) for key, child in children)
    return value


def _value_problem(value: Any) -> tuple[str, str] | None:
    """Where and why ``value`` is not a JSON value of at most `MAX_SCHEMA_DEPTH` levels whose text
    can be written, or None. Iterative, so that a value of any depth is measured."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 1, ())]
    while stack:
        item, level, path = stack.pop()
        if isinstance(item, (dict, list)):
            if level > MAX_SCHEMA_DEPTH:
                return pointer(*path), f"nested deeper than the {MAX_SCHEMA_DEPTH} levels a schema file may have"
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str) or not _is_text(key):
                        return pointer(*path), f"the key {key!r} is not a string that can be written as UTF-8"
                    stack.append((child, level + 1, (*path, key)))
            else:
                stack.extend((child, level + 1, (*path, index)) for index, child in enumerate(item))
        elif isinstance(item, str):
            if not _is_text(item):
                return pointer(*path), f"the string {item[:40]!a} holds a lone surrogate, which no UTF-8 text can"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return pointer(*path), f"{item} is not a JSON number"
        elif item is not None and not isinstance(item, (bool, int)):
            return pointer(*path), f"a {type(item).__name__} is not a JSON value"
    return None


@cache
def _metaschema() -> Any:
    import jsonschema_rs
    from jsonschema import Draft202012Validator

    return jsonschema_rs.Draft202012Validator(Draft202012Validator.META_SCHEMA)


@cache
def _registry_validator() -> Any:
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(_REGISTRY_SHAPE)


def _shape_problem(validator: Any, document: Any) -> tuple[str, str] | None:
    """The first place where ``document`` breaks the schema of ``validator``, and why; None when it keeps it."""
    if validator.is_valid(document):
        return None
    error = next(iter(validator.iter_errors(document)))
    message = str(error.message)
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 1] + "…"
    return pointer(*error.instance_path), message


def _registry_problem(document: Any) -> tuple[str, str] | None:
    problem = _shape_problem(_registry_validator(), document)
    if problem is not None:
        return problem
    first: dict[str, int] = {}
    for index, entry in enumerate(document["codes"]):
        code = entry["code"]
        if code in first:
            return pointer("codes", index, "code"), f"gap code {code!r} is listed twice (first at /codes/{first[code]})"
        first[code] = index
    return None
