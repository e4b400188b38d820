"""Records and gaps mapped from spans held to the contract's own check: a value it refuses is not copied."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from gym_contract import schemas
from gym_contract._values import finite, preview
from gym_contract.reading._json_parsing import loads
from gym_contract.validation import iter_diagnostics

__all__ = ["Refused", "as_number", "held", "json_values", "or_unknown", "refusal", "stated_records"]

# How records relate to each other (a parent loop, an invocation id told twice) is a fact the spans
# state, not a value: it is carried as stated, and the bundle's check names it.
_TREE_CODES = frozenset({"invocation_parent_cycle", "invocation_id_duplicate"})
_SCHEMA_OF_KIND = {"agent_invocation": "agent_invocation", "tool_call": "tool_call_observation"}


@dataclass(frozen=True)
class Refused:
    """A value the contract refused: the attribute (or span field) it was read from, the value, and why."""

    attribute: str
    value: Any
    why: str


def refusal(part: dict[str, Any]) -> tuple[str, str] | None:
    """The first error the contract's check finds in ``part`` (`records` or `gaps` of one bundle): its path and why.

    Only the first, as the check explains one schema violation per record: `held` asks again once it is mended.
    """
    bundle = {"source": "otel", "records": [], "gaps": [], **part}
    for diagnostic in iter_diagnostics(bundle, "bundle"):
        if diagnostic.severity == "error" and diagnostic.code not in _TREE_CODES:
            return diagnostic.path or "", diagnostic.message
    return None


@cache
def _unknown(kind: str, field: str) -> Any:
    """The value a field of a record of ``kind`` has when nothing is known of it: its schema's default."""
    schema = schemas.get(_SCHEMA_OF_KIND[kind]) if kind in _SCHEMA_OF_KIND else {}
    return schema.get("properties", {}).get(field, {}).get("default")


def held(record: dict[str, Any], sources: dict[str, str]) -> tuple[dict[str, Any] | None, list[Refused]]:
    """``record`` with each field the contract refuses set back to its unknown value, and what was refused.

    ``sources`` names the attribute each field was read from; an item the contract refuses in a list
    field is taken out of the list. The record is None when the contract refuses something no
    attribute gave (the record as a whole, or a field the mapping made); the last refusal says why.
    """
    record = dict(record)
    refused: list[Refused] = []
    mended: set[str] = set()
    while (found := _first_refusal(record, sources)) is not None:
        path, why = found
        steps = path.split("/")[3:]  # "/records/0/<field>/<item>/…": the JSON Pointer's steps inside the record
        field = steps[0] if steps else ""
        if field not in sources:
            return None, [*refused, Refused("the record", record, f"{path or 'the record'}: {why}")]
        items = record.get(field)
        if len(steps) > 1 and steps[1].isdigit() and isinstance(items, list) and int(steps[1]) < len(items):
            item = int(steps[1])  # the list is shorter each time round: the loop ends
            refused.append(Refused(sources[field], items[item], f"its item {preview(items[item])}: {why}"))
            record[field] = items[:item] + items[item + 1 :]
            continue
        if field in mended:  # a field's unknown value is never refused; were it, asking again would never end
            return None, [*refused, Refused("the record", record, f"{path}: {why}")]
        mended.add(field)
        refused.append(Refused(sources[field], record.get(field), why))
        record[field] = _unknown(str(record.get("kind")), field)
    return record, refused


def _first_refusal(record: dict[str, Any], sources: dict[str, str]) -> tuple[str, str] | None:
    """The path and reason of the first value the contract cannot hold; a number JSON cannot write is one."""
    for field in sources:
        value = record.get(field)
        if isinstance(value, float) and not math.isfinite(value):
            return f"/records/0/{field}", f"{value} is not a finite number"
    return refusal({"records": [record]})


def or_unknown(value: Any, unknown: Any) -> Any:
    """An attribute's value, or the field's unknown value when the span states none."""
    return unknown if value is None else value


def as_number(value: Any) -> Any:
    """A number attribute as a float when it is a finite one; any other value as it is, for the contract to judge."""
    found = finite(value)
    return value if found is None else found


def json_values(attributes: dict[str, Any], key: str, unread: Callable[[str, str], None]) -> list[Any]:
    """The values a span this package wrote states as JSON texts (an attribute holds no objects); ``unread``
    is told of each other value, with the attribute and why."""
    texts = attributes.get(key)
    values = []
    for value in texts if isinstance(texts, list) else [texts] if texts is not None else []:
        try:
            values.append(loads(value) if isinstance(value, str) else None)
        except ValueError:  # orjson's JSONDecodeError: the text was not written by this package
            values.append(None)
        if values[-1] is None:
            values.pop()
            unread(key, "holds a value that is not JSON text")
    return values


def stated_records(event: dict[str, Any], unread: Callable[[str, str], None]) -> list[Any]:
    """The records a `gym_contract.record` event holds whole that the contract holds; ``unread`` is told of the rest."""
    kept = []
    for record in json_values(event, "gym_contract.record", unread):
        found = refusal({"records": [record]})
        if found is None:
            kept.append(record)
        else:
            unread("a gym_contract.record event", f"{found[0] or 'the record'}: {found[1]}")
    return kept
