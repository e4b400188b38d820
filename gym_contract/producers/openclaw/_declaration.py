"""What the OpenClaw producers read and can deliver, declared once for `observe openclaw` and `observe pinchbench`."""

from __future__ import annotations

from typing import Final

from gym_contract.producers._kit import ArtifactForm, Rating

PINCHBENCH_FORM: Final = ArtifactForm(
    "PinchBench output folder",
    "`0001_transcripts/<task>.jsonl` (the run's transcript, whose `session` entry names the root session) "
    "beside `openclaw_sessions/agents/<id>/sessions/` (the session stores and transcripts copied from the sandbox)",
)

_OPENCLAW_FORMS: Final = (
    ArtifactForm(
        "home or state folder",
        "an OpenClaw home (holding `.openclaw/agents/`), its state folder `.openclaw/` (holding `agents/`) or the "
        "`agents/` folder itself: every `<id>/sessions/sessions.json` and the transcripts beside it",
    ),
    PINCHBENCH_FORM,
    ArtifactForm(
        "session transcript",
        "one `<sessionId>.jsonl` in the Pi session format, read without its store: no subagent tree",
    ),
)


def forms(name: str) -> tuple[ArtifactForm, ...]:
    """The artifact forms `observe <name>` reads: OpenClaw's three, or PinchBench's one."""
    return (PINCHBENCH_FORM,) if name == "pinchbench" else _OPENCLAW_FORMS


def capability() -> dict[str, Rating]:
    """C1–C7 as the OpenClaw artifacts reach them; a PinchBench folder holds the same artifacts, so the same."""
    return {
        "C1": Rating(
            "V",
            "each distinct `responseId` of an assistant message becomes a (model_ref, response_id) reference the "
            "join resolves; a message without one leaves the calls unowned (a gap)",
        ),
        "C2": Rating("V", "token counts come from the captured calls the references resolve to"),
        "C3": Rating("X", "no turns: a harness does not know the task's turns, question, answer or resolution"),
        "C4": Rating(
            "O",
            "the conversation from the transcript's messages with each compaction's summary and first kept entry; "
            "a transcript that branches (a `parentId` with two children) is reported, not rebuilt",
        ),
        "C5": Rating(
            "V",
            "each call's output and status from its `toolResult` (`isError`, `details.status`); its end from the "
            "result's `timestamp` and its start from `details.durationMs`",
        ),
        "C6": Rating(
            "V", "each call is timed by its own result's time and measured duration, so parallel calls are apart"
        ),
        "C7": Rating(
            "V",
            "the subagent tree from the stores' `spawnedBy` / `parentSessionKey`, each session's end from its last "
            "stop reason; the tool call that spawned a subagent is not recorded (a gap)",
        ),
    }
