"""Griffe extension for the API reference: docstrings are prose, so brackets in them never become links.

The package's docstrings are written for `help()` and editors, not as Markdown, and some quote
regular expressions such as `^[A-Za-z0-9][A-Za-z0-9._-]*$`. Rendered as Markdown, `[a][b]` is a
reference link, which mkdocs-autorefs then tries to resolve and reports as a broken
cross-reference. This extension escapes the second bracket of every `][` outside code spans and
fenced blocks, so the text shows as written. (No docstring of the package uses cross-reference
syntax on purpose.)
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def escape_reference_links(text: str) -> str:
    """`text` with each `][` outside code written `]\\[`, so Markdown shows it instead of linking it."""
    lines, in_fence = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence or _FENCE.match(line):
            lines.append(line)
            continue
        pieces, last = [], 0
        for span in _CODE_SPAN.finditer(line):
            pieces.append(line[last : span.start()].replace("][", "]\\["))
            pieces.append(span.group(0))
            last = span.end()
        pieces.append(line[last:].replace("][", "]\\["))
        lines.append("".join(pieces))
    return "\n".join(lines)


class ProseDocstrings(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and "][" in obj.docstring.value:
            obj.docstring.value = escape_reference_links(obj.docstring.value)
