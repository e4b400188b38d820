"""`gym-contract lineage`: the conversations of a capture file as a tree, and every call that cannot be placed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from gym_contract.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    nothing_checked,
    print_json,
    say_damaged,
    usage_error,
    verdict,
)
from gym_contract.diagnostics import Diagnostic
from gym_contract.evidence._capture import CAPTURE_SUFFIX, read_capture_lines
from gym_contract.lineage import FINGERPRINT_VERSION, RESOLVED, UNRESOLVED, CallLineage, Lineage, chain
from gym_contract.reading._sources import STDIN_NAME, uncompressed_name


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}{'es' if noun.endswith('ch') else 's'}"


def _label(call: CallLineage) -> str:
    note = ""
    if call.resolution.status == UNRESOLVED:
        note = f"  UNRESOLVED {call.resolution.reason}"
        if call.resolution.candidates:
            note += f" ({', '.join(call.resolution.candidates)})"
    elif call.resolution.status != RESOLVED:
        note = "  root"
    return f"{call.call_id} [call_index {call.call_index}, dialect {call.dialect or 'unknown'}]{note}"


def _tree_lines(lineage: Lineage, top: str, branch_starts: set[str]) -> list[str]:
    lines = [f"  {_label(lineage.calls[top])}"]
    # Explicit stack of (call id, indent of its children, its own connector); deep chains are common.
    stack: list[tuple[str, str, str]] = []

    def push_children(call_id: str, indent: str) -> None:
        children = lineage.calls[call_id].children
        # Main-chain children first, so that the chain reads straight down.
        ordered = sorted(children, key=lambda child: child in branch_starts)
        for position in reversed(range(len(ordered))):
            last = position == len(ordered) - 1
            child_indent = indent + ("    " if last else "│   ")
            stack.append((ordered[position], child_indent, indent + ("└── " if last else "├── ")))

    push_children(top, "  ")
    while stack:
        call_id, child_indent, connector = stack.pop()
        marker = "  (branch)" if call_id in branch_starts else ""
        lines.append(f"{connector}{_label(lineage.calls[call_id])}{marker}")
        push_children(call_id, child_indent)
    return lines


def render_text(lineage: Lineage, name: str, out: TextIO, damaged_lines: int = 0) -> None:
    """The readable tree: one block per conversation, then the unresolved calls with their reasons."""
    conversations = len(lineage.conversations)
    # Damaged lines hold calls that are in no tree: said here as on stderr, where each is named.
    damaged = f", {_count(damaged_lines, 'damaged line')} not chained" if damaged_lines else ""
    out.write(
        f"{name}: {_count(len(lineage.calls), 'call')}, {_count(conversations, 'conversation')}, "
        f"{len(lineage.unresolved)} unresolved{damaged} (fingerprint version {FINGERPRINT_VERSION})\n"
    )
    for number, conversation in enumerate(lineage.conversations, start=1):
        role = "main agent: starts first" if number == 1 else "starts later: a subagent or a separate conversation"
        top = lineage.calls[conversation.top]
        if top.resolution.status == UNRESOLVED:
            role = "grows from an unresolved call"
        out.write(
            f"\nconversation {number} ({role}): {_count(len(conversation.calls), 'call')}, "
            f"main chain {len(conversation.main_chain)}, {_count(len(conversation.branches), 'branch')}\n"
        )
        starts = {branch.calls[0] for branch in conversation.branches}
        for line in _tree_lines(lineage, conversation.top, starts):
            out.write(line + "\n")
    if lineage.unresolved:
        out.write("\nunresolved:\n")
        for call in lineage.unresolved:
            out.write(f"  {call.call_id} [call_index {call.call_index}]: {call.resolution.reason}\n")
    if lineage.other_version:
        out.write(f"\nstamped with another fingerprint version (not indexed): {', '.join(lineage.other_version)}\n")


def as_json(lineage: Lineage, damaged_lines: Sequence[Diagnostic] = ()) -> dict[str, Any]:
    """The lineage as JSON-ready data, with the damaged lines of its capture, whose calls it cannot chain."""
    return {
        "fingerprint_version": FINGERPRINT_VERSION,
        "calls": [
            {
                "call_id": call.call_id,
                "call_index": call.call_index,
                "dialect": call.dialect,
                "resolution": call.resolution.status,
                "parent_call_id": call.resolution.parent_call_id,
                "reason": call.resolution.reason,
                "candidates": list(call.resolution.candidates),
                "conversation": call.conversation,
            }
            for call in lineage.calls.values()
        ],
        "conversations": [
            {
                "top": conversation.top,
                "main_chain": list(conversation.main_chain),
                "branches": [
                    {"parent_call_id": branch.parent_call_id, "calls": list(branch.calls)}
                    for branch in conversation.branches
                ],
                "calls": list(conversation.calls),
            }
            for conversation in lineage.conversations
        ],
        "unresolved": [
            {"call_id": call.call_id, "reason": call.resolution.reason, "candidates": list(call.resolution.candidates)}
            for call in lineage.unresolved
        ],
        "other_version": list(lineage.other_version),
        "damaged_lines": [damaged.to_dict() for damaged in damaged_lines],
    }


def _lineage(args: argparse.Namespace) -> int:
    path = Path(args.capture)
    stdin = args.capture == "-"  # read as `validate` reads it, whatever a file of that name holds
    if not stdin and path.is_dir():
        return usage_error(f"cannot open {args.capture}: it is a directory; give one file of capture lines")
    if not stdin and not path.exists():  # a named pipe or /dev/stdin is no regular file, and is read all the same
        return usage_error(f"cannot open {args.capture}: no such file")
    # The calls chain by their content alone: the file may have any name, and no rollout id is needed.
    name = STDIN_NAME if stdin else path.name
    plain = uncompressed_name(name)
    capture = read_capture_lines(path, plain.removesuffix(CAPTURE_SUFFIX) if plain.endswith(CAPTURE_SUFFIX) else "")
    if capture.unreadable is not None:
        return usage_error(f"cannot read {args.capture}: {capture.unreadable}")
    for damaged in capture.damaged_lines:
        say_damaged(damaged)
    lineage = chain(capture.records)
    status = EXIT_FAILED if lineage.unresolved or capture.damaged_lines else EXIT_OK
    if not lineage.calls:
        status = nothing_checked(f"{args.capture} holds no captured call", args.allow_empty)
    verdict(args, status)
    if args.format == "json":
        print_json(as_json(lineage, capture.damaged_lines))
    else:
        render_text(lineage, name, sys.stdout, len(capture.damaged_lines))
    return status
