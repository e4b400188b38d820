"""`SpanExporter`: a harness's OpenTelemetry GenAI spans, handed over live and mapped as `observe otel` maps files.

Add it to the harness's tracer provider (the `otel` extra installs `opentelemetry-sdk`)::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from gym_contract.recorder.otel import SpanExporter

    exporter = SpanExporter(model_ref="policy")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ...  # the instrumented agent runs
    for bundle in exporter.observe():
        observed = bundle.observed()  # the Observed every producer returns

Every span the processor hands over is kept until `clear`; `observe` maps all of them with the
mapping `gym-contract observe otel` applies to OTLP/JSON (`gym_contract.producers.otel`), so a
harness sees the same bundles whether its spans went through a file or not.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter as _SdkSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from gym_contract.producers.otel import ObservedSpans, Span, map_spans

__all__ = ["SpanExporter", "span_of"]


def _plain(value: Any) -> Any:
    """An attribute value as JSON holds it: the SDK keeps sequences as tuples."""
    return [_plain(item) for item in value] if isinstance(value, (tuple, list)) else value


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {key: _plain(value) for key, value in (attributes or {}).items()}


def span_of(span: ReadableSpan) -> Span | None:
    """The span as `observe otel` reads one from OTLP/JSON; None for a span without a valid context."""
    context = span.context
    if context is None or not context.is_valid:
        return None
    return Span(
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(span.parent.span_id, "016x") if span.parent is not None else None,
        name=span.name,
        start=span.start_time or None,
        end=span.end_time or None,
        attributes=_attributes(span.attributes),
        status_code=span.status.status_code.value,
        status_message=span.status.description,
        events=[(event.name, _attributes(event.attributes)) for event in span.events],
        resource=_attributes(span.resource.attributes),
    )


class SpanExporter(_SdkSpanExporter):
    """An OpenTelemetry SDK span exporter that keeps the spans it is given and maps them to bundles on demand.

    Safe to call from the threads of a `BatchSpanProcessor` and from the harness at once. ``model_ref``
    names the model server of model-call spans that name none (`gym_contract.model_server`).
    """

    def __init__(self, *, model_ref: str | None = None) -> None:
        self.model_ref = model_ref
        self._spans: list[Span] = []
        self._lock = threading.Lock()
        self._shut = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Keep ``spans``; after `shutdown`, refuse them as the SDK's exporters do."""
        if self._shut:
            return SpanExportResult.FAILURE
        read = [converted for span in spans if (converted := span_of(span)) is not None]
        with self._lock:
            self._spans.extend(read)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._shut = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is buffered: every span is kept as it arrives

    def spans(self) -> list[Span]:
        """The spans kept so far, in the order they ended."""
        with self._lock:
            return list(self._spans)

    def clear(self) -> None:
        """Forget the spans kept so far (between two rollouts of one process)."""
        with self._lock:
            self._spans.clear()

    def observe(self) -> list[ObservedSpans]:
        """The bundles of the spans kept so far: one per `gym_contract.rollout_id`, else one per trace."""
        return map_spans(self.spans(), model_ref=self.model_ref)
