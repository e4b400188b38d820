"""Test helpers over the bundled schemas: self-contained copies for generators, and JSON walking."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
            inlined[key] = {k: _inline(v, resolver) for k, v in value.items()} if key == "properties" else copy.deepcopy(value)
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
