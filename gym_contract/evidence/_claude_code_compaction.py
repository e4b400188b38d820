"""Claude Code's hidden compaction calls: associate each with its compaction only on an exact summary match.

Claude Code summarises a conversation with a model call that its transcript never names. The
call can still be recognised in the capture: its request ends with Claude Code's summary prompt,
and the summary the transcript persists is the call's output, rewritten in a fixed way. Only a
unique, exact match is accepted (PRODUCERS 5.4); anything else is a gap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gym_contract.models import (
    AgentInvocation,
    AgentObservationBundle,
    ContextCompactionObservation,
    ModelCallRecord,
    ModelCallRef,
    ObservationGap,
)

__all__ = ["associate_compaction_calls"]

SUMMARY_PROMPT_MARKERS = (
    "Your task is to create a detailed summary of this conversation.",
    "Your task is to create a detailed summary of the conversation so far",
    "Your task is to create a detailed summary of the RECENT portion of the conversation",
)
SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)
# Sentences Claude Code may append after the summary, each optional, in this order.
_OPTIONAL_SUFFIXES = (
    r"\n\nIf you need specific details from before compaction \(like exact code snippets, error messages, "
    r"or content you generated\), read the full transcript at: [^\n]+",
    r"\n\nRecent messages are preserved verbatim\.",
    r"\n\nYour REPL VM state has been cleared as part of this compaction\. Variables defined in REPL calls "
    r"before this point are no longer accessible — redefine any you still need\.",
    r"\n\nContinue the conversation from where it left off without asking the user any further questions\. "
    r"Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface "
    r"with \"I'll continue\" or similar\. Pick up the last task as if the break never happened\.",
)
_SUFFIX = re.compile("".join(f"(?:{sentence})?" for sentence in _OPTIONAL_SUFFIXES))
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
_BLANK_LINES = re.compile(r"\n{2,}")

AMBIGUOUS_MATCH = "compaction_model_call_match_ambiguous"
REFERENCE_UNAVAILABLE = "compaction_model_call_reference_unavailable"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""


def _asks_for_summary(request: Any) -> bool:
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return False
    last = messages[-1]
    return last.get("role") == "user" and any(marker in _text(last.get("content")) for marker in SUMMARY_PROMPT_MARKERS)


def persisted_summary(model_output: str) -> str:
    """The summary text Claude Code stores for a compaction whose model call answered ``model_output``."""
    text = _ANALYSIS.sub("", model_output, count=1)
    text = _SUMMARY.sub(lambda found: "Summary:\n" + found.group(1).strip(), text, count=1)
    return SUMMARY_PREFIX + _BLANK_LINES.sub("\n\n", text).strip()


def _summary_matches(summary: str, response: Any) -> bool:
    output = _text(response.get("content")) if isinstance(response, dict) else ""
    if not output:
        return False
    expected = persisted_summary(output)
    return summary.startswith(expected) and _SUFFIX.fullmatch(summary[len(expected) :]) is not None


def _server(ref: Any) -> tuple[str, str] | None:
    return None if ref is None else (ref.type, ref.name)


def _exact_matches(ref: ModelCallRef, calls: Sequence[ModelCallRecord]) -> list[int]:
    """Calls a reference names exactly (the join's own matching rule).

    The reference's association matches a reference that has a `model_call_id` by that id alone,
    while its join also asks the reference's `model_ref` and `response_id` to agree. Using the join's
    rule here too keeps the association from owning a call, or ordering a compaction, by a reference
    that the joined bundle reports as matching nothing.
    """
    found = []
    for index, call in enumerate(calls):
        if ref.model_call_id:
            if call.model_call_id != ref.model_call_id:
                continue
            if ref.model_ref is not None and _server(call.model_ref) != _server(ref.model_ref):
                continue
            if ref.response_id and call.response_id != ref.response_id:
                continue
        elif not (
            ref.model_ref is not None
            and ref.response_id
            and call.response_id == ref.response_id
            and _server(call.model_ref) == _server(ref.model_ref)
        ):
            continue
        found.append(index)
    return found


def _candidates(
    compaction: ContextCompactionObservation, calls: Sequence[ModelCallRecord], referenced: set[int]
) -> list[int]:
    if compaction.outcome != "completed" or compaction.model_calls or not compaction.summary:
        return []
    servers = {_server(ref.model_ref) for ref in (compaction.before_model_call, compaction.after_model_call) if ref}
    servers.discard(None)
    lower = upper = None
    for bound, ref in (("lower", compaction.before_model_call), ("upper", compaction.after_model_call)):
        if ref is None:
            continue
        matched = _exact_matches(ref, calls)
        if len(matched) != 1:
            return []  # the order cannot be established: never guess
        if bound == "lower":
            lower = calls[matched[0]].call_index
        else:
            upper = calls[matched[0]].call_index
    found = []
    for index, call in enumerate(calls):
        if index in referenced or call.dialect != "messages" or call.error_category is not None:
            continue
        if not (isinstance(call.status_code, int) and 200 <= call.status_code < 300):
            continue
        if not (call.model_call_id or (call.model_ref is not None and call.response_id)):
            continue
        if servers and _server(call.model_ref) not in servers:
            continue
        if (lower is not None and call.call_index <= lower) or (upper is not None and call.call_index >= upper):
            continue
        if _asks_for_summary(call.request) and _summary_matches(compaction.summary, call.response):
            found.append(index)
    return found


def associate_compaction_calls(
    bundle: AgentObservationBundle, calls: Sequence[ModelCallRecord]
) -> AgentObservationBundle:
    """A new bundle in which each compaction with exactly one matching hidden call owns it."""
    records: list[Any] = list(bundle.records)
    invocations = {r.invocation_id: i for i, r in enumerate(records) if isinstance(r, AgentInvocation)}
    referenced = {
        index
        for record in records
        if isinstance(record, AgentInvocation)
        for ref in record.model_calls
        for index in _exact_matches(ref, calls)
    }
    compactions = [i for i, r in enumerate(records) if isinstance(r, ContextCompactionObservation)]
    candidates = {i: _candidates(records[i], calls, referenced) for i in compactions}
    claims: dict[int, int] = {}
    for found in candidates.values():
        for index in found:
            claims[index] = claims.get(index, 0) + 1
    gaps = list(bundle.gaps)
    for position, found in candidates.items():
        compaction = records[position]
        if not found:
            continue
        if len(found) > 1 or claims[found[0]] > 1:
            detail = f"candidate_count={len(found)}"
            gaps.append(ObservationGap(code=AMBIGUOUS_MATCH, invocation_id=compaction.invocation_id, detail=detail))
            continue
        owner = invocations.get(compaction.invocation_id)
        if owner is None:
            # The join accepts a compaction's call only through its invocation's own model_calls
            # (CONTRACT 1.14 step 6): with no invocation to record it, the compaction stays unresolved,
            # as in the reference.
            continue
        call = calls[found[0]]
        ref = ModelCallRef(model_call_id=call.model_call_id, model_ref=call.model_ref, response_id=call.response_id)
        records[position] = compaction.model_copy(update={"model_calls": [ref]})
        records[owner] = _insert_ref(records[owner], ref, compaction)
    unresolved = {r.invocation_id for r in records if isinstance(r, ContextCompactionObservation) and not r.model_calls}
    gaps = [g for g in gaps if g.code != REFERENCE_UNAVAILABLE or g.invocation_id in unresolved]
    return bundle.model_copy(update={"records": records, "gaps": gaps})


def _insert_ref(
    invocation: AgentInvocation, ref: ModelCallRef, compaction: ContextCompactionObservation
) -> AgentInvocation:
    """The compaction's call goes where it happened: before the call after it, else after the one before."""
    refs = list(invocation.model_calls)
    if compaction.after_model_call in refs:
        refs.insert(refs.index(compaction.after_model_call), ref)
    elif compaction.before_model_call in refs:
        refs.insert(refs.index(compaction.before_model_call) + 1, ref)
    else:
        refs.append(ref)
    return invocation.model_copy(update={"model_calls": refs})
