"""Hypothesis strategies for hostile input: any JSON value anywhere, and example records broken at random."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract._deep_values import REPR_LEVELS
from gym_contract._limits import MAX_DEPTH
from gym_contract._values import NumberText, preview
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS
from tests.support import REPO

HUGE_INTEGERS = [
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    10**30,
    10**400,
    10**4299,
    -(10**4299),
]
"""Integers at and past every fixed width, up to the most digits Python writes as text (4,300)."""


def _longer_than_python_writes(digits: int) -> int:
    return 10 ** (digits - 1)


def huge_integers() -> st.SearchStrategy[int]:
    # Built, not sampled: Hypothesis writes sampled values out, and Python refuses to write these.
    past = st.builds(_longer_than_python_writes, st.sampled_from([4301, 4302, 5000]))
    return st.one_of(st.sampled_from(HUGE_INTEGERS), past)


OUT_OF_RANGE_NUMBERS = ("1e999", "-1e400", "1e309", "2.5e-400", "1" * 4301, "-" + "9" * 5000)
"""Numbers as the readers keep them when Python cannot hold them (`NumberText`): past a double's
range, and integers of more digits than Python converts."""


def out_of_range_numbers() -> st.SearchStrategy[NumberText]:
    return st.builds(NumberText, st.sampled_from(OUT_OF_RANGE_NUMBERS))


TRICKY_TEXT = (
    '"',
    "\\",
    "\x00",
    "\x1f",
    "\u2028",
    "\ud800",
    "\udfff",
    "\ud800\udc00",
    "\\u0000",
    "\\ud800",
    "é",
    "\U0001f600",
)
"""Strings with escapes, control characters, line separators, lone surrogates (and two that look like a pair)."""

HARNESS_KEYS = (
    "subtype",
    "is_error",
    "result",
    "errors",
    "api_error_status",
    "terminal_reason",
    "error",
    "error_status",
    "claude_code_version",
    "parent_tool_use_id",
    "info",
    "name",
    "data",
    "statusCode",
    "responseBody",
    "isRetryable",
)
"""Keys of the harness artifacts the outcome classifiers read, so that generated values reach them too."""


@cache
def contract_keys() -> tuple[str, ...]:
    """Every property name the bundled schemas know, the attachment keys, and the rollout id keys."""
    names: set[str] = {*ROLLOUT_ATTACHMENTS, *HARNESS_KEYS, "_ng_rollout_id", "_ng_task_index", "_ng_rollout_index"}

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
def _keys(*, surrogates: bool = True) -> st.SearchStrategy[str]:
    alphabet = st.characters(codec=None) if surrogates else st.characters(codec="utf-8")
    tricky = [text for text in TRICKY_TEXT if surrogates or not _has_surrogate(text)]
    return st.one_of(st.sampled_from(contract_keys()), st.text(alphabet=alphabet, max_size=8), st.sampled_from(tricky))


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(character) <= 0xDFFF for character in text)


@cache
def scalars(*, surrogates: bool = True) -> st.SearchStrategy[Any]:
    """Leaves: null, booleans, integers of any size, numbers Python cannot hold, finite floats (to the
    largest), and text (with escapes, control characters and, unless told not to, lone surrogates)."""
    alphabet = st.characters(codec=None) if surrogates else st.characters(codec="utf-8")
    tricky = [text for text in TRICKY_TEXT if surrogates or not _has_surrogate(text)]
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        huge_integers(),
        out_of_range_numbers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(alphabet=alphabet, max_size=12),
        st.sampled_from(tricky),
        st.sampled_from(contract_keys()),
    )


class DeepList(list):  # type: ignore[type-arg]
    """The outermost array of a deeply nested value; Hypothesis prints it as a summary.

    Its pretty printer recurses, so a failing example holding a value nested thousands of levels
    would be lost to a RecursionError instead of being reported.
    """

    depth: int = 0
    style: str = "mixed"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        leaf: Any = self
        for _ in range(self.depth):  # down the single-child chain ``nested`` built
            if isinstance(leaf, list) and len(leaf) == 1:
                leaf = leaf[0]
            elif isinstance(leaf, dict) and list(leaf) == ["content"]:
                leaf = leaf["content"]
            else:
                break
        printer.text(f"nested({preview(leaf)}, {self.depth}, {self.style!r})")


def nested(value: Any, depth: int, style: str = "mixed") -> Any:
    """``value`` inside ``depth`` arrays and objects: in turn (``mixed``), or all objects, or all arrays
    (``objects``, ``arrays``), the outermost an array either way."""
    for level in range(depth):
        as_object = style == "objects" or (style == "mixed" and level % 2 == 0)
        value = {"content": value} if as_object and level < depth - 1 else [value]
    if isinstance(value, list) and depth > 100:
        value = DeepList(value)
        value.depth, value.style = depth, style
    return value


RECURSION_LIMIT = sys.getrecursionlimit()
"""The interpreter's recursion limit as the tests start (Hypothesis raises it while it runs a test)."""


@contextlib.contextmanager
def interpreters_own_stack() -> Iterator[None]:
    """The interpreter's recursion limit as a program has it, for the body of a law: Hypothesis raises
    the limit while it runs a test, which would hide a walk that recurses once per level of nesting."""
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(raised)


def nesting_depths() -> st.SearchStrategy[int]:
    """Depths near every limit a walk over values can meet, each from just below to just above it: the
    254 levels orjson writes (and `repr` may recurse through a view), the interpreter's recursion limit,
    the readers' 1,024 (a value drawn lands up to a dozen levels down in a record), and far past them."""
    limits = (REPR_LEVELS, RECURSION_LIMIT, MAX_DEPTH)
    near = st.sampled_from(limits).flatmap(lambda limit: st.integers(limit - 16, limit + 2))
    return st.one_of(near, st.sampled_from([480, 600, 990, 1020, 1100, 3000]))


@cache  # a strategy is built and checked once, not on every draw
def json_values(*, max_leaves: int = 30, surrogates: bool = True) -> st.SearchStrategy[Any]:
    """Any JSON value: contract keys at random places, numbers at and past every range, tricky text,
    and now and then nesting near every limit."""
    base = st.recursive(
        scalars(surrogates=surrogates),
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(_keys(surrogates=surrogates), children, max_size=5)
        ),
        max_leaves=max_leaves,
    )
    deep = st.builds(nested, base, nesting_depths(), st.sampled_from(["mixed", "objects", "arrays"]))
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
                fresh.depth, fresh.style = item.depth, item.style
            stack.extend((child, fresh, index) for index, child in enumerate(item))
        else:
            holder[slot] = item
    return copied[0]


MUTATIONS = ("delete", "retype", "swap", "duplicate", "wrap_string", "add_key", "deepen")


def _by_pattern(places: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One place per field: the first path of each shape (list positions aside), so that a field a record
    holds once (a gap's detail) is drawn as often as one it holds a hundred times (a message's text)."""
    kept: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for path in places:
        kept.setdefault(tuple("#" if isinstance(part, int) else part for part in path), path)
    return list(kept.values())


@st.composite
def mutated_records(draw: st.DrawFn, records: tuple[dict[str, Any], ...] | None = None) -> dict[str, Any]:
    """An example record broken one to three times: a key deleted, a value of another type, two values
    swapped between keys, a list item repeated, a string turned into a list or an object, a contract
    key added somewhere with any value, a value put inside arrays and objects nested near a limit."""
    record = json_copy(draw(st.sampled_from(records or example_records())))
    for _ in range(draw(st.integers(1, 3))):
        places = list(_places(record))
        if not places:
            break
        path = draw(st.sampled_from(_by_pattern(places)))
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
        elif mutation == "deepen":
            style = draw(st.sampled_from(["mixed", "objects", "arrays"]))
            parent[key] = nested(parent[key], draw(nesting_depths()), style)
        else:
            target = _at(record, path) if isinstance(_at(record, path), dict) else record
            target[draw(st.sampled_from(contract_keys()))] = draw(json_values(max_leaves=5))
    return record


NON_FINITE = (float("nan"), float("inf"), float("-inf"))
"""Python floats no JSON text holds: a caller's own values may."""


@st.composite
def records_holding_non_finite(draw: st.DrawFn) -> dict[str, Any]:
    """A broken example record with NaN or an infinity put in one of its places."""
    record = draw(mutated_records())
    places = [path for path in _places(record) if not isinstance(_at(record, path), (dict, list))]
    if places:
        path = draw(st.sampled_from(places))
        _at(record, path[:-1])[path[-1]] = draw(st.sampled_from(NON_FINITE))
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


# gzip, zstd, and a zstd skippable frame (what pzstd writes first): 0x184D2A50 to 0x184D2A5F, little-endian.
COMPRESSION_MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd", *(bytes([low, 0x2A, 0x4D, 0x18]) for low in range(0x50, 0x60)))
"""First bytes that make a reader take a file as the compressed stream they announce, whatever its name."""


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

OUT_OF_RANGE_NUMBER_TOKENS = (
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
    number = draw(st.sampled_from(OUT_OF_RANGE_NUMBER_TOKENS))
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
