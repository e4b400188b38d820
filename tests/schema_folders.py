"""Hypothesis strategies for damaged schema folders: the real `schemas/v1` files broken at any JSON Pointer."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from gym_contract._json_writing import python_text
from gym_contract.schema_diff import MAX_SCHEMA_DEPTH
from tests.strategies import _at, _places, json_copy, json_values, nested
from tests.support import REPO

V1 = REPO / "schemas" / "v1"

# Depths of a value placed in a file, counted from the document's root: at and around the limit of
# `schema diff`, around the parser's own limit (1,024), and far beyond both.
DEPTHS = (MAX_SCHEMA_DEPTH - 1, MAX_SCHEMA_DEPTH, MAX_SCHEMA_DEPTH + 1, 1023, 1024, 1025, 3000)
LONE_SURROGATES = ("\ud800", "\udfff", "a\udc80b")
DAMAGES = (
    "retype",  # any JSON value (huge integers, surrogates, deep nesting) at any pointer
    "deepen",  # the value at a pointer wrapped to reach one of DEPTHS
    "surrogate",  # a string or a key given a lone surrogate
    "delete_key",
    "delete_file",
    "not_json",  # a file's text cut short, or bytes that are not UTF-8
    "directory",  # a folder where a .json file should be
    "stray_file",  # a file that is not .json, or a .json file whose name is not UTF-8
)


@cache
def v1_documents() -> tuple[tuple[str, Any], ...]:
    return tuple((path.name, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(V1.glob("*.json")))


@dataclass
class SchemaFolder:
    """A folder to write: documents (written as JSON text), raw files, sub-folders; and what was done to it."""

    documents: dict[str, Any]
    raw: dict[str, bytes] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)
    escape_surrogates: bool = True
    damages: list[str] = field(default_factory=list)

    def write(self, root: Path) -> Path:
        root.mkdir(parents=True)
        for name, document in self.documents.items():
            text = python_text(document, allow_nan=False)
            # A lone surrogate, as a JSON escape (`\ud800`), or as the bytes it would be in UTF-8.
            data = text.encode("utf-8", "backslashreplace" if self.escape_surrogates else "surrogatepass")
            (root / name).write_bytes(data)
        for name, data in self.raw.items():
            (root / name).write_bytes(data)
        for name in self.folders:
            (root / name).mkdir()
        return root

    def __repr__(self) -> str:  # the documents are long and may nest thousands of levels: say what was done
        return f"SchemaFolder(damages={self.damages!r}, escape_surrogates={self.escape_surrogates})"


def _depth_of(path: tuple[Any, ...]) -> int:
    return len(path) + 1


@st.composite
def damaged_schema_folders(draw: st.DrawFn) -> SchemaFolder:
    """`schemas/v1` damaged one to three times, each time in one of the ways of `DAMAGES`."""
    folder = SchemaFolder({name: json_copy(document) for name, document in v1_documents()})
    folder.escape_surrogates = draw(st.booleans())
    for _ in range(draw(st.integers(1, 3))):
        damage = draw(st.sampled_from(DAMAGES))
        names = sorted(folder.documents)
        if not names:
            break
        name = draw(st.sampled_from(names))
        document = folder.documents[name]
        places = list(_places(document)) if isinstance(document, (dict, list)) else []
        path = draw(st.sampled_from(places)) if places else ()
        folder.damages.append(f"{damage} {name}{''.join(f'/{part}' for part in path)}")
        if damage in ("retype", "deepen", "surrogate") and not path:
            folder.documents[name] = draw(json_values(max_leaves=5))
        elif damage == "retype":
            _at(document, path[:-1])[path[-1]] = draw(json_values(max_leaves=5))
        elif damage == "deepen":
            target = draw(st.sampled_from(DEPTHS))
            _at(document, path[:-1])[path[-1]] = nested(_at(document, path), max(1, target - _depth_of(path)))
        elif damage == "surrogate":
            parent, key = _at(document, path[:-1]), path[-1]
            surrogate = draw(st.sampled_from(LONE_SURROGATES))
            if isinstance(parent, dict) and draw(st.booleans()):
                parent[key + surrogate] = parent.pop(key)
            else:
                parent[key] = surrogate if not isinstance(parent[key], str) else parent[key] + surrogate
        elif damage == "delete_key" and path and isinstance(_at(document, path[:-1]), dict):
            del _at(document, path[:-1])[path[-1]]
        elif damage == "delete_file":
            del folder.documents[name]
        elif damage == "not_json":
            text = python_text(folder.documents.pop(name)).encode("utf-8", "surrogatepass")
            folder.raw[name] = draw(
                st.one_of(
                    st.builds(lambda keep, text=text: text[: len(text) * keep // 100], st.integers(0, 99)),
                    st.sampled_from([b"\xff\xfe{}", b"\xef\xbb\xbf{}", b'{"a": NaN}', b'{"a": 1e999}']),
                    st.binary(max_size=16),
                )
            )
        elif damage == "directory":
            del folder.documents[name]
            folder.folders.append(name)
        else:
            stray = draw(st.sampled_from(["README.md", "notes.txt", os.fsdecode(b"\xff.json")]))
            folder.raw[stray] = draw(st.sampled_from([b"# not JSON", b"{}", b"\x00\x01"]))
    return folder
