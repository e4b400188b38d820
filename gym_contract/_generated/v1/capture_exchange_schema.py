# generated from schemas/v1/capture_exchange.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Any, Literal
from pydantic import ConfigDict, Field
from gym_contract._model_base import ContractModel
from . import common_schema


class CaptureExchange(ContractModel):
    """
    One raw line of a `<rollout_id>.capture.jsonl` file, as the capture middleware writes it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    model_call_id: str
    """
    uuid4 hex minted per call by the middleware.
    """
    dialect: Literal["responses", "chat", "messages"] | None = None
    """
    API dialect, from the request path.
    """
    model_ref: common_schema.ModelServerRef | None = None
    """
    Model server that served the call.
    """
    started_at: float | None = None
    """
    Wall-clock start, UTC Unix time in seconds.
    """
    completed_at: float | None = None
    """
    Wall-clock completion, UTC Unix time in seconds.
    """
    latency_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Monotonic latency in milliseconds, rounded to 2 places.
    """
    latency_ttft_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Time to the first non-empty body chunk in milliseconds.
    """
    status_code: int | None = None
    """
    HTTP status code.
    """
    error_category: str | None = None
    """
    `timeout`, `rate_limit`, `auth`, `not_found`, `client_error`, `upstream_error`, `incomplete`, `stream_truncated`, `capture_parse_error`, `connection` or `exception`.
    """
    request: dict[str, Any] | None = None
    """
    Parsed JSON request body.
    """
    response: dict[str, Any] | None = None
    """
    Parsed or reassembled response body.
    """
    request_raw: str | None = None
    """
    Request body when it is not a JSON object.
    """
    response_raw: str | None = None
    """
    Decoded body when streaming or unparseable; the upstream error body on exceptions.
    """
