"""Compare two versions of the schemas: every change, classified additive or breaking by the versioning policy.

The policy is in `schemas/README.md`: a change is additive when data valid under the old schemas
stays valid under the new ones and keeps its meaning (a new optional property of an object that
refused unknown keys, a widened enum or type, a looser bound, a new gap code, a new schema file);
it is breaking otherwise (a removed property, a new required one, a typed new property of an object
that took any value under its key, a narrowed type, enum or bound, a changed default or `$ref`, a
removed gap code). Annotations (`title`, `description`, `examples`, `$comment`) change nothing. A keyword
this module does not know is classified breaking when it changes, so that nothing slips through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from gym_contract._json_pointer import pointer
from gym_contract.schema_diff._folder import (
    GAP_REGISTRY,
    MAX_SCHEMA_DEPTH,
    SchemaFolderError,
    check_documents,
    load_version,
    released_versions,
)

__all__ = ["MAX_SCHEMA_DEPTH", "Change", "SchemaFolderError", "changes", "load_version", "released_versions"]

Verdict = Literal["additive", "breaking", "annotation"]

# `discriminator` is OpenAPI's: code generators read it, and no JSON Schema validator evaluates it.
_ANNOTATIONS = {
    "title",
    "description",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "discriminator",
}
# Lower bounds: data stays valid when they fall or go; upper bounds: when they rise or go.
_LOWER = {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
_UPPER = {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
# Subschemas compared keyword by keyword, and lists of subschemas compared branch by branch.
_SUBSCHEMA = {"items", "contains", "additionalItems", "propertyNames", "then", "else"}
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


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from ``old`` to ``new`` (both as `load_version` gives them), in file and document order.

    Raises `SchemaFolderError` (a `ValueError`) when a document is not one `load_version` would give.
    """
    check_documents(old, "the old version")
    check_documents(new, "the new version")
    found: list[Change] = []
    # Where `unevaluatedProperties` is used, declaring a property may change a verdict elsewhere.
    evaluation_matters = "unevaluatedProperties" in json.dumps([old, new])
    for name in sorted(set(old) | set(new)):
        if name not in new:
            found.append(Change(name, "", "breaking", "file removed"))
        elif name not in old:
            found.append(Change(name, "", "additive", "file added"))
        elif name == GAP_REGISTRY:
            found += [Change(name, path, verdict, what) for path, verdict, what in _registry(old[name], new[name])]
        else:
            comparison = _Comparison(old, new, name, evaluation_matters)
            found += [
                Change(name, path, verdict, what) for path, verdict, what in comparison.schema(old[name], new[name])
            ]
    return found


Found = Iterator[tuple[str, Verdict, str]]
Place = tuple[str | int, ...]


class _Comparison:
    """One file of two versions compared, with both versions' files at hand to follow `$ref`s."""

    def __init__(self, old: dict[str, Any], new: dict[str, Any], file: str, evaluation_matters: bool) -> None:
        self.old, self.new, self.file = old, new, file
        self.evaluation_matters = evaluation_matters

    def schema(self, old: Any, new: Any, at: Place = ()) -> Found:
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
            yield from self.keyword(keyword, before, after, (*at, keyword), old, new)

    def keyword(self, keyword: str, before: Any, after: Any, at: Place, old: Any, new: Any) -> Found:
        where = pointer(*at)
        if keyword in _ANNOTATIONS:
            done = "added" if before is _ABSENT else "removed" if after is _ABSENT else "changed"
            yield where, "annotation", f"{keyword} {done}"
        elif keyword in ("properties", "$defs", "patternProperties", "dependentSchemas"):
            yield from self.named(keyword, _mapping(before), _mapping(after), at, old, new)
        elif keyword == "required":
            yield from _sets(where, "required", before, after, added="breaking", removed="additive")
        elif keyword == "dependentRequired":
            yield from _dependent_required(where, _mapping(before), _mapping(after))
        elif keyword in ("enum", "type") and after is _ABSENT:
            yield where, "additive", f"{keyword} constraint removed"
        elif keyword == "type" and before is _ABSENT and self.implies(old, _as_list(after)):
            yield where, "annotation", f"type {_short(after)} set, which every branch beside it already demands"
        elif keyword in ("enum", "type") and before is _ABSENT:
            yield where, "breaking", f"{keyword} {_short(after)} set where there was none"
        elif keyword in ("enum", "type"):
            yield from _sets(where, keyword, before, after, added="additive", removed="breaking")
        elif keyword in _LOWER or keyword in _UPPER:
            yield where, _bound(keyword, before, after), f"{keyword} {_short(before)} → {_short(after)}"
        elif keyword in ("not", "if"):
            yield from self.reversed(keyword, before, after, at)
        elif keyword == "additionalProperties" or keyword == "unevaluatedProperties" or keyword in _SUBSCHEMA:
            yield from self.schema(True if before is _ABSENT else before, True if after is _ABSENT else after, at)
        elif keyword in _BRANCHES:
            yield from self.branches(keyword, _as_list(before), _as_list(after), at, new)
        elif keyword in ("const", "pattern", "format", "multipleOf", "uniqueItems"):
            verdict: Verdict = "additive" if after is _ABSENT else "breaking"
            yield where, verdict, f"{keyword} {_short(before)} → {_short(after)}"
        else:  # default, $ref, $id, and any keyword not classified above
            yield where, "breaking", f"{keyword} {_short(before)} → {_short(after)}"

    def reversed(self, keyword: str, before: Any, after: Any, at: Place) -> Found:
        """`not` and `if`: a subschema that takes more data makes the whole take less, or take other branches."""
        # An absent `not` takes nothing away; an absent `if` is no condition at all.
        neutral = keyword != "not"
        before = neutral if before is _ABSENT else before
        after = neutral if after is _ABSENT else after
        for where, verdict, what in self.schema(before, after, at):
            if verdict == "annotation":
                yield where, verdict, what
            elif keyword == "not":
                yield where, "breaking" if verdict == "additive" else "additive", f"{what} (under not)"
            else:  # more or less data meets the condition: either way some of it is judged by the other branch
                yield where, "breaking", f"{what} (in the condition of if)"

    def named(
        self, keyword: str, before: dict[str, Any], after: dict[str, Any], at: Place, old: Any, new: Any
    ) -> Found:
        """Entries of a keyword that names subschemas: removed, added, or changed within."""
        newly = set(_as_list(new.get("required"))) - set(_as_list(old.get("required")))
        for name in sorted(set(before) | set(after)):
            where = pointer(*at, name)
            if name not in after:
                yield where, "breaking", f"{_ENTRY[keyword]} {name!r} removed"
            elif name not in before:
                yield where, *self.added(keyword, name, after[name], old, new, name in newly)
            else:
                yield from self.schema(before[name], after[name], (*at, name))

    def added(
        self, keyword: str, name: str, schema: Any, old: Any, new: Any, newly_required: bool
    ) -> tuple[Verdict, str]:
        """A subschema named ``name`` added under ``keyword``: whether data valid before stays valid."""
        if keyword == "$defs":  # checks nothing until something refers to it
            return "additive", f"definition {name!r} added"
        if keyword == "properties" and newly_required:
            return "breaking", f"required property {name!r} added"
        takes_anything = _takes_anything(schema)
        if keyword == "properties" and takes_anything and self.declares_only(old, new):
            return "annotation", f"property {name!r} declared with no constraint: no data is judged otherwise"
        what = "optional property" if keyword == "properties" else _ENTRY[keyword]
        # A key the object refused before may now be given; one it took with any value is now checked.
        refused_before = keyword == "properties" and old.get("additionalProperties", True) is False
        if takes_anything or refused_before:
            return "additive", f"{what} {name!r} added"
        return "breaking", f"{what} {name!r} added where any value was taken: data that held another is refused"

    def declares_only(self, old: Any, new: Any) -> bool:
        """Whether declaring a property that takes any value changes nothing: no key was refused before
        for being undeclared (`additionalProperties`), here or through `unevaluatedProperties`."""
        open_before = old.get("additionalProperties", True) is True and not old.get("patternProperties")
        open_now = new.get("additionalProperties", True) is True
        return open_before and open_now and not self.evaluation_matters

    def branches(self, keyword: str, before: list[Any], after: list[Any], at: Place, new: Any) -> Found:
        """Branches compared in place; one added to `oneOf`/`anyOf` widens, one added to `allOf` narrows.

        A `oneOf` fails data that two branches take, so a branch that takes more may break data that
        another branch took, unless no value can meet two branches (their types or tags differ).
        """
        found: list[tuple[str, Verdict, str]] = []
        for index in range(min(len(before), len(after))):
            found += self.schema(before[index], after[index], (*at, index))
        widening = keyword in ("oneOf", "anyOf")
        for index in range(len(before), len(after)):
            found.append((pointer(*at, index), "additive" if widening else "breaking", f"{keyword} branch added"))
        for index in range(len(after), len(before)):
            found.append((pointer(*at, index), "breaking", f"{keyword} branch removed"))
        overlapping = keyword == "oneOf" and not self.exclusive(after, new)
        for where, verdict, what in found:
            if overlapping and verdict == "additive":
                yield where, "breaking", f"{what} (a value may now meet two branches of oneOf)"
            else:
                yield where, verdict, what

    def exclusive(self, branches: list[Any], parent: Any) -> bool:
        """Whether no value meets two of the new ``branches``: their JSON types differ, or a required tag does."""
        kinds = [self.types_of(branch, self.file, set(), self.new) for branch in branches]
        if all(found is not None for found in kinds):
            widened = [found | {"number"} if "integer" in found else found for found in kinds if found is not None]
            if all(not (a & b) for i, a in enumerate(widened) for b in widened[i + 1 :]):
                return True
        targets = [self.target(branch, self.file, self.new) for branch in branches]
        for tag in _as_list(parent.get("required") if isinstance(parent, dict) else None):
            values = [
                _mapping(_mapping(_mapping(target).get("properties")).get(tag)).get("const", _ABSENT)
                for target in targets
            ]
            if _ABSENT not in values and len({json.dumps(value) for value in values}) == len(values):
                return True
        return False

    def implies(self, schema: Any, types: list[Any]) -> bool:
        """Whether the old ``schema`` already takes only values of ``types``, through its branches."""
        found = self.types_of(schema, self.file, set(), self.old)
        return found is not None and all(kind in types or (kind == "integer" and "number" in types) for kind in found)

    def types_of(self, schema: Any, file: str, seen: set[str], documents: dict[str, Any]) -> set[str] | None:
        """The JSON types a subschema takes, as far as `type`, `$ref` and branches tell; None if unknown.

        Bounded in depth and in steps, however the `$ref`s of a damaged folder chain or fan out:
        a walk cut short answers unknown, which classifies the change the cautious way.
        """
        steps = [_TYPE_STEPS]

        def walk(schema: Any, file: str, seen: frozenset[str], depth: int) -> set[str] | None:
            steps[0] -= 1
            if not isinstance(schema, dict) or depth > MAX_SCHEMA_DEPTH or steps[0] < 0:
                return None
            if "type" in schema:
                return {kind for kind in _as_list(schema["type"]) if isinstance(kind, str)}
            if isinstance(schema.get("$ref"), str):
                reference = schema["$ref"] if schema["$ref"].partition("#")[0] else file + schema["$ref"]
                if reference in seen:
                    return None
                target = self.target(schema, file, documents)
                return walk(target, reference.partition("#")[0], seen | {reference}, depth + 1)
            for keyword in ("oneOf", "anyOf"):
                if isinstance(schema.get(keyword), list) and schema[keyword]:
                    each = [walk(branch, file, seen, depth + 1) for branch in schema[keyword]]
                    known = [kinds for kinds in each if kinds is not None]
                    return set().union(*known) if len(known) == len(each) else None
            return None

        return walk(schema, file, frozenset(seen), 0)

    def target(self, schema: Any, file: str, documents: dict[str, Any]) -> Any:
        """What a branch is, its `$ref` followed within ``documents``; None where it leads nowhere known."""
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        target_file, _, fragment = schema["$ref"].partition("#")
        target: Any = documents.get(target_file or file)
        for part in filter(None, fragment.split("/")):
            target = target.get(part) if isinstance(target, dict) else None
        return target


_ABSENT: Any = object()  # a keyword one side does not have
_TYPE_STEPS = 10_000  # subschemas `types_of` visits at most: far more than any real union has


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


def _registry(old: Any, new: Any) -> Found:
    """The gap-code registry: a new code is additive; a removed one, or a changed field but its prose, breaks.

    Two changes only add: producers listed in `emitted_by` (or criteria) beside those already there, and
    a `detail` stated where the registry stated none — data with no detail keeps meaning what it meant,
    while a detail already stated may be read by consumers, so changing it breaks.
    """
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
                    # Which producers emit it and which criteria it weakens may grow, and a detail no entry
                    # stated may be stated; its meaning is prose.
                    grows = field in ("emitted_by", "criteria") and set(before[code].get(field) or []) <= set(
                        after[code].get(field) or []
                    )
                    stated = field == "detail" and before[code].get(field) is None
                    stated = stated and isinstance(after[code].get(field), str)
                    verdict: Verdict = (
                        "annotation" if field == "meaning" else "additive" if grows or stated else "breaking"
                    )
                    said = "stated" if stated else "changed"
                    yield f"{where}/{field}", verdict, f"gap code {code!r}: {field} {said}"


def _bound(keyword: str, before: Any, after: Any) -> Verdict:
    if after is _ABSENT:
        return "additive"
    if before is _ABSENT or not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return "breaking"
    looser = after < before if keyword in _LOWER else after > before
    return "additive" if looser else "breaking"


def _takes_anything(schema: Any) -> bool:
    return schema is True or (isinstance(schema, dict) and not (schema.keys() - _ANNOTATIONS))


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
