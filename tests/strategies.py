"""Hypothesis strategies for hostile input: any JSON value anywhere, and example records broken at random."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract._values import preview
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS
from tests.support import REPO

HUGE_INTEGERS = [2**63, 2**64, -(2**63) - 1, 10**30, 10**400, 10**4299]
"""Integers past every fixed width."""


def _longer_than_python_writes() -> int:
    return 10**5000


def huge_integers() -> st.SearchStrategy[int]:
    # Built, not sampled: Hypothesis writes sampled values out, and Python refuses to write this one.
    return st.one_of(st.sampled_from(HUGE_INTEGERS), st.builds(_longer_than_python_writes))


@cache
def contract_keys() -> tuple[str, ...]:
    """Every property name the bundled schemas know, the attachment keys, and the rollout id keys."""
    names: set[str] = {*ROLLOUT_ATTACHMENTS, "_ng_rollout_id", "_ng_task_index", "_ng_rollout_index"}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    for name in schemas.names():
        walk(schemas.get(name))
    return tuple(sorted(names))


@cache
def _keys() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(contract_keys()), st.text(max_size=8))


@cache
def scalars(*, surrogates: bool = True) -> st.SearchStrategy[Any]:
    """Leaves: null, booleans, integers of any size, finite floats, and text (lone surrogates too)."""
    alphabet = st.characters(codec=None) if surrogates else st.characters(codec="utf-8")
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        huge_integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(alphabet=alphabet, max_size=12),
        st.sampled_from(contract_keys()),
    )


class DeepList(list):  # type: ignore[type-arg]
    """The outermost array of a deeply nested value; Hypothesis prints it as a summary.

    Its pretty printer recurses, so a failing example holding a value nested thousands of levels
    would be lost to a RecursionError instead of being reported.
    """

    depth: int = 0

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        leaf: Any = self
        for _ in range(self.depth):  # down the single-child chain ``nested`` built
            if isinstance(leaf, list) and len(leaf) == 1:
                leaf = leaf[0]
            elif isinstance(leaf, dict) and list(leaf) == ["content"]:
                leaf = leaf["content"]
            else:
                break
        printer.text(f"nested({preview(leaf)}, {self.depth})")


def nested(value: Any, depth: int) -> Any:
    """``value`` inside ``depth`` alternating arrays and objects."""
    for level in range(depth):
        value = [value] if level % 2 else {"content": value}
    if isinstance(value, list) and depth > 100:
        value = DeepList(value)
        value.depth = depth
    return value


@cache  # a strategy is built and checked once, not on every draw
def json_values(*, max_leaves: int = 30, surrogates: bool = True) -> st.SearchStrategy[Any]:
    """Any JSON value: contract keys at random places, huge integers, and now and then very deep nesting."""
    base = st.recursive(
        scalars(surrogates=surrogates),
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_keys(), children, max_size=5)),
        max_leaves=max_leaves,
    )
    deep = st.builds(nested, base, st.sampled_from([300, 1100, 3000]))
    return st.one_of(base, base, base, deep)


# ------------------------------------------------------------------------------------ example records


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


@cache
def example_records() -> tuple[dict[str, Any], ...]:
    """Every record shipped with the repository: example rollouts, capture lines, conformance data."""
    found: list[dict[str, Any]] = []
    for path in sorted((REPO / "examples").rglob("*.jsonl")):
        found.extend(_jsonl(path))
    for path in sorted((REPO / "tests" / "conformance").glob("*.json")):
        if path.name == "suite.schema.json":
            continue
        for group in json.loads(path.read_text()):
            found.extend(test["data"] for test in group["tests"] if isinstance(test.get("data"), dict))
    return tuple(found)


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value inside ``value`` (not the value itself), bounded in depth."""
    if len(path) > 12:
        return
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield (*path, key)
        yield from _places(child, (*path, key))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-like data without recursion: a retyped value may nest thousands of levels."""
    copied: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, copied, 0)]
    while stack:
        item, holder, slot = stack.pop()
        if isinstance(item, dict):
            holder[slot] = fresh = dict(item)
            stack.extend((child, fresh, key) for key, child in item.items())
        elif isinstance(item, list):
            holder[slot] = fresh = type(item)(item)  # a DeepList stays one, to be printed as a summary
            if isinstance(item, DeepList):
                fresh.depth = item.depth
            stack.extend((child, fresh, index) for index, child in enumerate(item))
        else:
            holder[slot] = item
    return copied[0]


MUTATIONS = ("delete", "retype", "swap", "duplicate", "wrap_string", "add_key")


@st.composite
def mutated_records(draw: st.DrawFn, records: tuple[dict[str, Any], ...] | None = None) -> dict[str, Any]:
    """An example record broken one to three times: a key deleted, a value of another type, two values
    swapped between keys, a list item repeated, a string turned into a list or an object, a contract
    key added somewhere with any value."""
    record = json_copy(draw(st.sampled_from(records or example_records())))
    for _ in range(draw(st.integers(1, 3))):
        places = list(_places(record))
        if not places:
            break
        path = draw(st.sampled_from(places))
        parent, key = _at(record, path[:-1]), path[-1]
        mutation = draw(st.sampled_from(MUTATIONS))
        if mutation == "delete" and isinstance(parent, dict):
            del parent[key]
        elif mutation == "retype":
            parent[key] = draw(json_values(max_leaves=5))
        elif mutation == "swap":
            other = draw(st.sampled_from(places))
            if other[: len(path)] != path and path[: len(other)] != other:
                other_parent, other_key = _at(record, other[:-1]), other[-1]
                parent[key], other_parent[other_key] = other_parent[other_key], parent[key]
        elif mutation == "duplicate" and isinstance(parent, list):
            parent.insert(key, json_copy(parent[key]))
        elif mutation == "wrap_string" and isinstance(parent[key], str):
            parent[key] = draw(st.sampled_from([[parent[key]], {"text": parent[key]}, {"type": parent[key]}]))
        else:
            target = _at(record, path) if isinstance(_at(record, path), dict) else record
            target[draw(st.sampled_from(contract_keys()))] = draw(json_values(max_leaves=5))
    return record


@cache
def hostile_records() -> st.SearchStrategy[Any]:
    """What the laws feed every entry point: broken example records, and any JSON value at all."""
    return st.one_of(mutated_records(), mutated_records(), json_values())


# ------------------------------------------------------------------------------------------ files


def as_line(value: Any) -> bytes:
    """``value`` as one line of a JSONL file, whatever it holds: any depth, integers of any size; a
    lone surrogate is written as the bytes it would be, which no reader takes as UTF-8."""
    from gym_contract._json_writing import python_text

    return python_text(value).encode("utf-8", "surrogatepass")


def damaged_lines() -> st.SearchStrategy[bytes]:
    """Lines no reader takes whole: any bytes, and JSON cut short."""
    cut = st.builds(
        lambda line, keep: line[: max(1, len(line) * keep // 100)],
        st.builds(as_line, json_values()),
        st.integers(1, 99),
    )
    return st.one_of(st.binary(max_size=24).filter(lambda line: b"\n" not in line and b"\r" not in line), cut)


def jsonl(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def file_lines(values: st.SearchStrategy[Any], max_size: int = 6) -> st.SearchStrategy[list[bytes]]:
    """The lines of a JSONL file: ``values`` written as JSON, now and then a damaged line among them."""
    return st.lists(
        st.one_of(st.builds(as_line, values), st.builds(as_line, values), damaged_lines()), max_size=max_size
    )


# ------------------------------------------------------------------------------------- strict text
# Strings written with escapes, lone surrogates among them, beside numbers no fast parser holds: the
# verdict on a line must not depend on a number elsewhere in it.

OUT_OF_RANGE_NUMBERS = (
    b"1e999",
    b"-1E+400",
    b"2.5e308",
    b"9" * 400,
    b"-" + b"7" * 4301,  # more digits than Python converts
    b"123456789012345678901234567890",  # beyond 64 bits, within a double
)
"""Number tokens orjson refuses or turns into floats, so that another parser reads the line."""


def _escaped(match: re.Match[str]) -> str:
    units = match[0].encode("utf-16-le", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'little'):04x}" for i in range(0, len(units), 2))


def escaped_line(value: Any) -> bytes:
    """``value`` as one line of JSON with every character beyond ASCII written as a `\\uXXXX` escape, so
    that a lone surrogate is an escape without its pair rather than bytes that are not UTF-8."""
    from gym_contract._json_writing import python_text

    return re.sub(r"[^\x00-\x7f]", _escaped, python_text(value)).encode("ascii")


_SURROGATE_TEXT = st.text(
    alphabet=st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.characters(codec=None)),
    max_size=6,
)


@st.composite
def lines_beside_a_number(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A rollout line holding strings with lone surrogates and escapes (as escapes, or as the bytes they would
    be) and, before or after them, a number out of every fast parser's range; and the same line with that
    number written as `0` and spaces, so that every other byte keeps its place."""
    values = draw(st.lists(st.one_of(_SURROGATE_TEXT, scalars()), min_size=1, max_size=4))
    keys = draw(st.lists(_SURROGATE_TEXT, min_size=len(values), max_size=len(values)))
    value: Any = dict(zip(keys, values, strict=False)) if draw(st.booleans()) else values
    body = escaped_line(value) if draw(st.booleans()) else as_line(value)
    number = draw(st.sampled_from(OUT_OF_RANGE_NUMBERS))
    placeholder = b"0" + b" " * (len(number) - 1)
    first = draw(st.booleans())

    def line(token: bytes) -> bytes:
        fields = [b'"n":' + token, b'"v":' + body] if first else [b'"v":' + body, b'"n":' + token]
        return b'{"_ng_task_index":1,"_ng_rollout_index":0,' + b",".join(fields) + b"}"

    return line(number), line(placeholder)


# ------------------------------------------------------------------------------------ compressed streams
# Every legal framing of a gzip or zstd stream: several gzip members, several zstd frames with or without
# their content size, skippable frames (what pzstd writes first) before, between and after them.

FRAMINGS = (
    "gzip",
    "gzip members",
    "zstd",
    "zstd frames",
    "zstd without content size",
    "skippable first",
    "skippable between",
    "skippable last",
    "only skippable",
)


def skippable_frame(payload: bytes, variant: int = 0) -> bytes:
    """A zstd skippable frame (magic 0x184D2A50 + ``variant``) holding ``payload``, which readers skip."""
    return (0x184D2A50 + variant).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    return [data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)]


def _streamed(compressor: Any, piece: bytes) -> bytes:
    """One frame written as a stream is written: without its content size in the header."""
    stream = compressor.compressobj()
    return bytes(stream.compress(piece) + stream.flush())


def compress_as(framing: str, data: bytes, cuts: list[int], payload: bytes = b"", variant: int = 0) -> bytes:
    """``data`` compressed in ``framing`` (see `FRAMINGS`), cut into members or frames at ``cuts``; for
    "only skippable", frames that hold no data at all (``data`` is then not in the stream)."""
    import gzip

    import zstandard

    with_size = zstandard.ZstdCompressor()
    frames = [with_size.compress(piece) for piece in _pieces(data, cuts)]
    skip = skippable_frame(payload, variant)
    if framing == "gzip":
        return gzip.compress(data)
    if framing == "gzip members":
        return b"".join(gzip.compress(piece) for piece in _pieces(data, cuts))
    if framing == "zstd":
        return with_size.compress(data)
    if framing == "zstd frames":
        return b"".join(frames)
    if framing == "zstd without content size":
        without = zstandard.ZstdCompressor(write_content_size=False)
        return b"".join(_streamed(without, piece) for piece in _pieces(data, cuts))
    if framing == "skippable first":
        return skip + b"".join(frames)
    if framing == "skippable between":
        return skip + skip.join(frames) + skip
    if framing == "skippable last":
        return b"".join(frames) + skip
    return skip + skip


@st.composite
def compressed_streams(draw: st.DrawFn) -> tuple[str, bytes, bytes]:
    """A framing, a stream of JSONL in it, and the bytes every reader must get from the stream."""
    values = st.dictionaries(st.sampled_from(["a", "b", "kind"]), scalars(surrogates=False))
    data = jsonl([as_line(value) for value in draw(st.lists(values, max_size=8))])
    framing = draw(st.sampled_from(FRAMINGS))
    cuts = draw(st.lists(st.integers(0, max(len(data), 1)), max_size=4))
    # Now and then a skippable frame larger than one read of the reader, so that it spans several.
    payload = draw(st.one_of(st.binary(max_size=32), st.just(b"\x00" * 40_000)))
    compressed = compress_as(framing, data, cuts, payload, draw(st.integers(0, 15)))
    return framing, compressed, b"" if framing == "only skippable" else data
