"""JSON Pointers (RFC 6901): written from the parts of a path, and followed into a document."""

from __future__ import annotations

from typing import Any, cast


def pointer(*parts: object) -> str:
    """A JSON Pointer from path parts."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def resolve(document: dict[str, Any], pointer: str) -> dict[str, Any]:
    """The node of ``document`` that ``pointer`` names."""
    node: Any = document
    for token in filter(None, pointer.split("/")):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return cast(dict[str, Any], node)
