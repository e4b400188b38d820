# generated from schemas/v1/model_call_ref.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from gym_contract._model_base import ContractModel
from pydantic import ConfigDict
from . import common_schema


class ModelCallRef(ContractModel):
    """
    Join key an agent can observe for one model call: the capture's `model_call_id`, or the pair (`model_ref`, `response_id`). Empty strings count as missing.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {
                "not": {
                    "required": ["model_call_id"],
                    "properties": {
                        "model_call_id": {
                            "type": "string",
                            "minLength": 1,
                            "description": "A `model_call_id` that counts as given: a non-empty string.",
                        }
                    },
                }
            },
            "then": {
                "description": "model_call_id, or both model_ref and response_id, are required",
                "required": ["model_ref", "response_id"],
                "properties": {
                    "model_ref": {
                        "type": "object",
                        "description": "Without a `model_call_id`, the model server is required.",
                    },
                    "response_id": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Without a `model_call_id`, a non-empty `response_id` is required.",
                    },
                },
            },
        },
    )
    model_call_id: str | None = None
    """
    Identifier minted by the capture middleware for the call (a uuid4 hex).
    """
    model_ref: common_schema.ModelServerRef | None = None
    """
    Model server that served the call; joins together with `response_id`.
    """
    response_id: str | None = None
    """
    Protocol response id returned by the model (e.g. `resp_…`, `msg_…`).
    """
