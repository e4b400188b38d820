"""Conversation lineage: chain captured model calls to the calls they continue, by fingerprint version 4."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from gym_contract.lineage._hash import (
    DIGEST_DOMAIN,
    FINGERPRINT_VERSION,
    Field,
    assistant_fingerprint,
    conversation_digest,
    conversation_fields,
    fingerprint_of,
    hash_fields,
    prefix_digests,
    request_items,
    response_items,
)
from gym_contract.models import ModelCallRecord

__all__ = [
    "AMBIGUOUS",
    "FINGERPRINT_VERSION",
    "NO_MATCH",
    "REQUEST_UNAVAILABLE",
    "RESOLVED",
    "ROOT",
    "UNRESOLVED",
    "Branch",
    "CallLineage",
    "CallStamp",
    "Conversation",
    "Lineage",
    "LineageIndex",
    "Resolution",
    "assistant_fingerprint",
    "chain",
    "conversation_digest",
    "record_items",
    "stamp",
]

ROOT: Final = "root"
RESOLVED: Final = "resolved"
UNRESOLVED: Final = "unresolved"
NO_MATCH: Final = "no_match"
AMBIGUOUS: Final = "ambiguous"
REQUEST_UNAVAILABLE: Final = "request_unavailable"
"""The call's request holds no conversation that can be read, so nothing can be said about its parent."""

Status = Literal["root", "resolved", "unresolved"]


@dataclass(frozen=True)
class Resolution:
    """Where a request comes from: ROOT, RESOLVED with its parent, or UNRESOLVED with the reason."""

    status: Status
    parent_call_id: str | None = None
    reason: str | None = None
    """`no_match`, `ambiguous` or `request_unavailable` when unresolved, else None."""
    candidates: tuple[str, ...] = ()
    """The verified candidates when the request is ambiguous, smallest call id first."""


@dataclass(frozen=True)
class CallStamp:
    """What the index knows of one call: the conversation it continues into and the context it was sent."""

    call_id: str
    fingerprint_version: int
    continuation_fingerprint: str
    """Fingerprint of the request plus the call's own output; "" when the output adds nothing model-authored."""
    context_length: int
    """Number of digest fields of the request (see the lineage page), not a count of dialect items."""
    context_digest: str
    output_digest: str
    """Digest of the output alone: identical retries share context and output."""


def _adds_model_content(output_authored: Sequence[Field]) -> bool:
    # Version 4, rule 3: a reply with nothing model-authored (reasoning only) would collide with its parent.
    return bool(output_authored)


@dataclass(frozen=True)
class _Fields:
    """The fingerprint and digest fields of a call's request and output, computed once per call."""

    request_authored: list[Field]
    request_fields: list[Field]
    output_authored: list[Field]
    output_fields: list[Field]

    @classmethod
    def of(cls, request: Sequence[object], output: Sequence[object]) -> _Fields:
        return cls(*conversation_fields(request), *conversation_fields(output))


def _stamp(call_id: str, fields: _Fields) -> CallStamp:
    continuation = ""
    if _adds_model_content(fields.output_authored):
        continuation = fingerprint_of([*fields.request_authored, *fields.output_authored])
    return CallStamp(
        call_id=call_id,
        fingerprint_version=FINGERPRINT_VERSION,
        continuation_fingerprint=continuation,
        context_length=len(fields.request_fields),
        context_digest=hash_fields(DIGEST_DOMAIN, fields.request_fields),
        output_digest=hash_fields(DIGEST_DOMAIN, fields.output_fields),
    )


def stamp(call_id: str, request: Sequence[object], output: Sequence[object]) -> CallStamp:
    """The version-4 stamp of a call that was sent `request` items and answered `output` items.

    Raises ValueError when an item hashed holds NaN or an infinity, TypeError when it holds a value
    that is not JSON (a set, say). JSON text never holds either.
    """
    return _stamp(call_id, _Fields.of(request, output))


def _retry_identity(entry: CallStamp) -> tuple[int, str, str]:
    return entry.context_length, entry.context_digest, entry.output_digest


class LineageIndex:
    """Calls by continuation fingerprint; resolves a request to the one call it continues."""

    def __init__(self, stamps: Iterable[CallStamp] = ()) -> None:
        self._by_fingerprint: dict[str, list[CallStamp]] = {}
        self._by_call_id: dict[str, CallStamp] = {}
        self._other_version: list[CallStamp] = []
        for entry in stamps:
            self.add(entry)

    @property
    def other_version(self) -> tuple[CallStamp, ...]:
        """Stamps of another fingerprint version: reported here, never indexed."""
        return tuple(self._other_version)

    def add(self, entry: CallStamp) -> None:
        """Index one stamp. Raises ValueError when its call id is already indexed with another stamp."""
        if entry.fingerprint_version != FINGERPRINT_VERSION:
            self._other_version.append(entry)
            return
        known = self._by_call_id.get(entry.call_id)
        if known is not None:
            if known != entry:
                raise ValueError(f"call {entry.call_id!r} is indexed twice with different stamps")
            return
        self._by_call_id[entry.call_id] = entry
        # A call whose reply adds nothing model-authored would collide with its own parent.
        if entry.continuation_fingerprint:
            self._by_fingerprint.setdefault(entry.continuation_fingerprint, []).append(entry)

    def resolve(self, request: Sequence[object]) -> Resolution:
        """ROOT, RESOLVED(parent) or UNRESOLVED(no_match | ambiguous) for a request's items.

        Raises ValueError or TypeError as `stamp` does, for items that are not JSON values.
        """
        return self._resolve(*conversation_fields(request))

    def _resolve(self, authored: Sequence[Field], fields: Sequence[Field]) -> Resolution:
        fingerprint = fingerprint_of(authored)
        if not fingerprint:
            return Resolution(ROOT)
        entries = self._by_fingerprint.get(fingerprint, [])
        prefixes = prefix_digests(fields, {entry.context_length for entry in entries})
        # Verified before counting: an unverified candidate must not make a request ambiguous.
        verified = [entry for entry in entries if prefixes.get(entry.context_length) == entry.context_digest]
        if not verified:
            return Resolution(UNRESOLVED, reason=NO_MATCH)
        if len({_retry_identity(entry) for entry in verified}) == 1:
            return Resolution(RESOLVED, parent_call_id=min(entry.call_id for entry in verified))
        return Resolution(UNRESOLVED, reason=AMBIGUOUS, candidates=tuple(sorted(e.call_id for e in verified)))


# --- a whole capture ---------------------------------------------------------------------------------


def record_items(record: ModelCallRecord) -> tuple[list[object] | None, list[object]]:
    """A captured call's request items (None when unreadable) and output items, by its dialect."""
    return request_items(record.dialect, record.request), response_items(record.dialect, record.response)


@dataclass(frozen=True)
class CallLineage:
    """One call of a capture: its place in the file, its resolution and the calls that continue it."""

    call_id: str
    call_index: int
    dialect: str | None
    resolution: Resolution
    children: tuple[str, ...] = ()
    conversation: int = 0
    """Position of its conversation in `Lineage.conversations`."""


@dataclass(frozen=True)
class Branch:
    """Calls that leave a chain: `calls[0]` continues `parent_call_id`, each next call the one before."""

    parent_call_id: str
    calls: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """A tree of calls grown from one call that continues no other (a root, or an unresolved call)."""

    top: str
    main_chain: tuple[str, ...]
    """The longest path from `top`; of equally long ones, the one whose last call was captured last."""
    branches: tuple[Branch, ...] = ()
    calls: tuple[str, ...] = ()
    """Every call of the tree, in capture order."""


@dataclass(frozen=True)
class Lineage:
    """The forest of a capture: every call's resolution, the conversations, and what could not be placed."""

    calls: dict[str, CallLineage] = field(default_factory=dict)
    """By call id, in capture order."""
    conversations: tuple[Conversation, ...] = ()
    """Ordered by the capture position of their top; the first is the main agent's."""
    unresolved: tuple[CallLineage, ...] = ()
    other_version: tuple[str, ...] = ()
    """Calls stamped with another fingerprint version: reported, not indexed (their requests still resolve)."""


def _call_ids(records: Sequence[ModelCallRecord]) -> list[str]:
    """Ids for the calls: `model_call_id`, else `#<call_index>`; a repeated id gets `#<call_index>` appended."""
    names = [record.model_call_id or f"#{record.call_index}" for record in records]
    repeated = {name for name, count in Counter(names).items() if count > 1}
    pairs = zip(names, records, strict=True)
    return [f"{name}#{record.call_index}" if name in repeated else name for name, record in pairs]


def _stamped_version(record: ModelCallRecord) -> object:
    return (record.model_extra or {}).get("fingerprint_version", FINGERPRINT_VERSION)


def _longest_path(start: str, children: dict[str, list[str]], index_of: dict[str, int]) -> tuple[str, ...]:
    best: dict[str, tuple[str, ...]] = {}
    # Post-order without recursion: conversations can be thousands of calls deep.
    stack: list[tuple[str, bool]] = [(start, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            tails = [best[child] for child in children.get(node, [])]
            longest = max((len(tail) for tail in tails), default=0)
            ties = [tail for tail in tails if len(tail) == longest]
            best[node] = (node, *max(ties, key=lambda tail: index_of[tail[-1]])) if ties else (node,)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children.get(node, []))
    return best[start]


def _conversation(top: str, children: dict[str, list[str]], index_of: dict[str, int]) -> Conversation:
    main = _longest_path(top, children, index_of)
    branches: list[Branch] = []
    pending = deque([main])  # breadth first: a branch's own branches come after its siblings
    while pending:
        path = pending.popleft()
        on_path = set(path)
        for node in path:
            for child in sorted(children.get(node, []), key=index_of.__getitem__):
                if child not in on_path:
                    branch = _longest_path(child, children, index_of)
                    branches.append(Branch(node, branch))
                    pending.append(branch)
    members: list[str] = []
    stack = [top]
    while stack:
        node = stack.pop()
        members.append(node)
        stack.extend(children.get(node, []))
    return Conversation(top, main, tuple(branches), tuple(sorted(members, key=index_of.__getitem__)))


def chain(records: Iterable[ModelCallRecord]) -> Lineage:
    """Resolve every call of a capture against all the others, and group the calls into conversations.

    The result does not depend on the order of `records`: every call is indexed before any is resolved.
    Raises ValueError when a hashed item of a record's request or output holds NaN or an infinity,
    TypeError when it holds a value that is not JSON. Records read from JSON text (`read_capture`)
    never do; a record that `derive_record` built from a Python value holding one may.
    """
    ordered = sorted(records, key=lambda record: record.call_index)
    ids = _call_ids(ordered)
    index_of = {call_id: record.call_index for call_id, record in zip(ids, ordered, strict=True)}
    prepared: list[_Fields | None] = []
    for record in ordered:
        request, output = record_items(record)
        prepared.append(None if request is None else _Fields.of(request, output))
    index = LineageIndex()
    other_version: list[str] = []
    for call_id, record, fields in zip(ids, ordered, prepared, strict=True):
        if _stamped_version(record) != FINGERPRINT_VERSION:
            other_version.append(call_id)
        elif fields is not None:
            index.add(_stamp(call_id, fields))
    resolutions = {
        call_id: Resolution(UNRESOLVED, reason=REQUEST_UNAVAILABLE)
        if fields is None
        else index._resolve(fields.request_authored, fields.request_fields)
        for call_id, fields in zip(ids, prepared, strict=True)
    }
    children: dict[str, list[str]] = {}
    for call_id in ids:
        parent = resolutions[call_id].parent_call_id
        if parent is not None:
            children.setdefault(parent, []).append(call_id)
    tops = [call_id for call_id in ids if resolutions[call_id].status != RESOLVED]
    conversations = [_conversation(top, children, index_of) for top in tops]
    conversation_of = {call_id: n for n, conversation in enumerate(conversations) for call_id in conversation.calls}
    calls = {
        call_id: CallLineage(
            call_id,
            record.call_index,
            record.dialect,
            resolutions[call_id],
            tuple(sorted(children.get(call_id, []), key=index_of.__getitem__)),
            conversation_of.get(call_id, -1),
        )
        for call_id, record in zip(ids, ordered, strict=True)
    }
    unresolved = tuple(call for call in calls.values() if call.resolution.status == UNRESOLVED)
    return Lineage(calls, tuple(conversations), unresolved, tuple(other_version))
