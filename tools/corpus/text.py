"""Seeded filler text in the styles agents produce, sized so that a record comes out near the asked size."""

from __future__ import annotations

import random
import re
from typing import Any

import orjson

MIN_TEXT_BYTES = 24
TEXT_WEIGHT = {"shell": 2.0, "read": 3.0, "edit": 1.2, "search": 1.5}  # tool outputs dominate real transcripts

VOCABULARY = {
    "noun": ("config", "record", "index", "buffer", "schema", "token", "cache", "stream", "batch", "session"),
    "verb": ("load", "parse", "read", "write", "build", "flush", "resolve", "merge", "validate", "emit"),
    "word": ("empty", "stale", "nested", "partial", "missing", "first", "last", "pending", "cached", "sorted"),
    "pkg": ("core", "io", "engine", "cli", "utils"),
    "n": tuple(map(str, range(4096))),
}
PROSE = (
    "I'll open `src/{pkg}/{noun}.py` to see how `{verb}_{noun}` handles an empty {noun}.",
    "The failure comes from `{verb}_{noun}`: it returns {n} where the test expects {n}.",
    "`{verb}_{noun}` keeps every {noun} in memory, so a large {noun} makes it slow.",
    "The {noun} and the {noun} disagree after the {word} step, which explains the error.",
    "All {n} tests pass now; the fix is in `{verb}_{noun}`, so I will run the {noun} tests once more.",
    "That explains the off-by-one: `{verb}_{noun}` skips the {word} {noun} when the {noun} is {word}.",
)
CODE = (  # one function, line by line, so that a numbered window of it reads like a source file
    "def {verb}_{noun}({noun}, limit=None):",
    '    """Return the {word} {noun} of each {noun}."""',
    "    if {noun} is None:",
    '        raise ValueError("{noun} must not be empty")',
    "    for item in {noun}_list[:limit]:",
    "        yield {verb}_{noun}(item, {n})",
    "",
)
SHELL = (
    "tests/test_{noun}.py::test_{verb}_{noun} PASSED",
    "FAILED tests/test_{noun}.py::test_{verb}_{noun} - AssertionError: assert {n} == {n}",
    '  File "/workspace/src/{pkg}/{noun}.py", line {n}, in {verb}_{noun}',
    "==== {n} passed, {n} failed in 12.{n}s ====",
)
TASK_PROMPT = "Task {n}: `tests/test_{noun}.py::test_{verb}_{noun}` fails. Fix the code in /workspace.\n\n"
SPAWN_PROMPT = "Find the callers of `{verb}_{noun}` in src/{pkg} that pass a {word} {noun}; give file and line."
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def expand(rng: random.Random, template: str) -> str:
    """The template with each placeholder drawn afresh, so that one template gives many texts."""
    return PLACEHOLDER.sub(lambda match: rng.choice(VOCABULARY[match[1]]), template)


def compose(rng: random.Random, style: str, budget: int) -> str:
    """Text in `style` whose JSON-escaped length is `budget` bytes (ASCII only, so characters are bytes)."""
    parts, used, line_no = [], 0, rng.randint(1, 300)
    while used < budget:
        if style in ("read", "edit"):  # file contents as numbered lines, the way agents' read tools show them
            part = f"{line_no:>6}\t{expand(rng, CODE[line_no % len(CODE)])}"
            line_no += 1
        elif style == "search":  # grep's file:line:match
            part = expand(rng, "src/{pkg}/{noun}.py:{n}:" + CODE[0])
        elif style == "shell":
            part = expand(rng, rng.choice(SHELL))
        else:
            part = expand(rng, rng.choice(PROSE)) + ("\n" if rng.random() < 0.2 else "")
        cost = len(part) + part.count('"') + part.count("\\") + part.count("\t") + 2 * part.count("\n") + 2
        if used + cost > budget:  # end on a whole word near the budget
            part = part[: max(0, budget - used - 2)].rsplit(" ", 1)[0]
        parts.append(part)
        used += cost
    return (" " if style == "prose" else "\n").join(parts)


class TextSlot:
    """A long text, sized once the whole record exists: a text shown in several places (a tool output sits
    in the conversation, the tool call and the next request) costs its length once per place."""

    __slots__ = ("copies", "head", "style", "text", "weight")

    def __init__(self, style: str, weight: float, head: str = "") -> None:
        self.style, self.weight, self.head, self.copies, self.text = style, weight, head, 0, head

    def counted(self) -> str:
        self.copies += 1
        return self.head


def fill_slots(rng: random.Random, record: dict[str, Any], slots: list[TextSlot], target_bytes: int) -> dict:
    """Share the bytes the structure leaves among the slots by weight; return plain JSON data."""
    structure = len(orjson.dumps(record, default=TextSlot.counted))
    bytes_per_weight = max(0, target_bytes - structure) / (sum(s.weight * s.copies for s in slots) or 1.0)
    for slot in slots:
        slot.text = slot.head + compose(rng, slot.style, max(MIN_TEXT_BYTES, int(bytes_per_weight * slot.weight)))
    return orjson.loads(orjson.dumps(record, default=lambda slot: slot.text))
