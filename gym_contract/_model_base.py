"""Base class of every generated model: JSON-typed strictness and the schema keywords codegen cannot express."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from pydantic import BaseModel, ConfigDict, model_validator

from gym_contract._deep_values import written_iteratively

# Conditional keywords that tools/codegen.py tells datamodel-code-generator to copy into
# ``json_schema_extra`` rather than turn into Python types.
CONDITIONAL_KEYWORDS = ("if", "then", "else", "dependentRequired")

# The keywords by which a subschema judges an object by the members it names alone, and the words
# that judge nothing.
_BY_NAMED_MEMBERS = frozenset(
    {"if", "then", "else", "not", "allOf", "anyOf", "oneOf", "required", "properties", "dependentRequired"}
)
_ANNOTATIONS = frozenset({"$comment", "title", "description"})

# The types of parsed JSON, told apart from a model's instance without a call per value.
_JSON_TYPES = frozenset({str, int, float, bool, type(None), list, dict})


def _arms(annotation: Any) -> list[Any]:
    """The alternatives of an annotation, with unions flattened and ``Annotated`` unwrapped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _arms(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [arm for arg in typing.get_args(annotation) for arm in _arms(arg)]
    return [annotation]


def _list_item_types(annotation: Any) -> list[Any]:
    return [
        typing.get_args(arm)[0] for arm in _arms(annotation) if typing.get_origin(arm) is list and typing.get_args(arm)
    ]


def _may_hold_int(annotation: Any) -> bool:
    arms = _arms(annotation)
    return int in arms or any(_may_hold_int(item) for item in _list_item_types(annotation))


def _item_discriminators(annotation: Any) -> tuple[str, ...]:
    """The keys that tell apart the branches of the items of a list annotation (`Field(discriminator=...)`)."""
    return tuple(
        found
        for item in _list_item_types(annotation)
        if typing.get_origin(item) is typing.Annotated
        for found in (getattr(meta, "discriminator", None) for meta in item.__metadata__)
        if isinstance(found, str)
    )


def _tags_written_iteratively(items: Any, keys: tuple[str, ...]) -> Any:
    """A list whose objects hold something other than a string under a discriminator key gets copies of
    them whose value there `str` writes without recursing or raising: pydantic quotes a tag it refuses."""
    if not isinstance(items, list) or not any(
        isinstance(item, dict) and key in item and not isinstance(item[key], str) for item in items for key in keys
    ):
        return items
    return [
        {k: written_iteratively(v) if k in keys else v for k, v in item.items()} if isinstance(item, dict) else item
        for item in items
    ]


def _named_members(schema: Any) -> set[str] | None:
    """The members of an object that ``schema`` looks at, when it looks at nothing else of the object; else None."""
    if isinstance(schema, bool):
        return set()
    if not isinstance(schema, dict) or schema.keys() - _BY_NAMED_MEMBERS - _ANNOTATIONS:
        return None
    named = {*schema.get("required", ()), *schema.get("properties", {})}
    for key, needed in schema.get("dependentRequired", {}).items():
        named.update([key, *needed])
    branches = [schema[key] for key in ("if", "then", "else", "not") if key in schema]
    for key in ("allOf", "anyOf", "oneOf"):
        branches += schema.get(key, [])
    for branch in branches:
        inner = _named_members(branch)
        if inner is None:
            return None
        named |= inner
    return named


def _failure(checker: Draft202012Validator, data: dict[str, Any]) -> ValidationError | None:
    """The failure of ``data`` under the conditional keywords of ``checker`` that best explains it; None if none."""
    # The keywords look at this object's own keys, yet jsonschema words each failure with `repr` of
    # the object: its values are handed over as copies that write themselves without recursing.
    judged = {key: written_iteratively(value) for key, value in data.items()}
    return None if checker.is_valid(judged) else best_match(checker.iter_errors(judged))


def _described(error: ValidationError) -> str | None:
    return error.schema.get("description") if isinstance(error.schema, dict) else None


def _json_integers(value: Any, annotation: Any) -> Any:
    """Turn integral floats into ints where the annotation expects an integer.

    JSON has one number type and JSON Schema counts ``1.0`` as an integer, so a strict model must too.
    """
    if isinstance(value, float):
        arms = _arms(annotation)
        if value.is_integer() and int in arms and float not in arms:
            return int(value)
        return value
    if isinstance(value, list) and any(isinstance(item, (float, list)) for item in value):
        item_types = _list_item_types(annotation)
        if item_types:
            item_annotation = typing.Union[tuple(item_types)] if len(item_types) > 1 else item_types[0]  # noqa: UP007
            return [_json_integers(item, item_annotation) for item in value]
    return value


class ContractModel(BaseModel):
    """Strict JSON-typed model: no coercion between JSON types, integral floats accepted as integers."""

    model_config = ConfigDict(strict=True)

    __conditional_checker__: ClassVar[Draft202012Validator | None] = None
    __conditional_members__: ClassVar[frozenset[str] | None] = None
    """The members the conditional keywords look at, when they look at nothing else; None otherwise."""
    __refusal_without_members__: ClassVar[str | None] = None
    """What the conditional keywords say of an object holding none of those members: None when they accept it."""
    __json_adjustments__: ClassVar[list[tuple[str, Callable[[Any], Any]]]] = []
    """Per field (by its JSON name), what reading it as JSON asks of its value before pydantic sees it."""
    __untouched_without__: ClassVar[frozenset[str] | None] = None
    """The keys without which an object of JSON values is handed to pydantic as it is; None if there are none."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        extra = cls.model_config.get("json_schema_extra")
        keywords = {k: v for k, v in extra.items() if k in CONDITIONAL_KEYWORDS} if isinstance(extra, dict) else {}
        cls.__conditional_checker__ = checker = Draft202012Validator(keywords) if keywords else None
        cls.__conditional_members__ = cls.__refusal_without_members__ = None
        named = _named_members(keywords) if checker is not None else None
        if checker is not None and named is not None:
            # An object holding none of the members is judged as the empty object is, once and for all;
            # a refusal that jsonschema words names the object, so only a described one can be kept.
            error = _failure(checker, {})
            if error is None or _described(error) is not None:
                cls.__conditional_members__ = frozenset(named)
                cls.__refusal_without_members__ = None if error is None else _described(error)
        cls.__json_adjustments__ = [
            (field.alias or name, partial(_json_integers, annotation=field.annotation))
            for name, field in cls.model_fields.items()
            if _may_hold_int(field.annotation)
        ] + [
            (field.alias or name, partial(_tags_written_iteratively, keys=keys))
            for name, field in cls.model_fields.items()
            if (keys := _item_discriminators(field.annotation))
        ]
        adjusted = frozenset(key for key, _ in cls.__json_adjustments__)
        members = cls.__conditional_members__
        if checker is None:
            cls.__untouched_without__ = adjusted
        elif members is not None and cls.__refusal_without_members__ is None:
            cls.__untouched_without__ = adjusted | members
        else:
            cls.__untouched_without__ = None

    @model_validator(mode="before")
    @classmethod
    def _apply_json_semantics(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        untouched = cls.__untouched_without__
        if (
            untouched is not None
            and untouched.isdisjoint(data)
            and (cls.__conditional_checker__ is None or _JSON_TYPES.issuperset(map(type, data.values())))
        ):
            # The object of JSON values holding none of the keys that could change it or have it refused:
            # the most common case by far, every branch of a union tried for every conversation item.
            return data
        converted: dict[str, Any] | None = None
        for key, adjust in cls.__json_adjustments__:
            if key in data:
                given = (converted if converted is not None else data)[key]
                value = adjust(given)
                if value is not given:
                    converted = converted if converted is not None else dict(data)
                    converted[key] = value
        data = converted if converted is not None else data
        checker = cls.__conditional_checker__
        if checker is None:
            return data
        # The keywords speak of JSON values: a nested model given as an instance counts as its object.
        if not _JSON_TYPES.issuperset(map(type, data.values())) and any(
            isinstance(value, BaseModel) for value in data.values()
        ):
            data = {k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in data.items()}
        members = cls.__conditional_members__
        if members is not None and members.isdisjoint(data):
            # Most objects hold none of the members the keywords look at (a conversation item none
            # of the training variant's token fields): judged when the class was made.
            if cls.__refusal_without_members__ is not None:
                raise ValueError(cls.__refusal_without_members__)
            return data
        error = _failure(checker, data)
        if error is not None:
            raise ValueError(_described(error) or error.message)
        return data
