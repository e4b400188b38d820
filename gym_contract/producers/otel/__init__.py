"""OpenTelemetry GenAI spans as producers' evidence: OTLP/JSON files and live spans mapped to bundles.

`observe_otel` reads what `gym-contract export otel` or an OpenTelemetry Collector's file exporter
wrote; `gym_contract.recorder.otel.SpanExporter` hands over the spans of a running harness. Both
map spans with `map_spans`: one bundle per `gym_contract.rollout_id` (else per trace), its
`invoke_agent` spans the invocations, `chat` / `text_completion` / `generate_content` spans their
model-call references, `execute_tool` spans the tool calls, and gaps for what the spans do not say.
"""

from __future__ import annotations

import os

from gym_contract.producers._kit import ArtifactForm, UnrecognisedArtifactError
from gym_contract.producers.otel._mapping import MODEL_CALL_OPERATIONS, ObservedSpans, map_spans
from gym_contract.producers.otel._otlp import OtlpInput, Span, Unreadable, read_otlp

__all__ = [
    "FORMS",
    "MODEL_CALL_OPERATIONS",
    "ObservedSpans",
    "OtlpInput",
    "Span",
    "Unreadable",
    "map_spans",
    "observe_otel",
    "read_otlp",
]

FORMS = (
    ArtifactForm("OTLP/JSON document", "an ExportTraceServiceRequest, or an array of them, as `export otel` writes"),
    ArtifactForm(
        "Collector file", "JSONL of one ExportTraceServiceRequest a line, as the Collector's file exporter writes"
    ),
)
"""The inputs `observe otel` reads, as its refusal of any other names them."""

SOURCE = "otel"
"""The bundle `source` of spans that name none (`gym_contract.source`), and the gap registry's name for them."""


def observe_otel(path: str, *, model_ref: str | None = None) -> tuple[list[ObservedSpans], OtlpInput]:
    """The bundles of an OTLP/JSON file (`-` for stdin), and what was read from it (its damaged lines included).

    ``model_ref`` names the model server of model-call spans that name none. Raises
    `InputUnreadable` when the file cannot be opened, and `UnrecognisedArtifactError` when it holds no
    OTLP/JSON traces: nothing, or no request with `resourceSpans` (damaged traces are read, their
    damage reported).
    """
    if path != "-" and os.path.isdir(path):
        raise UnrecognisedArtifactError(path, "a folder, not a file")
    read = read_otlp(path)
    if not read.recognised:
        found = "the input is empty" if not (read.damaged or read.unreadable) else "no request holds resourceSpans"
        raise UnrecognisedArtifactError("<stdin>" if path == "-" else path, found)
    return map_spans(read.spans, read.unreadable, model_ref=model_ref), read
