"""Conversations a rollout writes twice, decoded once: the trajectory's invocations copy the bundle's.

The projection takes the observed invocations over into `ng_trajectory` whole, so a rollout that
carries both attachments holds every invocation's conversation twice, byte for byte, and
conversations are the costliest part of a record to decode: many small objects, each a Struct. The
rollout's frame (`_fastpath`) therefore leaves every conversation raw; `fill` decodes each distinct
one once, with the type it has in the schema, and gives the copies the same list. A raw value that
does not decode raises, as decoding the whole line would have, and what is filled in is what
decoding the whole line would have built: the fast path's proof that no key was dropped
(`_fastpath._keys_all_kept`) then runs on the filled record as on any other.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import msgspec

from gym_contract._vocabulary import OBSERVATIONS, TRAJECTORY

DEFERRED_FIELD = "conversation"
"""The field left raw in every Struct that declares it, and checks nothing else of it."""

# Struct made here -> (attribute, decoder of its value) of each field it leaves raw.
_DEFERRED: dict[type, tuple[tuple[str, msgspec.json.Decoder[Any]], ...]] = {}
_MADE: dict[Any, Any] = {}  # type -> the same type with its conversations left raw
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def deferring(kind: Any) -> Any:
    """``kind`` with the conversation of every Struct inside it left raw; ``kind`` itself when it holds none."""
    made = _MADE.get(kind)
    if made is None:
        _MADE[kind] = kind  # a type that holds itself is not remade again on the way down
        made = _MADE[kind] = _remade(kind)
    return made


def _remade(kind: Any) -> Any:
    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Annotated:
        base = deferring(arguments[0])
        if base is arguments[0]:
            return kind
        annotated: Any = typing.Annotated
        parts = (base, *kind.__metadata__)
        return annotated[parts]
    if origin in (typing.Union, list, dict):
        remade = tuple(deferring(argument) for argument in arguments)
        if all(new is old for new, old in zip(remade, arguments, strict=True)):
            return kind
        if origin is typing.Union:
            return typing.Union[remade]  # noqa: UP007 - built at run time
        return types.GenericAlias(origin, remade)
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return _deferred_struct(kind)
    return kind


def _deferred_struct(struct: type[msgspec.Struct]) -> Any:
    """A subclass of ``struct`` whose conversation, and whatever of its fields holds one, are left raw or remade."""
    if hasattr(struct, "__post_init__"):
        # Its check of its own reads its fields, and the classes of what they hold, as decoding whole makes them.
        return struct
    hints = typing.get_type_hints(struct, include_extras=True)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    deferred: list[tuple[str, msgspec.json.Decoder[Any]]] = []
    for info in msgspec.structs.fields(struct):
        hint = hints[info.name]
        if info.encode_name != info.name:
            return struct  # a field a subclass would write under its own name: kept whole, never misread
        if info.encode_name == DEFERRED_FIELD and info.default is msgspec.UNSET:
            typed = [member for member in typing.get_args(hint) if member is not msgspec.UnsetType]
            if typing.get_origin(hint) is typing.Union and len(typed) == 1:
                fields.append((info.name, msgspec.Raw | msgspec.UnsetType, msgspec.UNSET))
                deferred.append((info.name, _decoder(typed[0])))
                continue
        remade = deferring(hint)
        if remade is not hint:
            if info.default is msgspec.NODEFAULT:
                fields.append((info.name, remade))
            else:
                fields.append((info.name, remade, info.default))
    if not fields:
        return struct
    config = struct.__struct_config__
    tagged: dict[str, Any] = {"tag_field": config.tag_field, "tag": config.tag} if config.tag_field is not None else {}
    made = msgspec.defstruct(
        struct.__name__,
        fields,
        bases=(struct,),
        module=__name__,
        kw_only=True,
        forbid_unknown_fields=config.forbid_unknown_fields,
        gc=False,
        **tagged,
    )
    if deferred:
        _DEFERRED[made] = tuple(deferred)
    return made


def _decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind)
    return decoder


def fill(frame: Any) -> Any:
    """The rollout ``frame`` with each raw conversation of its bundle and trajectory decoded, the copies shared.

    Raises as the decoder does when one does not decode. A conversation already filled is left as it is.
    """
    holders: list[Any] = []
    for key, members in ((OBSERVATIONS, "records"), (TRAJECTORY, "invocations")):
        attachment = getattr(frame, key, None)
        if attachment is not None and attachment is not msgspec.UNSET:
            listed = getattr(attachment, members)
            if type(listed) is list:
                holders += listed
    # Conversations told apart by length first: a byte comparison only between those that may be copies.
    decoded: dict[int, list[tuple[msgspec.json.Decoder[Any], msgspec.Raw, Any]]] = {}
    for holder in holders:
        for attribute, decoder in _DEFERRED.get(type(holder), ()):
            raw = getattr(holder, attribute)
            if type(raw) is not msgspec.Raw:
                continue
            alike = decoded.setdefault(len(raw), [])
            value = next((done for by, seen, done in alike if by is decoder and seen == raw), None)
            if value is None:
                value = decoder.decode(raw)
                alike.append((decoder, raw, value))
            setattr(holder, attribute, value)
    return frame
