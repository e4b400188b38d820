# generated from schemas/v1/common.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Any, Literal
from pydantic import ConfigDict, Field, RootModel
from gym_contract._model_base import ContractModel


class CommonDefinitions(RootModel[Any]):
    root: Annotated[
        Any,
        Field(
            examples=[{"type": "responses_api_models", "name": "policy"}],
            title="Common definitions",
        ),
    ]
    """
    Definitions shared by several schemas of the contract; reached by relative $ref.
    """


class ModelServerRef(ContractModel):
    """
    Reference to a model server of the gym by its configured name.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    type: Literal["responses_api_models"]
    """
    Server kind; model servers are always `responses_api_models`.
    """
    name: str
    """
    Configured name of the model server, e.g. `policy`.
    """
