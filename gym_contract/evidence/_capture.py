"""Read captured model calls and derive ModelCallRecords, metrics and the ng_model_call_capture attachment."""

from __future__ import annotations

import asyncio
import math
import os
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gym_contract._json_writing import python_text
from gym_contract._limits import max_depth
from gym_contract._values import NumberText, finite, first_text, json_type, obj, objects, preview, text
from gym_contract._vocabulary import CAPTURED_TOKEN_FIELDS, token_count
from gym_contract.diagnostics import Diagnostic
from gym_contract.models import CaptureMetrics, ModelCallRecord, ModelServerRef, ObservationGap
from gym_contract.reading._json_parsing import loads, nesting_problem, parse_record
from gym_contract.reading._records import DEFAULT_MAX_LINE_BYTES, iter_lines
from gym_contract.reading._sources import InputUnreadable, open_source

__all__ = [
    "CAPTURE_SUFFIX",
    "INCOMPLETE_SUFFIX",
    "PAYLOAD_KEYS",
    "Capture",
    "aggregate_metrics",
    "capture_attachment",
    "derive_record",
    "error_category",
    "metrics_diagnostics",
    "read_capture",
    "unrecordable_field",
]

CAPTURE_SUFFIX = ".capture.jsonl"
INCOMPLETE_SUFFIX = ".capture.incomplete"
PAYLOAD_KEYS = frozenset({"request", "response", "request_raw", "response_raw"})
"""Keys of a call dump that hold payloads; `capture_attachment` drops them unless asked to keep them."""

_FILE_NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "._-")
_NO_RECORDS = "model_call_capture_no_records"
_RECORDS_UNREADABLE = "model_call_capture_records_unreadable"
_INCOMPLETE = "model_call_capture_incomplete"
_UNREADABLE = "model_call_capture_unreadable"
# A capture line becomes a call of a rollout record's ng_model_call_capture: it must fit there.
_CAPTURE_LINE_DEPTH = max_depth("capture_exchange")


# --- reading values of unknown shape: anything unexpected reads as "unknown" -------------------------


_count = token_count


def _first_count(*values: object) -> int | None:
    return next((count for count in map(_count, values) if count is not None), None)


def _object(value: object) -> dict[str, Any] | None:
    """An object a record can hold: keys checked, since a Python caller may hand over a dict JSON cannot hold."""
    found = obj(value)
    return found if found is not None and all(isinstance(key, str) for key in found) else None


def _duration(value: object) -> float | None:
    number = finite(value)
    return number if number is not None and number >= 0 else None


def _integer(value: object) -> int | None:
    # JSON has one number type: 200.0 is the integer 200, as JSON Schema and the reference both read it.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _model_ref(value: object) -> dict[str, Any] | None:
    ref = _object(value)
    if ref is None or ref.get("type") != "responses_api_models" or not isinstance(ref.get("name"), str):
        return None
    try:  # its other members are taken as they are: a key that is not valid Unicode makes it no reference
        ModelServerRef.model_validate(ref)
    except ValidationError:
        return None
    return ref


# --- one exchange -> one record (CONTRACT 3.5) -------------------------------------------------------


def error_category(status_code: int | None, exception: BaseException | None = None) -> str | None:
    """The `error_category` of CONTRACT 3.4 for an HTTP status, or for an exception raised calling downstream.

    A status of 400 or more decides; below 400 (or with no status) an exception is classed by its type
    name: `timeout`, `connection`, else `exception`. With neither, there is no error: None.
    """
    status = _integer(status_code)
    if status is not None and status >= 400:
        if status in (408, 504):
            return "timeout"
        if status == 429:
            return "rate_limit"
        if status in (401, 403):
            return "auth"
        if status == 404:
            return "not_found"
        return "client_error" if status < 500 else "upstream_error"
    if exception is None:
        return None
    name = type(exception).__name__.lower()
    # asyncio.TimeoutError is its own class before Python 3.11, and its name says "timeout" anyway.
    if isinstance(exception, (TimeoutError, asyncio.TimeoutError)) or "timeout" in name:
        return "timeout"
    if "conn" in name:
        return "connection"
    return "exception"


def _token_fields(usage: dict[str, Any]) -> dict[str, Any]:
    """CONTRACT 3.5.1: one usage object of any of the three dialects, as the record's token fields."""
    tokens_in = _first_count(usage.get("input_tokens"), usage.get("prompt_tokens"))
    tokens_out = _first_count(usage.get("output_tokens"), usage.get("completion_tokens"))
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        cache_read = _count(usage.get("cache_read_input_tokens")) or 0
        cache_creation = _count(usage.get("cache_creation_input_tokens")) or 0
        # Anthropic's input_tokens leaves cache reads and writes out (OpenAI's already counts cached
        # tokens). A fully cached call may omit input_tokens; all-zero cache keys alone prove nothing.
        if tokens_in is not None or cache_read + cache_creation > 0:
            tokens_in = (tokens_in or 0) + cache_read + cache_creation
    tokens_total = _count(usage.get("total_tokens"))
    if tokens_total is None and tokens_in is not None and tokens_out is not None:
        tokens_total = tokens_in + tokens_out
    output_details = [_object(usage.get(key)) or {} for key in ("output_tokens_details", "completion_tokens_details")]
    input_details = [_object(usage.get(key)) or {} for key in ("prompt_tokens_details", "input_tokens_details")]
    cached_tokens = _first_count(
        *(details.get(key) for details in input_details for key in ("cached_tokens", "cached_input_tokens")),
        usage.get("cache_read_input_tokens"),
        usage.get("cached_input_tokens"),
    )
    return {
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "tokens_reasoning": _first_count(
            *(details.get("reasoning_tokens") for details in output_details), usage.get("reasoning_output_tokens")
        ),
        "tokens_total": tokens_total,
        "cached_tokens": cached_tokens,
        "cache_hit": None if cached_tokens is None else cached_tokens > 0,
        "cache_creation_tokens": _count(usage.get("cache_creation_input_tokens")),
    }


def _json_text(value: object) -> str:
    """The JSON text of a value as the reference writes it (`json.dumps`), at any depth and number size."""
    try:
        return python_text(value)
    except TypeError:  # not JSON at all: a Python caller's own object
        return preview(value)


def _arguments(value: object) -> dict[str, Any]:
    """Tool arguments as an object: JSON text parsed; text that is not a JSON object kept under `_raw`."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            parsed = loads(value)
        except ValueError:  # not JSON, or (from a Python caller) text that is not even UTF-8
            return {"_raw": value}
        return parsed if isinstance(parsed, dict) else {"_raw": value}
    as_object = _object(value)
    return as_object if as_object is not None else {"_raw": _json_text(value)}


def _tool_call(call_id: object, name: object, arguments: object) -> dict[str, Any]:
    return {"call_id": text(call_id), "name": text(name), "arguments": _arguments(arguments)}


def _tool_calls(response: dict[str, Any], message: dict[str, Any]) -> list[dict[str, Any]]:
    # Read by shape, not by `dialect`: each dialect's shape is distinct, and a line without a dialect
    # still says what the model asked for.
    calls = [
        _tool_call(item.get("call_id"), item.get("name"), item.get("arguments"))
        for item in objects(response.get("output"))
        if item.get("type") == "function_call"
    ]
    for item in objects(message.get("tool_calls")):
        function = _object(item.get("function")) or {}
        calls.append(_tool_call(item.get("id"), function.get("name"), function.get("arguments")))
    calls.extend(
        _tool_call(block.get("id"), block.get("name"), block.get("input"))
        for block in objects(response.get("content"))
        if block.get("type") == "tool_use"
    )
    return calls


def _reasoning_content(response: dict[str, Any], message: dict[str, Any]) -> str | None:
    texts: list[object] = [
        summary.get("text")
        for item in objects(response.get("output"))
        if item.get("type") == "reasoning"
        for summary in objects(item.get("summary"))
    ]
    texts.append(first_text(message.get("reasoning_content"), message.get("reasoning")))
    blocks = objects(response.get("content"))
    texts.extend(block.get("thinking") for block in blocks if block.get("type") == "thinking")
    # Empty pieces are skipped so that they do not leave stray blank lines in the joined text.
    return "\n".join(piece for piece in texts if isinstance(piece, str) and piece) or None


def derive_record(exchange: dict[str, Any], call_index: int) -> ModelCallRecord:
    """The ModelCallRecord of one raw capture line (CONTRACT 3.5), at append position `call_index`.

    Never raises on the shape of `exchange`: a field that cannot be read from it is null (a list
    field is empty). Raises ValueError only for a negative `call_index`. `read_capture` is stricter,
    as the reference is: a line whose `unrecordable_field` is not None is refused there as damaged
    rather than derived with that field null.
    """
    if type(call_index) is not int or call_index < 0:
        raise ValueError(f"call_index must be a non-negative int, not {call_index!r}")
    exchange = _object(exchange) or {}
    request = _object(exchange.get("request"))
    response = _object(exchange.get("response"))
    body = response or {}
    choices = body.get("choices")
    first_choice = (_object(choices[0]) if isinstance(choices, list) and choices else None) or {}
    message = _object(first_choice.get("message")) or {}
    incomplete_details = _object(body.get("incomplete_details")) or {}
    fields: dict[str, Any] = {
        "model_call_id": text(exchange.get("model_call_id")),
        "response_id": text(body.get("id")),
        "call_index": call_index,
        "model_ref": _model_ref(exchange.get("model_ref")),
        "model": first_text(body.get("model"), (request or {}).get("model")),
        "dialect": text(exchange.get("dialect")),
        "status_code": _integer(exchange.get("status_code")),
        "response_status": text(body.get("status")),
        "finish_reason": first_text(
            body.get("stop_reason"), first_choice.get("finish_reason"), incomplete_details.get("reason")
        ),
        "started_at": finite(exchange.get("started_at")),
        "completed_at": finite(exchange.get("completed_at")),
        **_token_fields(_object(body.get("usage")) or {}),
        "request": request,
        "response": response,
        "request_raw": text(exchange.get("request_raw")),
        "response_raw": text(exchange.get("response_raw")),
        "tool_calls": _tool_calls(body, message),
        "reasoning_content": _reasoning_content(body, message),
        "error_category": text(exchange.get("error_category")),
        "latency_total_ms": _duration(exchange.get("latency_ms")),
        "latency_ttft_ms": _duration(exchange.get("latency_ttft_ms")),
    }
    try:
        return ModelCallRecord.model_validate(fields)
    except ValidationError as refused:
        # A value the model cannot hold that reading by type does not catch (a key that is not valid
        # Unicode in an object taken as it is): the field is null, as the docstring promises.
        for error in refused.errors():
            if error["loc"] and error["loc"][0] in fields:
                name = error["loc"][0]
                fields[name] = [] if isinstance(fields[name], list) else None
        return ModelCallRecord.model_validate(fields)


# --- lines the reference cannot record (CONTRACT 3.2) ----------------------------------------------


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_integer(value: object) -> bool:
    return _integer(value) is not None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_model_server_ref(value: object) -> bool:
    return _model_ref(value) is not None


# Exchange fields that the reference's ModelCallRecord takes over as they are, each with what it must
# be when not null: a value of another JSON type makes the record model refuse the whole line, which is
# then counted as unreadable. (The reference also coerces what Pydantic's lax mode coerces, such as a
# status code "200"; JSON types are never coerced here, so such a line is refused too.) The payloads
# and everything read out of them are taken by shape, so nothing there makes a line unrecordable.
_TAKEN_AS_THEY_ARE: dict[str, tuple[str, Callable[[object], bool]]] = {
    "model_call_id": ("a string", _is_text),
    "model_ref": ('a model-server reference {"type": "responses_api_models", "name": <string>}', _is_model_server_ref),
    "dialect": ("a string", _is_text),
    "status_code": ("an integer", _is_integer),
    "started_at": ("a number", _is_number),
    "completed_at": ("a number", _is_number),
    "latency_ms": ("a number", _is_number),
    "latency_ttft_ms": ("a number", _is_number),
    "error_category": ("a string", _is_text),
}


def unrecordable_field(exchange: dict[str, Any]) -> tuple[str, str] | None:
    """The first field that keeps the reference from recording this exchange, with why; None when it can.

    `read_capture` refuses such a line as damaged, as the reference's reader does; `derive_record`
    would derive it with the field null.
    """
    for field, (expected, fits) in _TAKEN_AS_THEY_ARE.items():
        value = exchange.get(field)
        if value is not None and not fits(value):
            # A number kept as its text is one no float or int here can hold (nor the reference's parser).
            what = "a number out of range" if isinstance(value, NumberText) else json_type(value, article=True)
            return field, f"{field} is {what} ({preview(value)}), not {expected} or null"
    return None


# --- a capture store on disk (CONTRACT 3.2) ----------------------------------------------------------


@dataclass(frozen=True)
class Capture:
    """What a capture store holds for one rollout, read tolerantly: survivors, damage, and flags."""

    rollout_id: str
    records: tuple[ModelCallRecord, ...] = ()
    """Records of the readable lines; `call_index` counts every non-blank line, so damage leaves holes."""
    damaged_lines: tuple[Diagnostic, ...] = ()
    """One diagnostic per line that is not a readable exchange, with its line number."""
    incomplete: bool = False
    """The `<rollout_id>.capture.incomplete` marker is there: a capture write failed."""
    found: bool = False
    """The capture file or the marker is there."""
    unreadable: str | None = None
    """Why the capture file could not be read at all (or stopped being readable), else None."""

    @property
    def attached_records(self) -> tuple[ModelCallRecord, ...]:
        """The records a rollout's attachment carries and its join uses (CONTRACT 3.6).

        All of `records`, unless the store stopped being readable: then none, as the reference, whose
        reader either reads a whole store or fails.
        """
        return () if self.unreadable is not None else self.records


def _check_file_name_id(rollout_id: object) -> str:
    if not isinstance(rollout_id, str):
        raise ValueError(f"a rollout id must be a string, not {type(rollout_id).__name__}")
    if not rollout_id:
        raise ValueError("the rollout id is empty, so it cannot name a capture file")
    if not set(rollout_id) <= _FILE_NAME_CHARACTERS:
        raise ValueError(
            f"rollout id {rollout_id!r} cannot name a capture file: only ASCII letters, digits, '.', '_' and '-'"
        )
    return rollout_id


def _store_paths(path: Path, rollout_id: str) -> tuple[Path, Path]:
    """The capture file and the incomplete marker that `path` designates for `rollout_id`."""
    if path.name.endswith(CAPTURE_SUFFIX):
        if path.name != rollout_id + CAPTURE_SUFFIX:
            raise ValueError(f"{str(path)!r} is the capture file of another rollout than {rollout_id!r}")
        return path, path.with_name(rollout_id + INCOMPLETE_SUFFIX)
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{str(path)!r} is neither a capture directory nor a <rollout_id>{CAPTURE_SUFFIX} file")
    return path / (rollout_id + CAPTURE_SUFFIX), path / (rollout_id + INCOMPLETE_SUFFIX)


def read_capture(path: str | Path, rollout_id: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Capture:
    """Read the capture of `rollout_id` from a capture directory or from its `.capture.jsonl` file.

    Tolerant, like the reference's `read_available`: blank lines are skipped, a damaged line becomes a
    diagnostic with its line number and the rest is still read; a file that cannot be read is reported
    in `Capture.unreadable`. A line is damaged when it is bad JSON or UTF-8, not an object, longer than
    `max_line_bytes`, or an exchange the reference cannot record (`unrecordable_field`: the diagnostic
    names the field and why). A damaged line still takes its `call_index` position. Raises ValueError
    only for a rollout id that cannot name a file, or a path that is neither a directory nor that
    rollout's file.
    """
    rollout_id = _check_file_name_id(rollout_id)
    capture_file, marker = _store_paths(Path(path), rollout_id)
    return read_capture_lines(capture_file, rollout_id, os.path.exists(marker), max_line_bytes=max_line_bytes)


def read_capture_lines(
    capture_file: Path, rollout_id: str, incomplete: bool = False, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Capture:
    """The capture lines of one file, whatever its name, read as `read_capture` reads a rollout's file;
    ``rollout_id`` and ``incomplete`` are given, not looked for."""
    records: list[ModelCallRecord] = []
    damaged: list[Diagnostic] = []
    unreadable: str | None = None
    position = 0  # every non-blank line takes a position, readable or not
    try:
        with open_source(str(capture_file)) as source:
            for line in iter_lines(source, max_line_bytes):
                if isinstance(line, Diagnostic):
                    if line.code == "input_unreadable":
                        unreadable = line.message
                        break
                    # A line over the size limit is still a line; a truncated stream has no more lines.
                    if line.code == "line_too_long":
                        position += 1
                    damaged.append(line.at(source=source.name))
                    continue
                exchange = parse_record(line.data, _CAPTURE_LINE_DEPTH)
                if isinstance(exchange, Diagnostic) and exchange.code == "json_duplicate_key":
                    # The reference keeps the last value of a repeated key; so does this reader.
                    kept = loads(line.data)
                    exchange = nesting_problem(kept, _CAPTURE_LINE_DEPTH) or kept
                if isinstance(exchange, Diagnostic):
                    damaged.append(exchange.at(line=line.number, source=source.name))
                elif (refused := unrecordable_field(exchange)) is not None:
                    field, why = refused
                    message = f"{why}: the call cannot be recorded, so the line counts as unreadable"
                    damaged.append(
                        Diagnostic.of("schema_violation", message, f"/{field}", line=line.number, source=source.name)
                    )
                else:
                    try:
                        records.append(derive_record(exchange, position))
                    except ValidationError as error:
                        message = f"the exchange cannot be turned into a ModelCallRecord: {error.errors()[0]['msg']}"
                        damaged.append(Diagnostic.of("schema_violation", message, line=line.number, source=source.name))
                position += 1
    except InputUnreadable as error:
        if isinstance(error.__cause__, FileNotFoundError):
            return Capture(rollout_id, incomplete=incomplete, found=incomplete)
        unreadable = error.reason
    return Capture(rollout_id, tuple(records), tuple(damaged), incomplete, found=True, unreadable=unreadable)


# --- metrics (CONTRACT 3.7) and the attachment (CONTRACT 3.6) ----------------------------------------


def aggregate_metrics(records: Iterable[ModelCallRecord]) -> CaptureMetrics:
    """Sums over the calls of the values that are known; a sum is null only when no call knows it."""
    records = tuple(records)
    sums: dict[str, Any] = {}
    for field in CAPTURED_TOKEN_FIELDS:
        known = [value for record in records if (value := getattr(record, field)) is not None]
        sums[field] = sum(known) if known else None
    latencies = [record.latency_total_ms for record in records if record.latency_total_ms is not None]
    # fsum is exactly rounded, so the total does not depend on the order of the calls.
    sums["latency_total_ms"] = math.fsum(latencies) if latencies else None
    return CaptureMetrics.model_validate({**sums, "num_calls": len(records)})


def metrics_diagnostics(records: Iterable[ModelCallRecord]) -> list[Diagnostic]:
    """`metrics_partial_sum` warnings: a token field known for some calls and null for others."""
    records = tuple(records)
    found: list[Diagnostic] = []
    for field in CAPTURED_TOKEN_FIELDS:
        known = [value for record in records if (value := getattr(record, field)) is not None]
        if 0 < len(known) < len(records):
            message = f"{field} {sum(known)} sums {len(known)} of {len(records)} calls; the rest are unknown"
            found.append(Diagnostic.of("metrics_partial_sum", message, f"/metrics/{field}"))
    return found


def _capture_gaps(capture: Capture) -> list[ObservationGap]:
    """The gaps of the reference's merge (CONTRACT 3.6, 2.6), under the same conditions and in its order."""
    if capture.unreadable is not None:
        return [ObservationGap(code=_UNREADABLE)]
    gaps: list[ObservationGap] = []
    if capture.damaged_lines:
        gaps.append(ObservationGap(code=_RECORDS_UNREADABLE, detail=f"count={len(capture.damaged_lines)}"))
    # The marker alone explains an empty capture: a write failed, so "no records" would say less.
    if capture.incomplete:
        gaps.append(ObservationGap(code=_INCOMPLETE))
    elif not capture.records and not capture.damaged_lines:
        gaps.append(ObservationGap(code=_NO_RECORDS))
    return gaps


def capture_attachment(capture: Capture, include_payloads: bool = True) -> dict[str, Any]:
    """The `ng_model_call_capture` value of a rollout record (CONTRACT 3.6), as JSON-ready data.

    `calls` are full dumps (nulls kept) of `Capture.attached_records`; without `include_payloads` the
    keys of `PAYLOAD_KEYS` are left out. `gaps` are the reference's: `model_call_capture_unreadable`
    alone when the store stopped being readable; else `model_call_capture_records_unreadable` for
    damaged lines, then `model_call_capture_incomplete` when the marker is there or, without it,
    `model_call_capture_no_records` when nothing at all was read. They are dumped without null keys,
    and only when there are any.
    """
    excluded = None if include_payloads else set(PAYLOAD_KEYS)
    records = capture.attached_records
    attachment: dict[str, Any] = {
        "rollout_id": capture.rollout_id,
        "metrics": aggregate_metrics(records).model_dump(mode="python"),
        # Python-mode dumps: the JSON-mode serializer stops at 254 levels; payloads may nest deeper.
        "calls": [record.model_dump(mode="python", exclude=excluded) for record in records],
    }
    if gaps := _capture_gaps(capture):
        attachment["gaps"] = [gap.model_dump(mode="python", exclude_none=True) for gap in gaps]
    return attachment
