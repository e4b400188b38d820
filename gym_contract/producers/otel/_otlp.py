"""OTLP/JSON traces read into spans: one `ExportTraceServiceRequest` document, or a Collector file of one per line.

OTLP/JSON writes trace and span ids as hex strings, 64-bit integers (times, token counts) as decimal
strings, and attribute values as `AnyValue` objects. A span the reader cannot use (no ids, a field
of the wrong type) is not dropped: it is kept as an `Unreadable` with its trace id when it has one,
so that the bundle of its trace names it with a gap.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from gym_contract._values import finite, integer, obj, objects, text
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
"""How deep an attribute value's arrays and key-value lists are read; deeper parts are kept as None."""


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


def _any_value(value: Any, depth: int = 0) -> Any:
    """The Python value of an OTLP/JSON `AnyValue`; None for an empty or unknown one."""
    value = obj(value) or {}
    if "stringValue" in value:
        return text(value["stringValue"])
    if "boolValue" in value:
        return value["boolValue"] if isinstance(value["boolValue"], bool) else None
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, str) and _DECIMAL.fullmatch(number):
            return _decimal(number)
        return integer(number)
    if "doubleValue" in value:
        return finite(value["doubleValue"])  # an integer too, unless no double holds it
    if "bytesValue" in value:
        return text(value["bytesValue"])
    if depth >= _MAX_VALUE_DEPTH:
        return None
    if "arrayValue" in value:
        return [_any_value(item, depth + 1) for item in objects((obj(value["arrayValue"]) or {}).get("values"))]
    if "kvlistValue" in value:
        return attributes_of((obj(value["kvlistValue"]) or {}).get("values"), depth + 1)
    return None


def attributes_of(pairs: Any, depth: int = 0) -> dict[str, Any]:
    """OTLP `KeyValue` pairs as a dict; a pair without a string key is skipped, a key met again keeps its last value."""
    return {
        pair["key"]: _any_value(pair.get("value"), depth) for pair in objects(pairs) if isinstance(pair.get("key"), str)
    }


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


def _decimal(digits: str) -> int | None:
    """The integer of a run of decimal digits; None for one longer than Python converts, which no 64-bit one is."""
    try:
        return int(digits)
    except ValueError:
        return None


def _nanos(value: Any) -> int | None:
    """A time in nanoseconds since the epoch (a decimal string or an integer); None for 0, which OTLP means as unset."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        value = _decimal(value)
    number = integer(value)
    return number if number is not None and number > 0 else None


def _span(raw: dict[str, Any], resource: dict[str, Any]) -> Span | str:
    """The span of one OTLP/JSON span object, or why it cannot be one."""
    trace_id, span_id = _span_id(raw.get("traceId"), 32), _span_id(raw.get("spanId"), 16)
    if trace_id is None or span_id is None:
        return "a span needs a traceId of 32 and a spanId of 16 hex digits"
    parent = raw.get("parentSpanId")
    parent_id = _span_id(parent, 16) if parent not in (None, "") else None
    if parent not in (None, "") and parent_id is None:
        return "its parentSpanId is not 16 hex digits"
    status = obj(raw.get("status")) or {}
    code = status.get("code", 0)
    codes = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
    code = codes.get(code, code) if isinstance(code, str) else code
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=text(raw.get("name")) or "",
        start=_nanos(raw.get("startTimeUnixNano")),
        end=_nanos(raw.get("endTimeUnixNano")),
        attributes=attributes_of(raw.get("attributes")),
        status_code=code if code in (0, 1, 2) else 0,
        status_message=text(status.get("message")),
        events=[
            (text(event.get("name")) or "", attributes_of(event.get("attributes")))
            for event in objects(raw.get("events"))
        ],
        resource=resource,
    )


def spans_of_request(request: Any, where: str, into: OtlpInput) -> None:
    """Add the spans of one `ExportTraceServiceRequest` (a JSON object) to ``into``; ``where`` names it in problems."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        into.unreadable.append(Unreadable(None, where, "not an ExportTraceServiceRequest: no resourceSpans list"))
        return
    into.recognised = True
    for r, resource_spans in enumerate(request["resourceSpans"]):
        resource_spans = obj(resource_spans) or {}
        resource = attributes_of((obj(resource_spans.get("resource")) or {}).get("attributes"))
        for s, scope_spans in enumerate(objects(resource_spans.get("scopeSpans"))):
            listed = scope_spans.get("spans")
            for n, raw in enumerate(listed if isinstance(listed, list) else []):
                span = _span(raw, resource) if isinstance(raw, dict) else "a span is a JSON object"
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
