"""OTLP/JSON traces read into spans: one `ExportTraceServiceRequest` document, or a Collector file of one per line.

OTLP/JSON writes trace and span ids as hex strings, 64-bit integers (times, token counts) as decimal
strings, and attribute values as `AnyValue` objects. A span the reader cannot use (no ids, a parent
id that is not one) is not dropped: it is kept as an `Unreadable` with its trace id when it has one,
so that the bundle of its trace names it with a gap. A span whose other fields or attribute values
are malformed (`{"intValue": "12x"}`, a name that is not a string) is read with each of them unset,
and keeps what it could not read in `unread`, so that its bundle names each with a gap: a malformed
value is never mistaken for an absent one.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from gym_contract._values import finite, integer, obj, objects, preview
from gym_contract.diagnostics import Diagnostic
from gym_contract.reading._json_parsing import decode_failure, loads, parse_record
from gym_contract.reading._records import RawLine, iter_lines
from gym_contract.reading._sources import open_source

__all__ = ["OtlpInput", "Span", "Unreadable", "read_otlp", "spans_of_request"]

_HEX = frozenset("0123456789abcdef")
_DECIMAL = re.compile(r"-?[0-9]+")
"""A 64-bit integer as OTLP/JSON writes it: ASCII digits only (`str.isdigit` takes `²`, which `int` refuses)."""
_RESOURCE_SPANS = b'"resourceSpans"'
_MAX_VALUE_DEPTH = 16
"""How deep an attribute value's arrays and key-value lists are read; deeper parts are kept as None, and named."""
_STATUS_CODES = {0: 0, 1: 1, 2: 2, "STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_VALUE_KEYS = "stringValue, boolValue, intValue, doubleValue, bytesValue, arrayValue, kvlistValue"

Problems = list[tuple[str, str]]
"""What could not be read, each as (where, why): where is a span field or an attribute's key, with the steps
into its value (`key[2].inner`); a value tells it with where empty, and each holder puts its own step first."""


@dataclass
class Span:
    """One span, whichever input it came from: ids in lower-case hex, times in nanoseconds (None when not set)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start: int | None
    end: int | None
    attributes: dict[str, Any]
    status_code: int = 0
    """0 unset, 1 ok, 2 error, as OTLP numbers them."""
    status_message: str | None = None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    unread: tuple[tuple[str, str], ...] = ()
    """The span's fields and attribute values (of the span and its events) that are malformed, each read as unset:
    (where, why) as `Problems` holds them."""
    resource_unread: tuple[tuple[str, str], ...] = ()
    """The same of its resource's attributes: one tuple, shared by the spans of the resource."""


@dataclass(frozen=True)
class Unreadable:
    """A span that could not be read: where it was (`line N resourceSpans/0/...`) and why."""

    trace_id: str | None
    where: str
    problem: str


@dataclass
class OtlpInput:
    """What an input held: its spans in order, the spans it could not read, and its damaged lines."""

    spans: list[Span] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    damaged: list[Diagnostic] = field(default_factory=list)
    recognised: bool = False
    """Whether the input is OTLP/JSON traces: a request with a `resourceSpans` list, or damaged text that names one."""


def _malformed(problems: Problems, value: Any, why: str) -> None:
    """Tell ``problems`` of a malformed `AnyValue`: where it is, its holder fills in."""
    problems.append(("", f"malformed AnyValue {preview(value)}: {why}"))


def _any_value(value: Any, problems: Problems, depth: int = 0) -> Any:
    """The Python value of an OTLP/JSON `AnyValue`; None for an empty or a malformed one (told to ``problems``).

    JSON null where a value would be is protobuf's "not set", as an empty `AnyValue` is: neither is malformed.
    """
    if not isinstance(value, dict):
        if value is not None:
            _malformed(problems, value, "not an object")
        return None
    if "stringValue" in value:
        return _typed(value, "stringValue", str, "a string", problems)
    if "boolValue" in value:
        return _typed(value, "boolValue", bool, "true or false", problems)
    if "intValue" in value:
        number = value["intValue"]
        whole = _int64(number)
        if whole is None and number is not None:
            _malformed(problems, value, "its intValue is not an integer")
        return whole
    if "doubleValue" in value:
        found = finite(value["doubleValue"])  # an integer too, unless no double holds it
        if found is None and value["doubleValue"] is not None:
            _malformed(problems, value, "its doubleValue is not a finite number")
        return found
    if "bytesValue" in value:
        return _typed(value, "bytesValue", str, "a string", problems)
    if "arrayValue" in value or "kvlistValue" in value:
        return _container(value, problems, depth)
    if value:
        _malformed(problems, value, f"it holds none of {_VALUE_KEYS}")
    return None


def _typed(value: dict[str, Any], key: str, kind: type, what: str, problems: Problems) -> Any:
    """The member ``key`` of an `AnyValue` when it is a ``kind`` or null; None, told to ``problems``, otherwise."""
    found = value[key]
    if isinstance(found, kind) or found is None:
        return found
    _malformed(problems, value, f"its {key} is not {what}")
    return None


def _container(value: dict[str, Any], problems: Problems, depth: int) -> Any:
    """The list of an `arrayValue` or the dict of a `kvlistValue`; None, told to ``problems``, for a malformed one."""
    kind = "arrayValue" if "arrayValue" in value else "kvlistValue"
    if depth >= _MAX_VALUE_DEPTH:
        _malformed(problems, value, f"nested more than {_MAX_VALUE_DEPTH} values deep: not read")
        return None
    inner = value[kind]
    listed = inner.get("values") if isinstance(inner, dict) else None
    if not (isinstance(inner, dict) or inner is None) or not (isinstance(listed, list) or listed is None):
        _malformed(problems, value, f"its {kind} is not an object with a list of values")
        return None
    mark = len(problems)
    if kind == "kvlistValue":
        pairs = attributes_of(listed, problems, depth + 1)
        if len(problems) > mark:
            problems[mark:] = [(f".{where}" if where else where, why) for where, why in problems[mark:]]
        return pairs
    items = []
    for index, item in enumerate(listed or ()):
        items.append(_any_value(item, problems, depth + 1))
        if len(problems) > mark:
            problems[mark:] = [(f"[{index}]{where}", why) for where, why in problems[mark:]]
            mark = len(problems)
    return items


def attributes_of(pairs: Any, problems: Problems, depth: int = 0) -> dict[str, Any]:
    """OTLP `KeyValue` pairs as a dict; a key met again keeps its last value.

    A malformed value reads as None and a pair without a string key is skipped: ``problems`` is told of
    each, where being the attribute's key (empty for a pair without one, or for pairs that are not a list).
    """
    found: dict[str, Any] = {}
    if not isinstance(pairs, list):
        if pairs is not None:
            problems.append(("", f"{preview(pairs)} is not a list of attributes"))
        return found
    for pair in pairs:
        key = pair.get("key") if isinstance(pair, dict) else None
        if not isinstance(key, str):
            problems.append(("", f"{preview(pair)} is not an attribute: no string key"))
            continue
        mark = len(problems)
        found[key] = _any_value(pair.get("value"), problems, depth)
        if len(problems) > mark:
            problems[mark:] = [(key + where, why) for where, why in problems[mark:]]
    return found


def _span_id(value: Any, length: int) -> str | None:
    """A hex id of ``length`` digits, as OTLP/JSON writes it; the base64 of protobuf's JSON mapping is read too."""
    if not isinstance(value, str) or not value:
        return None
    lowered = value.lower()
    if len(lowered) == length and set(lowered) <= _HEX:
        return lowered
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) * 2 == length else None


def _int64(value: Any) -> int | None:
    """A 64-bit integer as OTLP/JSON writes one (decimal digits in a string) or as JSON does; None for anything else,
    and for digits longer than Python converts, which no 64-bit integer is."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        try:
            return int(value)
        except ValueError:
            return None
    return integer(value)


def _nanos(raw: dict[str, Any], name: str, problems: Problems) -> int | None:
    """A time in nanoseconds since the epoch (a decimal string or an integer); None for 0, which OTLP means as unset."""
    value = raw.get(name)
    number = _int64(value)
    if number is not None and number > 0:
        return number
    if number != 0 and value is not None:
        problems.append((name, f"{preview(value)} is not a time in nanoseconds since the epoch"))
    return None


def _text(raw: dict[str, Any], name: str, problems: Problems, where: str | None = None) -> str | None:
    """A string field; any other value but null is unset, and told to ``problems``."""
    value = raw.get(name)
    if isinstance(value, str) or value is None:
        return value
    problems.append((where or name, f"{preview(value)} is not a string"))
    return None


def _status(raw: dict[str, Any], problems: Problems) -> tuple[int, str | None]:
    """The span's status code (0 unset, 1 ok, 2 error) and message; a malformed one is unset."""
    status = raw.get("status")
    if not isinstance(status, dict):
        if status is not None:
            problems.append(("status", f"{preview(status)} is not an object"))
        return 0, None
    code = status.get("code")
    found = _STATUS_CODES.get(code) if isinstance(code, (str, int)) and not isinstance(code, bool) else None
    if found is None and code is not None:
        problems.append(("status.code", f"{preview(code)} is not a status code: 0, 1, 2 or a STATUS_CODE_ name"))
    return found or 0, _text(status, "message", problems, "status.message")


def _events(raw: dict[str, Any], problems: Problems) -> list[tuple[str, dict[str, Any]]]:
    """The span's events as (name, attributes); what cannot be read of one is named by the event."""
    listed = raw.get("events")
    if not isinstance(listed, list):
        if listed is not None:
            problems.append(("events", f"{preview(listed)} is not a list"))
        return []
    events = []
    for index, event in enumerate(listed):
        if not isinstance(event, dict):
            problems.append((f"event {index}", f"{preview(event)} is not an object"))
            continue
        name = _text(event, "name", problems, f"the name of event {index}") or ""
        mark = len(problems)
        events.append((name, attributes_of(event.get("attributes"), problems)))
        if len(problems) > mark:
            held_by = f"its {name} event" if name else f"event {index}"
            problems[mark:] = [(f"{where or 'the attributes'} of {held_by}", why) for where, why in problems[mark:]]
    return events


def _span(raw: dict[str, Any], resource: dict[str, Any], resource_unread: tuple[tuple[str, str], ...]) -> Span | str:
    """The span of one OTLP/JSON span object, or why it cannot be one."""
    trace_id, span_id = _span_id(raw.get("traceId"), 32), _span_id(raw.get("spanId"), 16)
    if trace_id is None or span_id is None:
        return "a span needs a traceId of 32 and a spanId of 16 hex digits"
    parent = raw.get("parentSpanId")
    parent_id = _span_id(parent, 16) if parent not in (None, "") else None
    if parent not in (None, "") and parent_id is None:
        return "its parentSpanId is not 16 hex digits"
    unread: Problems = []
    attributes = attributes_of(raw.get("attributes"), unread)
    if unread:
        unread[:] = [(where or "attributes", why) for where, why in unread]
    code, message = _status(raw, unread)
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=_text(raw, "name", unread) or "",
        start=_nanos(raw, "startTimeUnixNano", unread),
        end=_nanos(raw, "endTimeUnixNano", unread),
        attributes=attributes,
        status_code=code,
        status_message=message,
        events=_events(raw, unread),
        resource=resource,
        # The empty tuple is a single object: a well-formed span keeps no more objects alive than before, which
        # the garbage collector's full passes over a large input would otherwise pay for.
        unread=tuple(unread),
        resource_unread=resource_unread,
    )


def spans_of_request(request: Any, where: str, into: OtlpInput) -> None:
    """Add the spans of one `ExportTraceServiceRequest` (a JSON object) to ``into``; ``where`` names it in problems."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        into.unreadable.append(Unreadable(None, where, "not an ExportTraceServiceRequest: no resourceSpans list"))
        return
    into.recognised = True
    for r, resource_spans in enumerate(request["resourceSpans"]):
        resource_spans = obj(resource_spans) or {}
        problems: Problems = []
        resource = attributes_of((obj(resource_spans.get("resource")) or {}).get("attributes"), problems)
        resource_unread = tuple((where or "attributes", why) for where, why in problems)
        for s, scope_spans in enumerate(objects(resource_spans.get("scopeSpans"))):
            listed = scope_spans.get("spans")
            for n, raw in enumerate(listed if isinstance(listed, list) else []):
                span = _span(raw, resource, resource_unread) if isinstance(raw, dict) else "a span is a JSON object"
                if isinstance(span, Span):
                    into.spans.append(span)
                else:
                    trace = _span_id(raw.get("traceId"), 32) if isinstance(raw, dict) else None
                    at = f"{where} resourceSpans/{r}/scopeSpans/{s}/spans/{n}"
                    into.unreadable.append(Unreadable(trace, at, span))


def _lines(path: str) -> Iterator[RawLine | Diagnostic]:
    with open_source(path) as source:
        for raw in iter_lines(source):
            yield raw if isinstance(raw, RawLine) else raw.at(source=source.name)


def read_otlp(path: str) -> OtlpInput:
    """The spans of an OTLP/JSON file (`-` for stdin; gzip and zstd too).

    The input is one JSON document (an `ExportTraceServiceRequest`, or an array of them), as
    `gym-contract export otel` writes it, or JSONL of one request per line, as the OpenTelemetry
    Collector's file exporter writes it; which one is told from the content. A damaged line of a
    JSONL file is reported with its number and the other lines are read. Raises `InputUnreadable`
    when the input cannot be opened.
    """
    read = OtlpInput()
    name = "<stdin>" if path == "-" else path
    lines = list(_lines(path))
    raws = [line for line in lines if isinstance(line, RawLine)]
    read.damaged += [line for line in lines if isinstance(line, Diagnostic)]
    # Damaged traces are still traces: text that names the request's one key is read as OTLP, damage and all.
    read.recognised = any(_RESOURCE_SPANS in raw.data for raw in raws)
    parsed = [(raw, parse_record(raw.data)) for raw in raws]
    if all(isinstance(record, dict) for _, record in parsed):  # JSONL, or a document on one line
        for raw, record in parsed:
            spans_of_request(record, f"line {raw.number}", read)
        return read
    whole = b"\n".join(raw.data for raw in raws)
    try:
        document = loads(whole)
    except orjson.JSONDecodeError as error:
        if any(isinstance(record, dict) and "resourceSpans" in record for _, record in parsed):
            for raw, record in parsed:  # JSONL with damaged lines: the others are read
                if isinstance(record, Diagnostic):
                    read.damaged.append(record.at(line=raw.number, source=name))
                else:
                    spans_of_request(record, f"line {raw.number}", read)
            return read
        diagnostic, line = decode_failure(whole, error)
        read.damaged.append(diagnostic.at(line=raws[min(line, len(raws)) - 1].number, source=name))
        return read
    for index, request in enumerate(document if isinstance(document, list) else [document]):
        spans_of_request(request, f"request {index}" if isinstance(document, list) else "document", read)
    return read
