"""Explain why a record breaks its schema: every violation located, in jsonschema's words, walking what fails.

jsonschema walks a whole record in Python, tens of milliseconds for a rollout of a few hundred
kilobytes, although the record is almost always sound but for one item. So the compiled validator
(jsonschema_rs) first says where the record fails, and jsonschema explains a copy of the record in
which every array on the way to a failure keeps only the items that lead to one, and every other
array is empty. The bundled schemas constrain an array by its `items` alone (the Struct compiler
refuses any other array keyword) and tell the branches of a `oneOf` apart by a constant tag, so an
item's violations never depend on its neighbours and a sound part stays sound when emptied: the copy
has exactly the violations of the record, at shifted indexes that are mapped back. A violation whose
words could quote a shortened copy is explained on the whole record instead.

jsonschema quotes each failing instance with `repr` as it finds it, and `repr` recurses once per
level of nesting: what it judges is a `repr_safe` view of the record, which it judges and words
exactly as the record, whatever the record's depth and the interpreter's stack.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gym_contract import schemas
from gym_contract._deep_values import REPR_LEVELS, python_repr, repr_safe
from gym_contract._json_pointer import pointer
from gym_contract._limits import nests_within
from gym_contract._values import PREVIEW_CHARS, NumberText, preview
from gym_contract._vocabulary import SCHEMA_OF_KIND
from gym_contract.diagnostics import Diagnostic
from gym_contract.validation import _fastpath

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = ["schema_diagnostics"]

Path = tuple[str | int, ...]


def schema_diagnostics(record: dict[str, Any], kind: str) -> list[Diagnostic]:
    """One `schema_violation` per violation jsonschema finds in ``record``, a record of ``kind``."""
    schema_name = SCHEMA_OF_KIND[kind]
    schema_id = schemas.schema_id(schema_name)
    validator = schemas.validator(schema_name)
    # A record nested deeper than `repr` may go is explained whole, through a view that words it safely.
    shallow = nests_within(record, REPR_LEVELS)
    failing = _fastpath.failing_paths(record, kind) if shallow else None
    if failing:
        shortened = _Shortened(record, failing)
        if shortened.copies:
            errors = list(validator.iter_errors(shortened.value))
            leaves = [_most_relevant(error) for error in errors]
            if errors and not any(shortened.is_copy(error.instance) for error in (*errors, *leaves)):
                return [
                    _diagnostic(leaf, shortened.original_path(leaf.absolute_path), schema_id, kind) for leaf in leaves
                ]
    # Nothing to shorten, a validator that cannot judge the record, or words that would quote a copy.
    return [
        _diagnostic(leaf, tuple(leaf.absolute_path), schema_id, kind)
        for leaf in map(_most_relevant, validator.iter_errors(record if shallow else repr_safe(record)))
    ]


class _Shortened:
    """A copy of a record whose arrays on the way to a failing path keep only the items on such a path."""

    def __init__(self, record: dict[str, Any], failing: Iterable[Path]) -> None:
        self.copies: dict[int, Any] = {}
        """id of each container copied (kept alive here) -> the copy."""
        self._kept_indexes: dict[int, list[int]] = {}
        """id of each shortened array -> index in the record of each item it kept."""
        tree: dict[Any, Any] = {}
        for path in failing:
            node = tree
            for segment in path:
                node = node.setdefault(segment, {})
            node[_WHOLE] = True
        self.value = self._copy(record, tree)

    def _copy(self, value: Any, tree: dict[Any, Any]) -> Any:
        """``value`` copied as the failing paths in ``tree`` say, with an explicit stack: depth cannot exhaust it."""
        root: list[Any] = [None]
        # (part of the record, its tree of failing paths, the container its copy goes into, the slot there)
        stack: list[tuple[Any, dict[Any, Any], Any, Any]] = [(value, tree, root, 0)]
        while stack:
            item, below, parent, slot = stack.pop()
            copy: dict[Any, Any] | list[Any]
            if _WHOLE in below or not isinstance(item, (dict, list)):
                parent[slot] = item  # a failure is here, or a leaf: everything below is explained as it is
                continue
            if isinstance(item, dict):
                copy = dict.fromkeys(item)
                stack.extend((child, below.get(key, _SOUND), copy, key) for key, child in item.items())
            else:
                kept = sorted(index for index in below if isinstance(index, int) and 0 <= index < len(item))
                copy = [None] * len(kept)
                stack.extend((item[index], below[index], copy, position) for position, index in enumerate(kept))
                self._kept_indexes[id(copy)] = kept
            self.copies[id(copy)] = copy
            parent[slot] = copy
        return root[0]

    def is_copy(self, value: Any) -> bool:
        return id(value) in self.copies and self.copies[id(value)] is value

    def original_path(self, path: Iterable[str | int]) -> Path:
        """The path in the record of what ``path`` reaches in the copy."""
        current: Any = self.value
        mapped: list[str | int] = []
        for segment in path:
            kept = self._kept_indexes.get(id(current)) if self.is_copy(current) else None
            if kept is not None and isinstance(segment, int):
                mapped.append(kept[segment])
            else:
                mapped.append(segment)
            if isinstance(current, dict):
                current = current.get(segment)
            elif isinstance(current, list) and isinstance(segment, int):
                current = current[segment]
            else:
                current = None
        return tuple(mapped)


_WHOLE = object()
_SOUND: dict[Any, Any] = {}
"""The tree of a part with no failing path: its arrays are emptied."""


# ----------------------------------------------------------------------------- diagnostics

_BRANCH_KEYS = ("kind", "type")


def _diagnostic(leaf: ValidationError, path: Path, schema_id: str, kind: str) -> Diagnostic:
    return Diagnostic.of(
        "schema_violation",
        _message(leaf),
        pointer(*path),
        kind=kind,
        schema_id=schema_id,
        keyword=str(leaf.validator),
    )


def _most_relevant(error: ValidationError) -> ValidationError:
    """For `anyOf`/`oneOf` failures, the error of the branch the instance was meant for.

    Records and items name their branch with `kind` or `type`; the branch whose constant matches
    is the one to explain. Otherwise the deepest error says the most.
    """
    if not error.context:
        return error
    instance = error.instance
    by_branch: dict[int | str, list[ValidationError]] = {}
    for sub in error.context:
        by_branch.setdefault(sub.schema_path[0] if sub.schema_path else -1, []).append(sub)
    if isinstance(instance, dict):
        for branch_errors in by_branch.values():
            mismatched_tag = any(
                sub.validator == "const"
                and list(sub.relative_path) in [[key] for key in _BRANCH_KEYS if key in instance]
                for sub in branch_errors
            )
            if not mismatched_tag and any(key in instance for key in _BRANCH_KEYS):
                return _most_relevant(max(branch_errors, key=lambda e: len(e.absolute_path)))
    return error


def _message(error: ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf"):
        return f"{preview(error.instance)} matches none of the allowed shapes ({error.validator})"
    if error.validator == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown key(s) not allowed")
    if error.validator == "type" and isinstance(error.instance, NumberText):
        wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        expected = " or ".join(map(repr, wanted))
        return f"{error.instance!r} is a number beyond what a double or a Python int holds; expected {expected}"
    if len(error.message) <= PREVIEW_CHARS:
        return error.message  # too short to quote a value longer than a preview
    full = python_repr(error.instance)
    if len(full) > PREVIEW_CHARS and error.message.startswith(full):
        return preview(error.instance) + error.message[len(full) :]
    return error.message
