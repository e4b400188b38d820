"""The records' Structs compiled from the bundled schemas, written out by python tools/gen_structs.py: do not edit."""

from typing import Annotated, Any, Literal, Union

import msgspec

from gym_contract._objects import MemberStruct
from gym_contract.validation._struct_checks import conformer

SCHEMAS_DIGEST = "4b48ec0e"
"""The digest (`schemas._digest`) of the schema files these Structs come from: others make them stale."""


UNSET = msgspec.UNSET
_object_types = (dict, msgspec.Struct)


class ModelServerRef(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    type: Literal["responses_api_models"]
    name: str


class ModelCallRef(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    model_call_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    model_ref: Union[ModelServerRef, None, msgspec.UnsetType] = msgspec.UNSET
    response_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET

    def __post_init__(self) -> None:
        if not (
            (
                ((self.model_ref is not UNSET) and (self.response_id is not UNSET))
                and (self.model_ref is UNSET or isinstance(self.model_ref, _object_types))
                and (
                    self.response_id is UNSET
                    or (
                        (type(self.response_id) is str)
                        and (type(self.response_id) is not str or (len(self.response_id) >= 1))
                    )
                )
            )
            if (
                not (
                    (self.model_call_id is not UNSET)
                    and (
                        self.model_call_id is UNSET
                        or (
                            (type(self.model_call_id) is str)
                            and (type(self.model_call_id) is not str or (len(self.model_call_id) >= 1))
                        )
                    )
                )
            )
            else (True)
        ):
            raise ValueError("ModelCallRef does not satisfy its schema")


class InputText(MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="input_text", gc=False):
    text: str
    type = "input_text"


class InputImage(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="input_image", gc=False
):
    detail: Union[str, msgspec.UnsetType] = msgspec.UNSET
    file_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    image_url: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    type = "input_image"


class InputFile(MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="input_file", gc=False):
    file_data: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    file_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    file_url: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    filename: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    type = "input_file"


class InputAudio(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="input_audio", gc=False
):
    input_audio: dict[str, msgspec.Raw]
    type = "input_audio"


class VideoUrl(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    url: Annotated[
        str,
        msgspec.Meta(pattern="[^\t\n\x0b\x0c\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"),
    ]


class InputVideo(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="input_video", gc=False
):
    video_url: Union[
        Annotated[
            str,
            msgspec.Meta(
                pattern="[^\t\n\x0b\x0c\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
            ),
        ],
        VideoUrl,
        msgspec.UnsetType,
    ] = msgspec.UNSET
    video: Union[
        Annotated[
            str,
            msgspec.Meta(
                pattern="[^\t\n\x0b\x0c\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
            ),
        ],
        VideoUrl,
        msgspec.UnsetType,
    ] = msgspec.UNSET
    type = "input_video"

    def __post_init__(self) -> None:
        if not ((not (self.video is not UNSET)) if (self.video_url is not UNSET) else (self.video is not UNSET)):
            raise ValueError("InputVideo does not satisfy its schema")


class OutputText(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="output_text", gc=False
):
    annotations: list[msgspec.Raw]
    text: str
    logprobs: Union[list[msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    type = "output_text"


class Refusal(MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="refusal", gc=False):
    refusal: str
    type = "refusal"


class MergedMessage(MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="message", gc=False):
    content: Union[
        str,
        list[Union[InputText, InputImage, InputFile, InputAudio, InputVideo, OutputText, Refusal]],
        msgspec.UnsetType,
    ] = msgspec.UNSET
    role: Union[Literal["user", "assistant", "system", "developer"], msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[Literal["in_progress", "completed", "incomplete"], msgspec.UnsetType] = msgspec.UNSET
    id: Union[str, msgspec.UnsetType] = msgspec.UNSET
    type = "message"

    def __post_init__(self) -> None:
        if not (
            (
                ((self.content is not UNSET) and (self.role is not UNSET))
                and (self.content is UNSET or _h0(self.content))
                and (
                    (
                        (self.prompt_token_ids is UNSET)
                        and (self.generation_token_ids is UNSET)
                        and (self.generation_log_probs is UNSET)
                        and (self.routed_experts is UNSET)
                    )
                    or (
                        (
                            self.prompt_token_ids is UNSET
                            or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                        )
                        and (
                            self.generation_token_ids is UNSET
                            or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                        )
                        and (
                            self.generation_log_probs is UNSET
                            or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                        )
                        and (
                            self.routed_experts is UNSET
                            or (
                                (self.prompt_token_ids is not UNSET)
                                and (self.generation_token_ids is not UNSET)
                                and (self.generation_log_probs is not UNSET)
                            )
                        )
                    )
                )
            )
            or (
                ((self.content is not UNSET) and (self.role is not UNSET))
                and (self.content is UNSET or _h1(self.content))
                and (self.role is UNSET or _h2(self.role))
                and (
                    (
                        (self.prompt_token_ids is UNSET)
                        and (self.generation_token_ids is UNSET)
                        and (self.generation_log_probs is UNSET)
                        and (self.routed_experts is UNSET)
                    )
                    or (
                        (
                            self.prompt_token_ids is UNSET
                            or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                        )
                        and (
                            self.generation_token_ids is UNSET
                            or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                        )
                        and (
                            self.generation_log_probs is UNSET
                            or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                        )
                        and (
                            self.routed_experts is UNSET
                            or (
                                (self.prompt_token_ids is not UNSET)
                                and (self.generation_token_ids is not UNSET)
                                and (self.generation_log_probs is not UNSET)
                            )
                        )
                    )
                )
            )
            or (
                ((self.id is not UNSET) and (self.content is not UNSET))
                and (self.content is UNSET or _h3(self.content))
                and (self.role is UNSET or _h4(self.role))
                and (
                    (
                        (self.prompt_token_ids is UNSET)
                        and (self.generation_token_ids is UNSET)
                        and (self.generation_log_probs is UNSET)
                        and (self.routed_experts is UNSET)
                    )
                    or (
                        (
                            self.prompt_token_ids is UNSET
                            or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                        )
                        and (
                            self.generation_token_ids is UNSET
                            or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                        )
                        and (
                            self.generation_log_probs is UNSET
                            or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                        )
                        and (
                            self.routed_experts is UNSET
                            or (
                                (self.prompt_token_ids is not UNSET)
                                and (self.generation_token_ids is not UNSET)
                                and (self.generation_log_probs is not UNSET)
                            )
                        )
                    )
                )
            )
        ):
            raise ValueError("a 'message' object does not satisfy its schema")


class FunctionCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="function_call", gc=False
):
    arguments: str
    call_id: str
    name: str
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[Literal["in_progress", "completed", "incomplete"], None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "function_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("FunctionCall does not satisfy its schema")


class FunctionCallOutput(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="function_call_output", gc=False
):
    call_id: str
    output: Union[str, list[msgspec.Raw]]
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[Literal["in_progress", "completed", "incomplete"], None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "function_call_output"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("FunctionCallOutput does not satisfy its schema")


class ReasoningSummary(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    text: str
    type: Literal["summary_text"]


class ReasoningContent(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    text: str
    type: Literal["reasoning_text"]


class Reasoning(MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="reasoning", gc=False):
    id: str
    summary: list[ReasoningSummary]
    encrypted_content: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    content: Union[list[ReasoningContent], None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "reasoning"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("Reasoning does not satisfy its schema")


class McpCall(MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="mcp_call", gc=False):
    arguments: str
    name: str
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    server_label: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    output: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    error: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    approval_request_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "mcp_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("McpCall does not satisfy its schema")


class McpListTools(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="mcp_list_tools", gc=False
):
    tools: Union[list[msgspec.Raw], msgspec.UnsetType] = msgspec.UNSET
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    server_label: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    error: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "mcp_list_tools"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("McpListTools does not satisfy its schema")


class McpApprovalRequest(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="mcp_approval_request", gc=False
):
    arguments: str
    name: str
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    server_label: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "mcp_approval_request"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("McpApprovalRequest does not satisfy its schema")


class FileSearchCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="file_search_call", gc=False
):
    id: str
    queries: list[msgspec.Raw]
    status: str
    results: Union[list[msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "file_search_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("FileSearchCall does not satisfy its schema")


class WebSearchCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="web_search_call", gc=False
):
    id: str
    status: str
    action: Union[dict[str, msgspec.Raw], msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "web_search_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("WebSearchCall does not satisfy its schema")


class ComputerCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="computer_call", gc=False
):
    id: str
    action: dict[str, msgspec.Raw]
    call_id: str
    pending_safety_checks: list[msgspec.Raw]
    status: str
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "computer_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("ComputerCall does not satisfy its schema")


class ImageGenerationCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="image_generation_call", gc=False
):
    id: str
    result: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status: str
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "image_generation_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("ImageGenerationCall does not satisfy its schema")


class CodeInterpreterCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="code_interpreter_call", gc=False
):
    id: str
    code: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    container_id: str
    outputs: Union[list[msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    status: str
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "code_interpreter_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("CodeInterpreterCall does not satisfy its schema")


class LocalShellCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="local_shell_call", gc=False
):
    id: str
    action: dict[str, msgspec.Raw]
    call_id: str
    status: str
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "local_shell_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("LocalShellCall does not satisfy its schema")


class CustomToolCall(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="custom_tool_call", gc=False
):
    call_id: str
    input: str
    name: str
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "custom_tool_call"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("CustomToolCall does not satisfy its schema")


class ComputerCallOutput(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="computer_call_output", gc=False
):
    call_id: str
    output: dict[str, msgspec.Raw]
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    acknowledged_safety_checks: Union[list[msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "computer_call_output"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("ComputerCallOutput does not satisfy its schema")


class CustomToolCallOutput(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="custom_tool_call_output", gc=False
):
    call_id: str
    output: Union[str, list[msgspec.Raw]]
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "custom_tool_call_output"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("CustomToolCallOutput does not satisfy its schema")


class LocalShellCallOutput(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="local_shell_call_output", gc=False
):
    id: str
    output: str
    status: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "local_shell_call_output"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("LocalShellCallOutput does not satisfy its schema")


class McpApprovalResponse(
    MemberStruct, kw_only=True, forbid_unknown_fields=False, tag_field="type", tag="mcp_approval_response", gc=False
):
    approval_request_id: str
    approve: bool
    id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    reason: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    prompt_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_token_ids: Union[list[int], msgspec.UnsetType] = msgspec.UNSET
    generation_log_probs: Union[list[Union[int, float]], msgspec.UnsetType] = msgspec.UNSET
    routed_experts: Union[str, list[list[list[int]]], None, msgspec.UnsetType] = msgspec.UNSET
    type = "mcp_approval_response"

    def __post_init__(self) -> None:
        if not (
            (
                (self.prompt_token_ids is UNSET)
                and (self.generation_token_ids is UNSET)
                and (self.generation_log_probs is UNSET)
                and (self.routed_experts is UNSET)
            )
            or (
                (
                    self.prompt_token_ids is UNSET
                    or ((self.generation_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_token_ids is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_log_probs is not UNSET))
                )
                and (
                    self.generation_log_probs is UNSET
                    or ((self.prompt_token_ids is not UNSET) and (self.generation_token_ids is not UNSET))
                )
                and (
                    self.routed_experts is UNSET
                    or (
                        (self.prompt_token_ids is not UNSET)
                        and (self.generation_token_ids is not UNSET)
                        and (self.generation_log_probs is not UNSET)
                    )
                )
            )
        ):
            raise ValueError("McpApprovalResponse does not satisfy its schema")


class AgentInvocation(
    MemberStruct, kw_only=True, forbid_unknown_fields=True, tag_field="kind", tag="agent_invocation", gc=False
):
    invocation_id: str
    parent_invocation_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    spawned_by_tool_call_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[Literal["completed", "failed", "incomplete", "unknown"], msgspec.UnsetType] = msgspec.UNSET
    duration_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    error_type: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    model_calls: Union[list[ModelCallRef], msgspec.UnsetType] = msgspec.UNSET
    conversation: Union[
        list[
            Union[
                MergedMessage,
                FunctionCall,
                FunctionCallOutput,
                Reasoning,
                McpCall,
                McpListTools,
                McpApprovalRequest,
                FileSearchCall,
                WebSearchCall,
                ComputerCall,
                ImageGenerationCall,
                CodeInterpreterCall,
                LocalShellCall,
                CustomToolCall,
                ComputerCallOutput,
                CustomToolCallOutput,
                LocalShellCallOutput,
                McpApprovalResponse,
            ]
        ],
        msgspec.UnsetType,
    ] = msgspec.UNSET
    kind = "agent_invocation"


class ToolCallObservation(
    MemberStruct, kw_only=True, forbid_unknown_fields=True, tag_field="kind", tag="tool_call", gc=False
):
    invocation_id: str
    tool_call_id: str
    sandbox_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    tool_name: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    started_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    completed_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    duration_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    timing_source: Union[Literal["executor", "artifact", "harness"], None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[
        Literal["completed", "failed", "timeout", "cancelled", "incomplete", "unknown"], msgspec.UnsetType
    ] = msgspec.UNSET
    error_type: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    kind = "tool_call"


class ContextCompactionObservation(
    MemberStruct, kw_only=True, forbid_unknown_fields=True, tag_field="kind", tag="context_compaction", gc=False
):
    invocation_id: str
    observed_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    trigger: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    tokens_before: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_after: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    outcome: Union[Literal["completed", "failed", "aborted", "unknown"], msgspec.UnsetType] = msgspec.UNSET
    summary: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    first_kept_item_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    before_model_call: Union[ModelCallRef, None, msgspec.UnsetType] = msgspec.UNSET
    model_calls: Union[list[ModelCallRef], msgspec.UnsetType] = msgspec.UNSET
    after_model_call: Union[ModelCallRef, None, msgspec.UnsetType] = msgspec.UNSET
    kind = "context_compaction"


class SandboxObservation(
    MemberStruct, kw_only=True, forbid_unknown_fields=True, tag_field="kind", tag="sandbox", gc=False
):
    role: Literal["agent", "verifier", "environment"]
    provider: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    sandbox_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    outcome: Union[
        Literal["completed", "failed", "timeout", "oom", "sandbox_error", "cancelled", "unknown"], msgspec.UnsetType
    ] = msgspec.UNSET
    exit_code: Union[int, None, msgspec.UnsetType] = msgspec.UNSET
    wall_time_s: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    cpu_time_s: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    peak_memory_mib: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    resource_usage_source: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    error_type: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    kind = "sandbox"


class ObservationGap(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    code: str
    invocation_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    detail: Union[str, None, msgspec.UnsetType] = msgspec.UNSET


class AgentObservationBundle(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    source: str
    records: Union[
        list[Union[AgentInvocation, ToolCallObservation, ContextCompactionObservation, SandboxObservation]],
        msgspec.UnsetType,
    ] = msgspec.UNSET
    gaps: Union[list[ObservationGap], msgspec.UnsetType] = msgspec.UNSET


class Classifier(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    name: str
    version: str


class Signal(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    artifact: str
    field: str
    value: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET


class AgentOutcome(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    schema_version: Union[Literal["1.0"], msgspec.UnsetType] = msgspec.UNSET
    harness: str
    harness_version: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    classifier: Classifier
    response_status: Literal["completed", "failed", "incomplete"]
    failure_kind: Union[
        Literal[
            "model_context_limit",
            "model_output_limit",
            "model_request_error",
            "model_rate_limited",
            "model_server_error",
            "model_transport_error",
            "model_auth_error",
            "content_filter",
            "agent_max_turns",
            "agent_aborted",
            "agent_timeout",
            "agent_crash",
            "cleanup_failure",
            "unknown_error",
        ],
        None,
        msgspec.UnsetType,
    ] = msgspec.UNSET
    retryable: Union[bool, msgspec.UnsetType] = msgspec.UNSET
    partial_work_retained: Union[bool, msgspec.UnsetType] = msgspec.UNSET
    status_code: Union[int, None, msgspec.UnsetType] = msgspec.UNSET
    error_name: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    error_message: Union[Annotated[str, msgspec.Meta(max_length=16000)], None, msgspec.UnsetType] = msgspec.UNSET
    signals: Union[list[Signal], msgspec.UnsetType] = msgspec.UNSET
    warnings: Union[list[str], msgspec.UnsetType] = msgspec.UNSET


class CaptureExchange(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    model_call_id: str
    dialect: Union[Literal["responses", "chat", "messages"], None, msgspec.UnsetType] = msgspec.UNSET
    model_ref: Union[ModelServerRef, None, msgspec.UnsetType] = msgspec.UNSET
    started_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    completed_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    latency_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    latency_ttft_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    status_code: Union[int, None, msgspec.UnsetType] = msgspec.UNSET
    error_category: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    request: Union[dict[str, msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    response: Union[dict[str, msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    request_raw: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    response_raw: Union[str, None, msgspec.UnsetType] = msgspec.UNSET


class CaptureMetrics(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    tokens_in: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_out: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_reasoning: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_total: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    cached_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    latency_total_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    num_calls: Annotated[int, msgspec.Meta(ge=0)]


class CapturedToolCall(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    call_id: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    name: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    arguments: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET


class ModelCallRecord(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    model_call_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    response_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    call_index: Annotated[int, msgspec.Meta(ge=0)]
    model_ref: Union[ModelServerRef, None, msgspec.UnsetType] = msgspec.UNSET
    model: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    dialect: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status_code: Union[int, None, msgspec.UnsetType] = msgspec.UNSET
    response_status: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    finish_reason: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    started_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    completed_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    tokens_in: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_out: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_reasoning: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    tokens_total: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    request: Union[dict[str, msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    response: Union[dict[str, msgspec.Raw], None, msgspec.UnsetType] = msgspec.UNSET
    request_raw: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    response_raw: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    tool_calls: Union[list[CapturedToolCall], msgspec.UnsetType] = msgspec.UNSET
    reasoning_content: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    cache_hit: Union[bool, None, msgspec.UnsetType] = msgspec.UNSET
    cached_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    cache_creation_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    error_category: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    latency_total_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    latency_ttft_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET


class ModelCallCapture(MemberStruct, kw_only=True, forbid_unknown_fields=False, gc=False):
    rollout_id: str
    metrics: CaptureMetrics
    calls: list[ModelCallRecord]
    gaps: Union[list[ObservationGap], msgspec.UnsetType] = msgspec.UNSET


class AgentInvocation_(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    kind: Union[Literal["agent_invocation"], msgspec.UnsetType] = msgspec.UNSET
    invocation_id: str
    parent_invocation_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    spawned_by_tool_call_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[Literal["completed", "failed", "incomplete", "unknown"], msgspec.UnsetType] = msgspec.UNSET
    duration_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    error_type: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    model_calls: Union[list[ModelCallRef], msgspec.UnsetType] = msgspec.UNSET
    conversation: Union[
        list[
            Union[
                MergedMessage,
                FunctionCall,
                FunctionCallOutput,
                Reasoning,
                McpCall,
                McpListTools,
                McpApprovalRequest,
                FileSearchCall,
                WebSearchCall,
                ComputerCall,
                ImageGenerationCall,
                CodeInterpreterCall,
                LocalShellCall,
                CustomToolCall,
                ComputerCallOutput,
                CustomToolCallOutput,
                LocalShellCallOutput,
                McpApprovalResponse,
            ]
        ],
        msgspec.UnsetType,
    ] = msgspec.UNSET


class TrajectoryTurn(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    invocation_id: str
    task_id: str
    rollout_id: str
    turn_no: Annotated[int, msgspec.Meta(ge=1)]
    timestamp: Union[int, float]
    question: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    answer: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    reasoning_content: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    resolved: Union[bool, None, msgspec.UnsetType] = msgspec.UNSET
    step_count: Annotated[int, msgspec.Meta(ge=0)]
    model_calls: Union[list[ModelCallRef], msgspec.UnsetType] = msgspec.UNSET


class TrajectoryResponseMetadata(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    response_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    model_ref: Union[ModelServerRef, None, msgspec.UnsetType] = msgspec.UNSET
    model: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    dialect: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    status_code: Union[int, None, msgspec.UnsetType] = msgspec.UNSET
    response_status: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    finish_reason: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    error_category: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    latency_ttft_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET


class TrajectoryTokenStats(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    prompt_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    completion_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    reasoning_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    total_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET
    cached_tokens: Union[Annotated[int, msgspec.Meta(ge=0)], None, msgspec.UnsetType] = msgspec.UNSET


class TrajectoryModelCall(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    model_call_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    started_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    completed_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    duration_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    request: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    response: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    response_metadata: Union[TrajectoryResponseMetadata, msgspec.UnsetType] = msgspec.UNSET
    token_stats: Union[TrajectoryTokenStats, msgspec.UnsetType] = msgspec.UNSET


class TrajectoryToolCall(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    kind: Union[Literal["tool_call"], msgspec.UnsetType] = msgspec.UNSET
    invocation_id: str
    tool_call_id: str
    sandbox_id: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    tool_name: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    started_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    completed_at: Union[int, float, None, msgspec.UnsetType] = msgspec.UNSET
    duration_ms: Union[
        Annotated[int, msgspec.Meta(ge=0)], Annotated[float, msgspec.Meta(ge=0)], None, msgspec.UnsetType
    ] = msgspec.UNSET
    timing_source: Union[Literal["executor", "artifact", "harness"], None, msgspec.UnsetType] = msgspec.UNSET
    status: Union[
        Literal["completed", "failed", "timeout", "cancelled", "incomplete", "unknown"], msgspec.UnsetType
    ] = msgspec.UNSET
    error_type: Union[str, None, msgspec.UnsetType] = msgspec.UNSET
    output: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET


class TrajectoryRecord(MemberStruct, kw_only=True, forbid_unknown_fields=True, gc=False):
    schema_version: Union[Literal["1.0"], msgspec.UnsetType] = msgspec.UNSET
    task_id: str
    rollout_id: str
    invocations: Union[list[AgentInvocation_], msgspec.UnsetType] = msgspec.UNSET
    turns: Union[list[TrajectoryTurn], msgspec.UnsetType] = msgspec.UNSET
    model_calls: Union[list[TrajectoryModelCall], msgspec.UnsetType] = msgspec.UNSET
    tool_calls: Union[list[TrajectoryToolCall], msgspec.UnsetType] = msgspec.UNSET
    gaps: Union[list[ObservationGap], msgspec.UnsetType] = msgspec.UNSET


_h0 = conformer(Union[str, list[Union[InputText, InputImage, InputFile, InputAudio, InputVideo]]])
_h1 = conformer(list[Union[InputText, InputImage, InputFile, InputAudio, InputVideo]])
_h2 = conformer(Literal["user", "system", "developer"])
_h3 = conformer(list[Union[OutputText, Refusal]])
_h4 = conformer(Literal["assistant"])


SCHEMA_TYPES: dict[str, Any] = {
    "agent_observations": AgentObservationBundle,
    "agent_outcome": AgentOutcome,
    "capture_exchange": CaptureExchange,
    "model_call_capture": ModelCallCapture,
    "trajectory": TrajectoryRecord,
}
"""The type of the schema of each kind of record, by the schema's name."""
