"""Compare two versions of the schemas: every change, classified additive or breaking by the versioning policy.

The policy is in `schemas/README.md`: a change is additive when data valid under the old schemas
stays valid under the new ones and keeps its meaning (a new optional property, a widened enum or
type, a looser bound, a new gap code, a new schema file); it is breaking otherwise (a removed
property, a new required one, a narrowed type, enum or bound, a changed default or `$ref`, a removed
gap code). Annotations (`title`, `description`, `examples`, `$comment`) change nothing. A keyword
this module does not know is classified breaking when it changes, so that nothing slips through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from gym_contract._json_pointer import pointer

__all__ = ["Change", "changes", "load_version", "released_versions"]

Verdict = Literal["additive", "breaking", "annotation"]
GAP_REGISTRY = "gap_codes.json"

_ANNOTATIONS = {"title", "description", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
# Lower bounds: data stays valid when they fall or go; upper bounds: when they rise or go.
_LOWER = {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
_UPPER = {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
# Subschemas compared keyword by keyword, and lists of subschemas compared branch by branch.
_SUBSCHEMA = {"items", "contains", "additionalItems", "propertyNames", "not", "if", "then", "else"}
_BRANCHES = {"oneOf", "anyOf", "allOf", "prefixItems"}
_ENTRY = {
    "properties": "property",
    "$defs": "definition",
    "patternProperties": "pattern property",
    "dependentSchemas": "dependent schema",
}


@dataclass(frozen=True)
class Change:
    """One difference: the file, a JSON Pointer into it, whether it is additive or breaking, and what changed."""

    file: str
    path: str
    verdict: Verdict
    what: str

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "path": self.path or "/", "verdict": self.verdict, "what": self.what}


def released_versions() -> list[str]:
    """The contract versions whose schemas are kept as released (`schemas/released/<version>/`)."""
    root = _released_root()
    return sorted(entry.name for entry in root.iterdir() if entry.is_dir()) if root.is_dir() else []


def load_version(where: str) -> dict[str, Any]:
    """The JSON files of a schema folder, or of a released version named by its number (e.g. `1.0`), by file name.

    Raises `FileNotFoundError` when ``where`` is neither a folder nor a released version, and
    `ValueError` when one of its files is not JSON.
    """
    folder: Any = Path(where)
    if not folder.is_dir():
        folder = _released_root() / where
        if not folder.is_dir():
            known = ", ".join(released_versions()) or "none"
            raise FileNotFoundError(f"{where!r} is neither a folder nor a released version (released: {known})")
    documents: dict[str, Any] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            try:
                documents[entry.name] = json.loads(entry.read_text(encoding="utf-8"))
            except ValueError as error:
                raise ValueError(f"{entry.name} in {where}: not JSON ({error})") from None
    return documents


def _released_root() -> Any:
    checkout = Path(__file__).resolve().parent.parent / "schemas" / "released"
    if checkout.is_dir():
        return checkout
    return resources.files("gym_contract") / "_schemas" / "released"


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from ``old`` to ``new`` (both as `load_version` gives them), in file and document order."""
    found: list[Change] = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            found.append(Change(name, "", "breaking", "file removed"))
        elif name not in old:
            found.append(Change(name, "", "additive", "file added"))
        elif name == GAP_REGISTRY:
            found += [Change(name, path, verdict, what) for path, verdict, what in _registry(old[name], new[name])]
        else:
            found += [Change(name, path, verdict, what) for path, verdict, what in _schema(old[name], new[name], ())]
    return found


Found = Iterator[tuple[str, Verdict, str]]


def _schema(old: Any, new: Any, at: tuple[str | int, ...]) -> Found:
    """The changes between two subschemas at the same place."""
    if not isinstance(old, dict) or not isinstance(new, dict):  # true, false, or a value where a schema belongs
        if old != new:
            looser = new is True or (old is False and new is not False)
            yield pointer(*at), "additive" if looser else "breaking", f"schema {_short(old)} became {_short(new)}"
        return
    for keyword in sorted(set(old) | set(new), key=_keyword_order):
        before, after = old.get(keyword, _ABSENT), new.get(keyword, _ABSENT)
        if before == after:
            continue
        yield from _keyword(keyword, before, after, (*at, keyword), old, new)


_ABSENT: Any = object()  # a keyword one side does not have


def _keyword(keyword: str, before: Any, after: Any, at: tuple[str | int, ...], old: Any, new: Any) -> Found:
    where = pointer(*at)
    if keyword in _ANNOTATIONS:
        yield where, "annotation", f"{keyword} changed"
    elif keyword in ("properties", "$defs", "patternProperties", "dependentSchemas"):
        yield from _named(keyword, _mapping(before), _mapping(after), at, old, new)
    elif keyword == "required":
        yield from _sets(where, "required", before, after, added="breaking", removed="additive")
    elif keyword == "dependentRequired":
        yield from _dependent_required(where, _mapping(before), _mapping(after))
    elif keyword in ("enum", "type") and after is _ABSENT:
        yield where, "additive", f"{keyword} constraint removed"
    elif keyword in ("enum", "type") and before is _ABSENT:
        yield where, "breaking", f"{keyword} {_short(after)} set where there was none"
    elif keyword in ("enum", "type"):
        yield from _sets(where, keyword, before, after, added="additive", removed="breaking")
    elif keyword in _LOWER or keyword in _UPPER:
        yield where, _bound(keyword, before, after), f"{keyword} {_short(before)} → {_short(after)}"
    elif keyword == "additionalProperties" or keyword == "unevaluatedProperties" or keyword in _SUBSCHEMA:
        yield from _schema(True if before is _ABSENT else before, True if after is _ABSENT else after, at)
    elif keyword in _BRANCHES:
        yield from _branches(keyword, _as_list(before), _as_list(after), at)
    elif keyword in ("const", "pattern", "format", "multipleOf", "uniqueItems"):
        verdict: Verdict = "additive" if after is _ABSENT else "breaking"
        yield where, verdict, f"{keyword} {_short(before)} → {_short(after)}"
    else:  # default, $ref, $id, discriminator, and any keyword not classified above
        yield where, "breaking", f"{keyword} {_short(before)} → {_short(after)}"


def _named(
    keyword: str,
    before: dict[str, Any],
    after: dict[str, Any],
    at: tuple[str | int, ...],
    old: dict[str, Any],
    new: dict[str, Any],
) -> Found:
    """Entries of a keyword that names subschemas: removed, added (required or not), or changed within."""
    # A property defined now whose name was already required asks nothing new of the data.
    newly = set(_as_list(new.get("required"))) - set(_as_list(old.get("required")))
    for name in sorted(set(before) | set(after)):
        where = pointer(*at, name)
        if name not in after:
            yield where, "breaking", f"{_ENTRY[keyword]} {name!r} removed"
        elif name not in before:
            newly_required = keyword == "properties" and name in newly
            verdict: Verdict = "breaking" if newly_required else "additive"
            what = "optional property" if keyword == "properties" else _ENTRY[keyword]
            what = "required property" if newly_required else what
            yield where, verdict, f"{what} {name!r} added"
        else:
            yield from _schema(before[name], after[name], (*at, name))


def _sets(where: str, keyword: str, before: Any, after: Any, *, added: Verdict, removed: Verdict) -> Found:
    old, new = _as_list(before), _as_list(after)
    for value in [v for v in new if v not in old]:
        yield where, added, f"{keyword} gained {_short(value)}"
    for value in [v for v in old if v not in new]:
        yield where, removed, f"{keyword} lost {_short(value)}"


def _dependent_required(where: str, before: dict[str, Any], after: dict[str, Any]) -> Found:
    for name in sorted(set(before) | set(after)):
        old, new = _as_list(before.get(name, [])), _as_list(after.get(name, []))
        for value in [v for v in new if v not in old]:
            yield where, "breaking", f"{name!r} now needs {value!r}"
        for value in [v for v in old if v not in new]:
            yield where, "additive", f"{name!r} no longer needs {value!r}"


def _branches(keyword: str, before: list[Any], after: list[Any], at: tuple[str | int, ...]) -> Found:
    """Branches compared in place; one added to `oneOf`/`anyOf` widens, one added to `allOf` narrows."""
    for index in range(min(len(before), len(after))):
        yield from _schema(before[index], after[index], (*at, index))
    widening = keyword in ("oneOf", "anyOf")
    for index in range(len(before), len(after)):
        yield pointer(*at, index), "additive" if widening else "breaking", f"{keyword} branch added"
    for index in range(len(after), len(before)):
        yield pointer(*at, index), "breaking", f"{keyword} branch removed"


def _registry(old: Any, new: Any) -> Found:
    """The gap-code registry: a new code is additive; a removed one, or a changed field but its prose, breaks."""
    before = {entry.get("code"): entry for entry in _as_list(_mapping(old).get("codes", [])) if isinstance(entry, dict)}
    after = {entry.get("code"): entry for entry in _as_list(_mapping(new).get("codes", [])) if isinstance(entry, dict)}
    for code in sorted(set(before) | set(after), key=str):
        where = pointer("codes", str(code))
        if code not in after:
            yield where, "breaking", f"gap code {code!r} removed"
        elif code not in before:
            yield where, "additive", f"gap code {code!r} added"
        else:
            for field in sorted(set(before[code]) | set(after[code])):
                if before[code].get(field) != after[code].get(field):
                    # Which producers emit it and which criteria it weakens may grow; its meaning is prose.
                    grows = field in ("emitted_by", "criteria") and set(before[code].get(field) or []) <= set(
                        after[code].get(field) or []
                    )
                    verdict: Verdict = "annotation" if field == "meaning" else "additive" if grows else "breaking"
                    yield f"{where}/{field}", verdict, f"gap code {code!r}: {field} changed"


def _bound(keyword: str, before: Any, after: Any) -> Verdict:
    if after is _ABSENT:
        return "additive"
    if before is _ABSENT or not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return "breaking"
    looser = after < before if keyword in _LOWER else after > before
    return "additive" if looser else "breaking"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    if value is _ABSENT:
        return []
    return value if isinstance(value, list) else [value]


def _keyword_order(keyword: str) -> tuple[int, str]:
    return (0 if keyword in ("$id", "type", "required", "properties") else 1, keyword)


def _short(value: Any) -> str:
    if value is _ABSENT:
        return "absent"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."
