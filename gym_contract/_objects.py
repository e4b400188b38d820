"""JSON objects read member by member, alike whether decoded into Structs or parsed into dicts.

The fast path hands a record to the rules, tallies and coverage as the Structs it was decoded into;
every other path as plain dicts. Both are read the same way, by attribute — ``call.model_call_id`` —
which on a Struct is a slot read, the cheapest read Python has, so that the fast path never turns
its Structs into dicts. A dict is read through a `DictObject`, whose attributes are its keys. A
member the object does not have reads as `UNSET` (a null member as None), on either form; so does
one its Struct does not declare (`MemberStruct`), and the tag of a tagged union's member reads as
its value. What a reader does with a value of the wrong type is the typed reads' business
(`gym_contract._values`): UNSET is not a string, a number or an object to any of them.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Struct

__all__ = [
    "NO_MEMBERS",
    "OBJECT_CLASSES",
    "UNSET",
    "DictObject",
    "MemberStruct",
    "WholeRecordStruct",
    "given",
    "objects",
    "parsed",
    "plain",
    "readable",
]


OBJECT_CLASSES: set[type[Any]] = set()
"""The classes of a JSON object to a reader: `DictObject` and every `MemberStruct`, added as it is made.

Readers ask ``type(value) in OBJECT_CLASSES``: `isinstance` of a Struct class goes through its
metaclass, and costs twice as much on the reads every record makes."""


class MemberStruct(Struct, gc=False):
    """The base of the compiled Structs: a member the Struct does not declare reads as UNSET."""

    def __init_subclass__(cls, **options: Any) -> None:
        super().__init_subclass__(**options)
        if not cls.whole_record:
            OBJECT_CLASSES.add(cls)

    whole_record = False  # not annotated: a class attribute, no field
    """Whether the Struct is a whole record's frame (`WholeRecordStruct`)."""

    def __getattr__(self, name: str) -> Any:
        # Only called when no field, class attribute or method has the name.
        if name.startswith("__"):
            raise AttributeError(name)  # the protocols Python probes for (copy, pickle, …)
        return UNSET


class WholeRecordStruct(MemberStruct, gc=False):
    """The base of Structs made at run time for a whole record and let go (a rollout's frame, one per shape
    of keys): never the value of a member, so not one of `OBJECT_CLASSES`, which would hold it for ever.
    Who is handed a whole record tells it as a `Struct`."""

    whole_record = True


class DictObject:
    """A parsed JSON object read by attribute: each key an attribute, its objects read the same way."""

    # The one attribute of its own: no key of the contract starts with "_o".
    __slots__ = ("_object",)

    def __init__(self, whole: dict[str, Any]) -> None:
        self._object = whole

    def __getattr__(self, name: str) -> Any:
        value = self._object.get(name, UNSET)
        if type(value) in _SCALARS:
            return value  # most reads, told without a call: this runs for every member read of a parsed record
        if value is UNSET and name.startswith("__"):
            raise AttributeError(name)  # the protocols Python probes for (copy, pickle, …)
        return readable(value)

    def __repr__(self) -> str:
        return f"DictObject({self._object!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DictObject) and other._object == self._object

    __hash__ = None  # type: ignore[assignment]  # as the dict it reads


_SCALARS = frozenset({str, int, float, bool, type(None)})


def parsed(value: Any) -> dict[str, Any] | None:
    """The dict a `DictObject` reads; None for anything else."""
    return value._object if isinstance(value, DictObject) else None


OBJECT_CLASSES.add(DictObject)

NO_MEMBERS = DictObject({})
"""An object with no member: what a reader reads in place of an object that is absent or not one."""


def readable(value: Any) -> Any:
    """``value`` as readers read it: a dict as a `DictObject`, a list with its objects so, anything else as it is.

    A list's own elements only: no reader looks for objects in a list inside a list, and a value nested
    thousands of levels deep is wrapped one level at a time, as it is read.
    """
    if isinstance(value, dict):
        return DictObject(value)
    if isinstance(value, list):
        return [DictObject(item) if isinstance(item, dict) else item for item in value]
    return value


def objects(value: Any) -> list[Any]:
    """The objects of a list, skipping anything else; empty when ``value`` is not a list."""
    if type(value) is not list:
        return []
    return [item for item in value if type(item) in OBJECT_CLASSES]


def given(value: Any) -> bool:
    """Whether a member holds a value: neither absent (UNSET) nor null."""
    return value is not None and value is not UNSET


def plain(value: Any) -> Any:
    """``value`` as plain data, undoing `readable` and decoding: Structs and `DictObject`s as dicts, a list
    of them as a list of dicts, opaque payloads left as `msgspec.Raw`."""
    if isinstance(value, DictObject):
        return value._object
    if isinstance(value, Struct) or (
        # A rollout the fast path decoded in two steps: a dict of its keys, its attachments Structs.
        isinstance(value, dict) and any(isinstance(item, Struct) for item in value.values())
    ):
        return msgspec.to_builtins(value, builtin_types=(msgspec.Raw,))
    if isinstance(value, list):
        return [plain(item) if isinstance(item, (DictObject, Struct)) else item for item in value]
    return value
