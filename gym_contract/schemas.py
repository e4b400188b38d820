"""The bundled JSON Schemas by name, and validators for them that never leave this machine."""

from __future__ import annotations

import copy
import json
import os
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

from gym_contract._json_pointer import resolve
from gym_contract._vocabulary import CONTRACT_VERSION

__all__ = [
    "CONTRACT_VERSION",
    "REPORT_SCHEMA",
    "SCHEMA_VERSION",
    "RemoteReferenceError",
    "UnknownSchemaError",
    "directory",
    "gap_codes",
    "get",
    "names",
    "registry",
    "report_schema",
    "schema_id",
    "source",
    "validator",
]

SCHEMA_VERSION = "v1"

# Named schemas that live inside another file's $defs: name -> (file stem, JSON Pointer).
_FRAGMENTS = {
    "conversation_item": ("agent_invocation", "/$defs/ConversationItem"),
    "model_call_capture": ("model_call_record", "/$defs/ModelCallCapture"),
    "trajectory_turn": ("trajectory", "/$defs/TrajectoryTurn"),
    "trajectory_model_call": ("trajectory", "/$defs/TrajectoryModelCall"),
    "trajectory_tool_call": ("trajectory", "/$defs/TrajectoryToolCall"),
}
_SUFFIX = ".schema.json"


class UnknownSchemaError(KeyError):
    """No bundled schema has that name."""

    def __str__(self) -> str:
        return f"no bundled schema named {self.args[0]!r}; known: {', '.join(names())}"


class RemoteReferenceError(LookupError):
    """A ``$ref`` pointed outside the bundled schemas: schemas are never fetched from the network."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"refused to fetch {uri!r}: only the bundled gym-contract schemas are resolved")
        self.uri = uri


def _plain(*parts: str) -> str | None:
    """The path of a file or folder of the schemas, inside the wheel, else in the source checkout; None in a zip.

    Plain paths first: `importlib.resources`, and even `pathlib`, cost more to import than reading
    every schema takes, and a run of valid records needs the schemas only for `_digest`.
    """
    package = os.path.dirname(os.path.realpath(__file__))
    for place in (os.path.join(package, "_schemas", *parts), os.path.join(os.path.dirname(package), "schemas", *parts)):
        if os.path.exists(place):
            return place
    return None


def _bundled(*parts: str) -> Traversable:
    """A file or folder of the schemas: inside the wheel, else in the source checkout."""
    place = _plain(*parts)
    if place is not None:
        from pathlib import Path

        return Path(place)
    from importlib import resources  # a package that is no folder of files (a zip) is reached only this way

    return resources.files("gym_contract").joinpath("_schemas", *parts)


def _read(*parts: str) -> str:
    """The text of a file of the schemas (see `_bundled`)."""
    place = _plain(*parts)
    if place is None:
        return _bundled(*parts).read_text(encoding="utf-8")
    with open(place, encoding="utf-8") as file:
        return file.read()


def _schema_files() -> list[tuple[str, bytes]]:
    """The name and bytes of every schema file of this version, by name."""
    folder = _plain(SCHEMA_VERSION)
    if folder is None:
        entries = sorted(_root().iterdir(), key=lambda e: e.name)
        return [(entry.name, entry.read_bytes()) for entry in entries if entry.name.endswith(_SUFFIX)]
    found = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(_SUFFIX):
            with open(os.path.join(folder, name), "rb") as file:
                found.append((name, file.read()))
    return found


def _root() -> Traversable:
    """Folder of the schemas of this version."""
    return _bundled(SCHEMA_VERSION)


def directory() -> str:
    """The folder holding the schema files of this version, as an absolute path (for tools that read files).

    Their `$ref`s are relative to their `$id`s: a tool that cannot be given the schemas by `$id`
    resolves them offline when told that the base URI is the file itself (check-jsonschema's
    `--base-uri file://…/NAME.schema.json`).
    """
    return str(_root())


REPORT_SCHEMA = "validate-report.v1.schema.json"
"""The JSON Schema of `gym-contract validate --format json`, layout 1 (see `report_schema`)."""


def report_schema() -> dict[str, Any]:
    """The JSON Schema of the JSON report `gym-contract validate --format json` writes (a fresh copy)."""
    return dict(json.loads(_read("reports", REPORT_SCHEMA)))


@cache
def _documents() -> dict[str, dict[str, Any]]:
    """Every schema document of this version by file stem, read once."""
    return {name.removesuffix(_SUFFIX): json.loads(data.decode("utf-8")) for name, data in _schema_files()}


def _digest() -> str:
    """A CRC-32 of the schema files of this version as they are written, line ends taken as LF.

    What code generated from the schemas records, so that it can tell when they changed since. Not
    a cryptographic hash, which would cost more to import than the schemas take to read: it tells
    an edit, not a forgery.
    """
    import zlib

    crc = 0
    for name, data in _schema_files():
        crc = zlib.crc32(name.encode() + b"\0" + data.replace(b"\r\n", b"\n") + b"\0", crc)
    return f"{crc:08x}"


def names() -> list[str]:
    """Names of the bundled schemas, sorted: one per file, plus the named fragments."""
    return sorted({*_documents(), *_FRAGMENTS})


def _locate(name: str) -> tuple[str, str]:
    if name in _FRAGMENTS:
        return _FRAGMENTS[name]
    if name in _documents():
        return name, ""
    raise UnknownSchemaError(name)


def get(name: str) -> dict[str, Any]:
    """A copy of the named schema (a fragment keeps its `$ref`s relative to its file)."""
    stem, pointer = _locate(name)
    return copy.deepcopy(resolve(_documents()[stem], pointer))


def schema_id(name: str) -> str:
    """The URI that identifies the named schema: its file's `$id`, plus a fragment for a `$defs` entry."""
    stem, pointer = _locate(name)
    base = _documents()[stem]["$id"]
    return f"{base}#{pointer}" if pointer else base


def source(name: str) -> str:
    """The schema file's text as shipped, for printing or serving."""
    stem, _ = _locate(name)
    return _read(SCHEMA_VERSION, f"{stem}{_SUFFIX}")


def _refuse_remote(uri: str) -> Resource[Any]:
    raise RemoteReferenceError(uri)


@cache
def _documents_by_id() -> dict[str, dict[str, Any]]:
    return {document["$id"]: document for document in _documents().values()}


def lookup(reference: str, base: str = "") -> tuple[Any, str]:
    """The bundled (sub)schema a ``$ref`` names, read from the document whose URI is ``base``, and its document's URI.

    It finds what `registry()` finds, for the references the bundled schemas make (a document's URI,
    with a JSON Pointer as fragment), without importing `referencing`, which a run of valid records
    would import for this alone; anything else raises `RemoteReferenceError`.
    """
    from urllib.parse import unquote, urljoin

    uri, _, fragment = urljoin(base, reference).partition("#")
    document = _documents_by_id().get(uri)
    fragment = unquote(fragment)
    if document is None or (fragment and not fragment.startswith("/")):
        raise RemoteReferenceError(urljoin(base, reference))
    try:
        return resolve(document, fragment), uri
    except (KeyError, IndexError, TypeError):
        raise RemoteReferenceError(urljoin(base, reference)) from None


@cache
def registry() -> Registry[Any]:
    """A `referencing` registry holding every bundled schema under its `$id`; anything else is refused."""
    from referencing import Registry, Resource

    resources_by_id = [(doc["$id"], Resource.from_contents(doc)) for doc in _documents().values()]
    return Registry(retrieve=_refuse_remote).with_resources(resources_by_id)  # type: ignore[call-arg]


@cache
def validator(name: str) -> Draft202012Validator:
    """A draft 2020-12 validator for the named schema, every `$ref` resolved from the bundle."""
    # Imported here: checking a valid record never needs it, and it takes long to import.
    from jsonschema import Draft202012Validator

    return Draft202012Validator({"$ref": schema_id(name)}, registry=registry())


@cache
def gap_codes() -> dict[str, dict[str, Any]]:
    """The gap-code registry (`gap_codes.json`) by code."""
    document = json.loads(_read(SCHEMA_VERSION, "gap_codes.json"))
    return {entry["code"]: entry for entry in document["codes"]}
