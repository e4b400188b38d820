"""Conversation items at the edges of their shapes: video parts, and items that do not say their type."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from gym_contract import iter_diagnostics, schemas
from gym_contract.cli import main
from gym_contract.models import AgentInvocation
from tests.schema_instances import schema_instances
from tests.support import model_accepts, model_entities

ITEM = model_entities()["conversation_item"]
ITEM_SCHEMA = schemas.validator("conversation_item")
VIDEO = "https://example.com/clip.mp4"


def judged(item: Any) -> tuple[bool, bool]:
    """What the schema and the generated models say of one conversation item."""
    return ITEM_SCHEMA.is_valid(item), model_accepts(ITEM, item)


def user_message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what happens?"}, *parts]}


def bundle_file(tmp_path: Path, *conversation: dict[str, Any]) -> Path:
    bundle = {
        "source": "claude_code",
        "records": [{"kind": "agent_invocation", "invocation_id": "root", "conversation": list(conversation)}],
    }
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    return path


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(["validate", str(path), "--format", "json", "--quiet"])
    return status, json.loads(capsys.readouterr().out)


# --- input_video: the reference's own content part (nemo_gym/openai_utils.py) -------------------------


@pytest.mark.parametrize(
    "part",
    [
        pytest.param({"type": "input_video", "video_url": VIDEO}, id="video_url-text"),
        pytest.param({"type": "input_video", "video_url": {"url": VIDEO}}, id="video_url-object"),
        pytest.param({"type": "input_video", "video": VIDEO}, id="video-text"),
        pytest.param({"type": "input_video", "video": {"url": "data:video/mp4;base64,AAAA"}}, id="video-object"),
        pytest.param({"type": "input_video", "video_url": {"url": VIDEO, "fps": 2}}, id="source-extras"),
        pytest.param({"type": "input_video", "video_url": f"  {VIDEO}  "}, id="padded-url"),
    ],
)
def test_a_video_part_naming_one_video_is_accepted(part):
    assert judged(user_message(part)) == (True, True)


@pytest.mark.parametrize(
    "part",
    [
        pytest.param({"type": "input_video"}, id="no-source"),
        pytest.param({"type": "input_video", "video_url": VIDEO, "video": VIDEO}, id="both-sources"),
        pytest.param({"type": "input_video", "video_url": VIDEO, "video": None}, id="a-null-second-source"),
        pytest.param({"type": "input_video", "video_url": None}, id="null-source"),
        pytest.param({"type": "input_video", "video_url": {"uri": VIDEO}}, id="object-without-url"),
        pytest.param({"type": "input_video", "video_url": 5}, id="number"),
    ],
)
def test_a_video_part_without_exactly_one_video_is_rejected(part):
    assert judged(user_message(part)) == (False, False)


# Every character Python's str.isspace() counts: the reference strips the URL before its emptiness check.
WHITE_SPACE = [chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace()]


@pytest.mark.parametrize("blank", ["", *WHITE_SPACE, " \t\u3000\x1c"], ids=repr)
def test_a_blank_video_url_is_rejected(blank):
    assert judged(user_message({"type": "input_video", "video_url": blank})) == (False, False)
    assert judged(user_message({"type": "input_video", "video": {"url": blank}})) == (False, False)


def test_the_schema_counts_as_white_space_exactly_what_python_strips():
    not_blank = re.compile(schemas.get("agent_invocation")["$defs"]["VideoLocation"]["pattern"])
    disagreeing = [
        hex(code) for code in range(sys.maxunicode + 1) if bool(not_blank.search(chr(code))) is chr(code).isspace()
    ]
    assert disagreeing == []


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"role": "developer", "content": [{"type": "input_video", "video": VIDEO}]}, id="easy-untyped"),
        pytest.param(
            {"type": "message", "role": "assistant", "content": [{"type": "input_video", "video": VIDEO}]},
            id="easy-assistant",
        ),
        pytest.param(
            {
                "type": "message",
                "role": "system",
                "status": "completed",
                "content": [{"type": "input_video", "video": VIDEO}],
            },
            id="input-message",
        ),
        pytest.param(
            {
                **user_message({"type": "input_video", "video": VIDEO}),
                "prompt_token_ids": [1],
                "generation_token_ids": [2],
                "generation_log_probs": [-0.5],
            },
            id="training-variant",
        ),
    ],
)
def test_every_message_form_that_takes_input_parts_takes_a_video(message):
    assert judged(message) == (True, True)


def test_a_video_part_keeps_its_fields_through_the_model():
    part = {"type": "input_video", "video_url": {"url": VIDEO}}
    invocation = AgentInvocation.model_validate({"invocation_id": "root", "conversation": [user_message(part)]})
    assert invocation.model_dump(mode="json", exclude_unset=True)["conversation"][0]["content"][1] == part


def test_validate_accepts_a_bundle_whose_conversation_shows_a_video(tmp_path, capsys):
    path = bundle_file(tmp_path, user_message({"type": "input_video", "video_url": VIDEO}))
    status, summary = validate(path, capsys)
    assert (status, summary["verdict"], summary["diagnostics"]) == (0, "pass", [])


def test_validate_rejects_a_video_part_with_two_videos(tmp_path, capsys):
    path = bundle_file(tmp_path, user_message({"type": "input_video", "video_url": VIDEO, "video": VIDEO}))
    status, summary = validate(path, capsys)
    assert status == 1
    assert [(d["code"], d["path"]) for d in summary["diagnostics"]] == [
        ("schema_violation", "/records/0/conversation/0/content")
    ]


def test_the_engine_reports_a_blank_video_at_its_item():
    invocation = {"kind": "agent_invocation", "invocation_id": "r"}
    bundle = {
        "source": "pi",
        "records": [{**invocation, "conversation": [user_message({"type": "input_video", "video": " "})]}],
    }
    assert [(d.code, d.path) for d in iter_diagnostics(bundle, "bundle")] == [
        ("schema_violation", "/records/0/conversation/0/content")
    ]


# --- items without `type`: read as a message, or rejected -----------------------------------------------
# The reference's union (NeMoGymResponseInputItem, pydantic smart mode) reads an item without `type` as any
# branch whose required fields it has, defaulting `type`; one that fits none becomes `mcp_list_tools`, whose
# fields are all optional. Pinned here: only a message may omit `type`; anything else without it is rejected.


@pytest.mark.parametrize(
    "item",
    [
        pytest.param({"role": "user", "content": "q"}, id="easy-input"),
        pytest.param(
            {"role": "system", "status": "completed", "content": [{"type": "input_text", "text": "q"}]}, id="input"
        ),
        pytest.param(
            {"id": "m1", "role": "assistant", "content": [{"type": "output_text", "text": "a", "annotations": []}]},
            id="output",
        ),
    ],
)
def test_a_message_without_type_is_read_as_a_message(item):
    assert judged(item) == (True, True)
    assert ITEM.dump_python(ITEM.validate_python(item), mode="json")["type"] == "message"


@pytest.mark.parametrize(
    "item",
    [
        pytest.param({}, id="empty"),
        pytest.param({"role": "user"}, id="message-without-content"),
        pytest.param({"role": "tool", "content": "x"}, id="message-with-a-role-no-message-has"),
        pytest.param({"role": "user", "content": 5}, id="message-with-content-of-no-type"),
        pytest.param({"tools": [], "server_label": "s"}, id="mcp-listing-fields"),
    ],
)
def test_an_item_without_type_that_is_no_message_is_rejected_not_retyped(item):
    # The reference accepts each of these as an `mcp_list_tools` item.
    assert judged(item) == (False, False)


@pytest.mark.parametrize(
    ("item", "item_type"),
    [
        ({"arguments": "{}", "call_id": "c", "name": "f"}, "function_call"),
        ({"call_id": "c", "output": "ok"}, "function_call_output"),
        ({"id": "rs_1", "summary": []}, "reasoning"),
        ({"arguments": "{}", "name": "f", "server_label": "s"}, "mcp_call"),
        ({"arguments": "{}", "name": "f", "id": "a"}, "mcp_approval_request"),
        ({"tools": []}, "mcp_list_tools"),
    ],
)
def test_an_item_of_another_type_is_accepted_only_when_it_states_it(item, item_type):
    # The reference defaults `type` for these too; the contract asks for it, so that the shape alone never decides.
    assert judged(item) == (False, False)
    assert judged({**item, "type": item_type}) == (True, True)


@given(schema_instances("conversation_item"))
def test_no_item_loses_its_type_and_comes_back_as_another(instance):
    untyped = {key: value for key, value in instance.items() if key != "type"}
    valid = ITEM_SCHEMA.is_valid(untyped)
    assert valid == model_accepts(ITEM, untyped)
    if valid:
        assert ITEM.dump_python(ITEM.validate_python(untyped), mode="json")["type"] == "message"


def test_validate_rejects_an_item_without_type_that_is_no_message(tmp_path, capsys):
    status, summary = validate(bundle_file(tmp_path, {"role": "user"}), capsys)
    assert status == 1
    assert [(d["code"], d["path"]) for d in summary["diagnostics"]] == [
        ("schema_violation", "/records/0/conversation/0")
    ]
