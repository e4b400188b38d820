# generated from schemas/v1/agent_invocation.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Any, Literal
from gym_contract._model_base import ContractModel
from pydantic import ConfigDict, Field, RootModel
from pydantic import MISSING
from . import model_call_ref_schema


class InputText(ContractModel):
    """
    Text input part.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    type: Literal["input_text"]
    """
    Part type.
    """
    text: str
    """
    The text.
    """


class InputImage(ContractModel):
    """
    Image input part.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    type: Literal["input_image"]
    """
    Part type.
    """
    detail: str | MISSING = MISSING
    """
    Detail level requested for the image (`low`, `high`, `auto`).
    """
    file_id: str | None = None
    """
    Id of an uploaded file holding the image.
    """
    image_url: str | None = None
    """
    URL or data URL of the image.
    """


class InputFile(ContractModel):
    """
    File input part.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    type: Literal["input_file"]
    """
    Part type.
    """
    file_data: str | None = None
    """
    Inline file content.
    """
    file_id: str | None = None
    """
    Id of an uploaded file.
    """
    file_url: str | None = None
    """
    URL of the file.
    """
    filename: str | None = None
    """
    Name of the file.
    """


class InputAudio(ContractModel):
    """
    Audio input part.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    type: Literal["input_audio"]
    """
    Part type.
    """
    input_audio: dict[str, Any]
    """
    Audio data and format.
    """


class VideoLocation(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="[^\t\n\x0b\x0c\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]",
            title="VideoLocation",
        ),
    ]
    """
    URL or data URL of a video; not blank: it has a character other than white space.
    """


class VideoUrl(ContractModel):
    """
    A video given as an object that holds its URL under `url`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    url: Annotated[
        str,
        Field(
            pattern="[^\t\n\x0b\x0c\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]",
            title="VideoLocation",
        ),
    ]
    """
    URL or data URL of the video; not blank.
    """


class InputVideo(ContractModel):
    """
    Video input part, a NeMo Gym extension of the Responses API: exactly one of `video_url` or `video`, naming a video that is not blank.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "if": {"properties": {"video_url": True}, "required": ["video_url"]},
            "then": {
                "not": {"properties": {"video": True}, "required": ["video"]},
                "description": "input_video requires exactly one of video_url or video",
            },
            "else": {
                "properties": {"video": True},
                "required": ["video"],
                "description": "input_video requires exactly one of video_url or video",
            },
        },
    )
    type: Literal["input_video"]
    """
    Part type.
    """
    video_url: VideoLocation | VideoUrl | MISSING = MISSING
    """
    The video: a URL or data URL that is not blank, or an object holding one under `url`. A part has this or `video`, never both.
    """
    video: VideoLocation | VideoUrl | MISSING = MISSING
    """
    The video under its other name, in the same forms as `video_url`. A part has this or `video_url`, never both.
    """


class EasyInputMessage(ContractModel):
    """
    A message in its easy input form: a role and text or content parts.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    content: str | list[InputText | InputImage | InputFile | InputAudio | InputVideo]
    """
    Text, or a list of input content parts.
    """
    role: Literal["user", "assistant", "system", "developer"]
    """
    Author role.
    """
    type: Literal["message"] = "message"
    """
    Item type; `message` when omitted.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class InputMessage(ContractModel):
    """
    An input message with a list of content parts.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    content: list[InputText | InputImage | InputFile | InputAudio | InputVideo]
    """
    Input content parts.
    """
    role: Literal["user", "system", "developer"]
    """
    Author role.
    """
    status: Literal["in_progress", "completed", "incomplete"] = "completed"
    """
    Item status.
    """
    type: Literal["message"] = "message"
    """
    Item type; `message` when omitted.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class OutputText(ContractModel):
    """
    Text produced by the model.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    annotations: list[Any]
    """
    Annotations (citations, file paths) on the text; required, often empty.
    """
    text: str
    """
    The text.
    """
    type: Literal["output_text"] = "output_text"
    """
    Part type.
    """
    logprobs: list[Any] | None = None
    """
    Token log-probabilities, when requested.
    """


class Refusal(ContractModel):
    """
    A refusal produced by the model.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    refusal: str
    """
    Refusal text.
    """
    type: Literal["refusal"] = "refusal"
    """
    Part type.
    """


class OutputMessage(ContractModel):
    """
    An assistant message produced by the model.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    id: str
    """
    Item id.
    """
    content: list[OutputText | Refusal]
    """
    Output text and refusal parts.
    """
    role: Literal["assistant"] = "assistant"
    """
    Author role; always `assistant`.
    """
    status: Literal["in_progress", "completed", "incomplete"] = "completed"
    """
    Item status.
    """
    type: Literal["message"] = "message"
    """
    Item type.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class FunctionCall(ContractModel):
    """
    A function tool call requested by the model.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    arguments: str
    """
    Arguments as a JSON-encoded string.
    """
    call_id: str
    """
    Call id that the matching `function_call_output` carries.
    """
    name: str
    """
    Tool name.
    """
    type: Literal["function_call"]
    """
    Item type; required: an item without one is read only as a message.
    """
    id: str | None = None
    """
    Item id.
    """
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    """
    Item status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class FunctionCallOutput(ContractModel):
    """
    The client's result of a function tool call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    call_id: str
    """
    Call id of the `function_call` this answers.
    """
    output: str | list[Any]
    """
    Output text, or a list of output content parts.
    """
    type: Literal["function_call_output"]
    """
    Item type; required: an item without one is read only as a message.
    """
    id: str | None = None
    """
    Item id.
    """
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    """
    Item status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class ReasoningSummary(ContractModel):
    """
    One summary text of a reasoning item.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    text: str
    """
    Summary text.
    """
    type: Literal["summary_text"]
    """
    Part type.
    """


class ReasoningContent(ContractModel):
    """
    One reasoning text of a reasoning item.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    text: str
    """
    Reasoning text.
    """
    type: Literal["reasoning_text"]
    """
    Part type.
    """


class Reasoning(ContractModel):
    """
    A reasoning item produced by the model.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    id: str
    """
    Item id.
    """
    summary: list[ReasoningSummary]
    """
    Summary texts.
    """
    type: Literal["reasoning"]
    """
    Item type; required: an item without one is read only as a message.
    """
    encrypted_content: str | None = None
    """
    Opaque encrypted reasoning (e.g. a thinking signature).
    """
    content: list[ReasoningContent] | None = None
    """
    Reasoning texts, when the provider returns them.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class McpCall(ContractModel):
    """
    A tool call executed on a hosted MCP server.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["mcp_call"]
    """
    Item type; required: an item without one is read only as a message.
    """
    arguments: str
    """
    Arguments as a JSON string.
    """
    name: str
    """
    Tool name.
    """
    id: str | None = None
    """
    Item id.
    """
    server_label: str | None = None
    """
    Label of the MCP server.
    """
    status: str | None = None
    """
    Status as the server reports it.
    """
    output: str | None = None
    """
    Tool output.
    """
    error: str | None = None
    """
    Error text.
    """
    approval_request_id: str | None = None
    """
    Approval request this call answers.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class McpListTools(ContractModel):
    """
    A listing of the tools of a hosted MCP server.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["mcp_list_tools"]
    """
    Item type; required: an item without one is read only as a message.
    """
    tools: list[Any] = []
    """
    Raw tool entries.
    """
    id: str | None = None
    """
    Item id.
    """
    server_label: str | None = None
    """
    Label of the MCP server.
    """
    error: str | None = None
    """
    Error text.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class McpApprovalRequest(ContractModel):
    """
    A request for approval of a hosted MCP tool call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["mcp_approval_request"]
    """
    Item type; required: an item without one is read only as a message.
    """
    arguments: str
    """
    Arguments as a JSON string.
    """
    name: str
    """
    Tool name.
    """
    id: str | None = None
    """
    Item id.
    """
    server_label: str | None = None
    """
    Label of the MCP server.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class FileSearchCall(ContractModel):
    """
    A hosted file-search call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["file_search_call"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    queries: list[Any]
    """
    Queries used.
    """
    status: str
    """
    Call status.
    """
    results: list[Any] | None = None
    """
    Search results.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class WebSearchCall(ContractModel):
    """
    A hosted web-search call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["web_search_call"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    status: str
    """
    Call status.
    """
    action: dict[str, Any] | MISSING = MISSING
    """
    Action taken (search, open page, find).
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class ComputerCall(ContractModel):
    """
    A computer-use action for the client to execute.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["computer_call"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    action: dict[str, Any]
    """
    The action.
    """
    call_id: str
    """
    Call id.
    """
    pending_safety_checks: list[Any]
    """
    Pending safety checks.
    """
    status: str
    """
    Call status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class ImageGenerationCall(ContractModel):
    """
    A hosted image-generation call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["image_generation_call"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    result: str | None = None
    """
    Generated image, base64.
    """
    status: str
    """
    Call status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class CodeInterpreterCall(ContractModel):
    """
    A hosted code-interpreter call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["code_interpreter_call"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    code: str | None = None
    """
    Code run.
    """
    container_id: str
    """
    Container id.
    """
    outputs: list[Any] | None = None
    """
    Outputs (logs, images).
    """
    status: str
    """
    Call status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class LocalShellCall(ContractModel):
    """
    A local-shell command for the client to execute.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["local_shell_call"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    action: dict[str, Any]
    """
    The command to run.
    """
    call_id: str
    """
    Call id.
    """
    status: str
    """
    Call status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class CustomToolCall(ContractModel):
    """
    A client-executed custom tool call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["custom_tool_call"]
    """
    Item type.
    """
    call_id: str
    """
    Call id.
    """
    input: str
    """
    Tool input.
    """
    name: str
    """
    Tool name.
    """
    id: str | None = None
    """
    Item id.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class ComputerCallOutput(ContractModel):
    """
    The client's result of a computer-use action.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["computer_call_output"]
    """
    Item type.
    """
    call_id: str
    """
    Call id.
    """
    output: dict[str, Any]
    """
    Screenshot output.
    """
    id: str | None = None
    """
    Item id.
    """
    acknowledged_safety_checks: list[Any] | None = None
    """
    Safety checks acknowledged.
    """
    status: str | None = None
    """
    Item status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class CustomToolCallOutput(ContractModel):
    """
    The client's result of a custom tool call.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["custom_tool_call_output"]
    """
    Item type.
    """
    call_id: str
    """
    Call id.
    """
    output: str | list[Any]
    """
    Output text or parts.
    """
    id: str | None = None
    """
    Item id.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class LocalShellCallOutput(ContractModel):
    """
    The client's result of a local shell command.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["local_shell_call_output"]
    """
    Item type.
    """
    id: str
    """
    Item id.
    """
    output: str
    """
    Command output.
    """
    status: str | None = None
    """
    Item status.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class McpApprovalResponse(ContractModel):
    """
    The client's answer to an MCP approval request.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "dependentRequired": {
                "prompt_token_ids": ["generation_token_ids", "generation_log_probs"],
                "generation_token_ids": ["prompt_token_ids", "generation_log_probs"],
                "generation_log_probs": ["prompt_token_ids", "generation_token_ids"],
                "routed_experts": [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ],
            }
        },
    )
    type: Literal["mcp_approval_response"]
    """
    Item type.
    """
    approval_request_id: str
    """
    Request answered.
    """
    approve: bool
    """
    Whether the call is approved.
    """
    id: str | None = None
    """
    Item id.
    """
    reason: str | None = None
    """
    Reason given.
    """
    prompt_token_ids: list[int] | MISSING = MISSING
    """
    Token ids of the prompt the policy saw (training variant; all three token fields come together).
    """
    generation_token_ids: list[int] | MISSING = MISSING
    """
    Token ids the policy sampled (training variant).
    """
    generation_log_probs: list[float] | MISSING = MISSING
    """
    Log-probabilities of the sampled tokens (training variant).
    """
    routed_experts: str | list[list[list[int]]] | None | MISSING = MISSING
    """
    Per-token routed expert indices [tokens, layers, topk], or an opaque string envelope; optional.
    """


class AgentInvocation(ContractModel):
    """
    One root agent or subagent conversation.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["agent_invocation"] = "agent_invocation"
    """
    Record discriminator.
    """
    invocation_id: str
    """
    Identifier of the invocation, unique within its bundle or trajectory.
    """
    parent_invocation_id: str | None = None
    """
    Invocation that spawned this one; null for a root. May name an invocation absent from a partial tree.
    """
    spawned_by_tool_call_id: str | None = None
    """
    Tool call in the parent's conversation that spawned this invocation.
    """
    status: Literal["completed", "failed", "incomplete", "unknown"] = "unknown"
    """
    Outcome; `unknown` when not explicit.
    """
    duration_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Wall-clock duration in milliseconds.
    """
    error_type: str | None = None
    """
    Producer-specific error type, e.g. `timeout` or `process_exit_1`.
    """
    model_calls: Annotated[
        list[model_call_ref_schema.ModelCallRef], Field(validate_default=True)
    ] = []
    """
    Model calls owned by this invocation.
    """
    conversation: Annotated[
        list[
            EasyInputMessage
            | InputMessage
            | OutputMessage
            | FunctionCall
            | FunctionCallOutput
            | Reasoning
            | McpCall
            | McpListTools
            | McpApprovalRequest
            | FileSearchCall
            | WebSearchCall
            | ComputerCall
            | ImageGenerationCall
            | CodeInterpreterCall
            | LocalShellCall
            | CustomToolCall
            | ComputerCallOutput
            | CustomToolCallOutput
            | LocalShellCallOutput
            | McpApprovalResponse
        ],
        Field(validate_default=True),
    ] = []
    """
    Normalised model-visible conversation items supported by the producer; gaps describe unavailable evidence.
    """
