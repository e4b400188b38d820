"""OpenCode producer: an export, an `opencode.db` or a `storage/` tree to observations, outcome and run summary."""

from __future__ import annotations

import os
from typing import Any, Final

from gym_contract._values import count, finite, obj
from gym_contract.models import AgentObservationBundle, AgentOutcome
from gym_contract.outcome._base import check_process_facts
from gym_contract.outcome._opencode import classify_opencode
from gym_contract.producers._kit import ArtifactForm, Observed, Producer, Rating, RunSummary, gap
from gym_contract.producers.opencode._forms import Message, Session, Store, export_document, read_store
from gym_contract.producers.opencode._mapping import Mapped, invocation_records, map_store, tool_records

__all__ = ["PRODUCER", "SOURCE", "observe"]

SOURCE: Final = "opencode"


def observe(
    path: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    sandboxed: bool | None = None,
) -> Observed:
    """Read one OpenCode run's artifact: an `opencode export` JSON, an `opencode.db`, a `storage/` folder, or a
    data folder holding one; the form is told from the content.

    The artifact holds no provider response ids, so ``model_ref`` (the model server that served the
    run) makes no model-call reference; the run is joined to its captured calls at rollout level.
    ``exit_code`` and ``timed_out`` are what the host saw of the process: they decide the status of
    every session without a parent, as OpenCode's own exit does. ``sandboxed=False`` says the agent
    ran on the host (gap `no_sandbox_runtime`), which no artifact can tell. Unreadable or malformed
    records become gaps. Raises `UnrecognisedArtifactError` for a path that is none of the forms (nothing
    there, a folder holding no store, a file that is neither an export nor a database with
    OpenCode's tables); TypeError or ValueError only for an ``exit_code`` that is not an integer
    within 64 bits.
    """
    check_process_facts(exit_code, None)
    del model_ref  # no record of OpenCode's names a response id it could pair with
    store = read_store(path)
    mapped = map_store(store)
    ending = _ending(exit_code, timed_out)
    invocations, invocation_gaps = invocation_records(store, mapped, ending)
    tools, tool_gaps = tool_records(mapped)
    gaps = store.gaps + mapped.gaps + invocation_gaps + tool_gaps
    if not invocations:
        gaps.append(gap("agent_transcript_unavailable"))
    gaps.append(gap("model_call_ownership_unavailable"))
    if timed_out:
        gaps.append(gap("agent_run_timeout"))
    if sandboxed is False:
        gaps.append(gap("no_sandbox_runtime"))
    records = [*invocations, *tools, *mapped.compactions]
    bundle = AgentObservationBundle.model_validate({"source": SOURCE, "records": records, "gaps": gaps})
    main = _main_session(store)
    ended = _outcome(store, main, exit_code, timed_out)
    return Observed(bundle, ended, _summary(store, mapped, len(mapped.compactions)))


def _ending(exit_code: int | None, timed_out: bool) -> tuple[str, str | None] | None:
    """The status the process gives every session without a parent, when the host saw how it ended."""
    if timed_out:
        return "incomplete", "timeout"
    if exit_code is None:
        return None
    return ("completed", None) if exit_code == 0 else ("failed", f"process_exit_{exit_code}")


def _main_session(store: Store) -> Session | None:
    """The run's own session: the last one started without a parent (a data folder may hold earlier runs)."""
    roots = [session for session in store.sessions if session.parent_id is None]
    return roots[-1] if roots else (store.sessions[0] if store.sessions else None)


def _outcome(store: Store, main: Session | None, exit_code: int | None, timed_out: bool) -> AgentOutcome | None:
    """The OpenCode classifier's verdict on the main session, read as the export it would be; None without evidence."""
    if main is None and exit_code is None and not timed_out:
        return None
    export = export_document(store, main) if main is not None else None
    return classify_opencode(export, exit_code=exit_code, timed_out=timed_out)


def _roots(store: Store) -> set[str]:
    return {session.session_id for session in store.sessions if session.parent_id is None}


def _is_turn(message: Message) -> bool:
    # A compaction's summary is written by OpenCode's summariser, not a turn of the agent's work.
    return message.info.get("role") == "assistant" and message.info.get("summary") is not True


def _summary(store: Store, mapped: Mapped, compactions: int) -> RunSummary:
    roots = _roots(store)
    known = {session.session_id for session in store.sessions}
    turns = [message for message in store.messages if message.session_id in known and _is_turn(message)]
    tokens = _tokens(message for message in store.messages if message.session_id in known)
    return RunSummary(
        tool_calls=len(mapped.tools),
        tool_errors=sum(1 for tool in mapped.tools if tool.status == "failed"),
        main_turns=sum(1 for message in turns if message.session_id in roots),
        subagent_turns=sum(1 for message in turns if message.session_id not in roots),
        subagent_calls=len({(tool.owner, tool.call_id) for tool in mapped.tools if tool.child is not None}),
        compactions=compactions,
        duration_s=_duration_s([message for message in store.messages if message.session_id in roots]),
        input_tokens=tokens["input_tokens"],
        output_tokens=tokens["output_tokens"],
        cached_tokens=tokens["cached_tokens"],
        reasoning_tokens=tokens["reasoning_tokens"],
    )


def _duration_s(messages: list[Message]) -> float | None:
    """From the main session's first message to the end of its last: what the artifact says the run took."""
    starts: list[float] = []
    ends: list[float] = []
    for message in messages:
        time = obj(message.info.get("time")) or {}
        created, completed = finite(time.get("created")), finite(time.get("completed"))
        if created is not None:
            starts.append(created)
        ends += [stamp for stamp in (created, completed) if stamp is not None]
    if not starts or not ends or max(ends) < min(starts):
        return None
    return finite((max(ends) - min(starts)) / 1000)


_TOKEN_FIELDS: Final = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")


def _tokens(messages: Any) -> dict[str, int | None]:
    """Token totals of every assistant message, each counted once.

    OpenCode writes a step's usage on its `step-finish` part and the same numbers on the assistant
    message (one step per message); the step-finish parts are summed where a message has them, the
    message's own `tokens` only where it has none. ``input_tokens`` counts every prompt token:
    OpenCode's `input` excludes the cache reads and writes, which are added back.
    """
    totals = dict.fromkeys(_TOKEN_FIELDS, 0)
    stated = False
    for message in messages:
        if message.info.get("role") != "assistant":
            continue
        steps = [obj(part.data.get("tokens")) for part in message.parts if part.data.get("type") == "step-finish"]
        usages: list[dict[str, Any] | None] = [usage for usage in steps if usage is not None]
        usages = usages or [obj(message.info.get("tokens"))]
        for usage in usages:
            counted = _usage(usage)
            if counted is None:
                continue
            stated = True
            for name, value in counted.items():
                totals[name] += value
    return dict(totals) if stated else dict.fromkeys(_TOKEN_FIELDS)


def _usage(usage: dict[str, Any] | None) -> dict[str, int] | None:
    if usage is None:
        return None
    cache = obj(usage.get("cache")) or {}
    fresh, output, reasoning = count(usage.get("input")), count(usage.get("output")), count(usage.get("reasoning"))
    read, written = count(cache.get("read")) or 0, count(cache.get("write")) or 0
    if fresh is None or output is None:
        return None
    return {
        "input_tokens": fresh + read + written,
        "output_tokens": output,
        "cached_tokens": read,
        "reasoning_tokens": reasoning or 0,
    }


PRODUCER: Final = Producer(
    name="opencode",
    source=SOURCE,
    summary="an OpenCode run: its `opencode export` JSON, its opencode.db, its storage/ folder, or the data folder",
    forms=(
        ArtifactForm("export", "`opencode export <session>` output: the session's info and its messages with parts"),
        ArtifactForm(
            "SQLite store",
            "OpenCode ≥ 1.2's opencode.db (session, message and part tables), opened read-only from its own file: "
            "not from stdin, nor compressed",
        ),
        ArtifactForm(
            "storage folder",
            "OpenCode ≤ 1.1's storage/: session/<project>/<id>.json, message/<session>/<id>.json, "
            "part/<message>/<id>.json",
        ),
        ArtifactForm("data folder", "OpenCode's data folder (XDG_DATA_HOME or its opencode/) holding either store"),
    ),
    capability={
        "C1": Rating(
            "O",
            "no record names a provider response id, so no captured call is owned by an invocation "
            "(gap model_call_ownership_unavailable); the calls join the rollout, not its invocations",
        ),
        "C2": Rating("O", "the captured calls carry token counts, but none is owned by an invocation"),
        "C3": Rating("X", "no turns: a harness does not know the task's turns, question, answer or resolution"),
        "C4": Rating(
            "O",
            "the conversation of every session from its parts, pruned tool outputs as the model saw them, "
            "with compactions; the model calls behind it are not owned",
        ),
        "C5": Rating("V", "every tool part states its output, status, start and end"),
        "C6": Rating("V", "each tool part is timed by OpenCode itself, parallel calls included"),
        "C7": Rating(
            "V", "one invocation per session with its parent and spawning task call; how the run ended from the root"
        ),
    },
    observe=observe,
    docs="guides/opencode.md",
)
