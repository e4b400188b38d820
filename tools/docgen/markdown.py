"""Markdown and JSON formatting shared by every generated block: links, table cells, code, fenced blocks."""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any


def link(page: str, target: str) -> str:
    """A relative link from the docs page ``page`` to ``target`` (docs-relative, with an optional #anchor)."""
    path, _, anchor = target.partition("#")
    relative = posixpath.relpath(path, posixpath.dirname(page)) if path != page else ""
    return relative + (f"#{anchor}" if anchor else "")


def cell(text: str) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def prose(text: str) -> str:
    """Text from a data source, made safe for Markdown: brackets and angle brackets outside code spans escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    escape = str.maketrans({"[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;"})
    return "".join(part if part.startswith("`") else part.translate(escape) for part in parts)


def code(value: str) -> str:
    """Inline code for any text, backticks included."""
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def pretty(value: Any, width: int = 96, indent: str = "") -> str:
    """JSON indented by two spaces, with every container that fits on the rest of its line kept on one."""
    flat = dump(value)
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = [f"{inner}{dump(key)}: {pretty(item, width, inner).lstrip()}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + pretty(item, width, inner) for item in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def fenced(language: str, text: str, title: str | None = None) -> list[str]:
    fence = "```" if "```" not in text else "````"
    header = f'{fence}{language} title="{title}"' if title else f"{fence}{language}"
    return [header, *text.rstrip("\n").split("\n"), fence]
