"""The harness artifacts that `outcome` and `observe` read: a file, one JSON object or lines of events,
refused with one line when it cannot be read or is not the harness's own."""

from __future__ import annotations

from typing import Any

import orjson

from gym_contract.producers._kit import artifact_bytes
from gym_contract.producers.codex._read import tells_codex
from gym_contract.reading._json_parsing import loads


class BadInputError(Exception):
    """An input the command cannot use; each of its arguments is one line the user sees."""


# The top-level event types of `claude -p --output-format stream-json --verbose`: every run's stream
# holds at least its `system` init event; `stream_event` comes with --include-partial-messages.
_CLAUDE_CODE_EVENT_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
CLAUDE_CODE_STREAM = (
    "Claude Code stream-json output",
    "a JSON object whose type is system, assistant, user, result or stream_event",
    lambda event: isinstance(kind := event.get("type"), str) and kind in _CLAUDE_CODE_EVENT_TYPES,
)
PI_ARTIFACT = (
    "a Pi session file or `pi --mode json` output",
    'a JSON object with a type (session, message, message_end …), or a {"t", "line"} receipt wrapper',
    lambda event: isinstance(event.get("type"), str) or set(event) == {"t", "line"},
)
# The Codex producer's own test, so that `outcome codex` takes the files `observe codex` takes.
CODEX_EVENTS = (
    "Codex rollout file or `codex exec --json` output",
    "a rollout line ({timestamp, type, payload}) or an exec event other than error (thread.started, turn.*, "
    "item.*); other harnesses print error lines too",
    tells_codex,
)
OPENCODE_EVENTS = (
    "`opencode run --format json` output",
    "a JSON object with a type and a sessionID",
    lambda event: isinstance(event.get("type"), str) and isinstance(event.get("sessionID"), str),
)


def harness_lines(path: str, artifact: tuple[str, str, Any]) -> list[bytes]:
    """The lines of a harness's JSONL ``artifact`` (what it is, what its events look like, the test of
    one), refused when some line holds something and none is such an event: a file of anything else
    would be classified as a run that crashed. An empty file is a run that printed nothing: kept."""
    what, looks_like, is_event = artifact
    lines = _lines(path)
    filled = [line for line in lines if line.strip()]
    if not filled:
        return lines
    for line in filled:
        try:
            event = loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and is_event(event):
            return lines
    raise BadInputError(f"{path}: not {what}: none of its {len(filled):,} lines is an event of it ({looks_like})")


def _read(path: str) -> bytes:
    """The file's, or stdin's ("-"), whole content as `validate` reads it: gzip and zstd decompressed."""
    try:
        return artifact_bytes(path)
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, not a file") from None
    except OSError as error:
        raise BadInputError(f"{path}: cannot be read ({error.strerror or error})") from None


def json_object(path: str, what: str) -> dict[str, Any]:
    try:
        value = loads(_read(path))
    except orjson.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise BadInputError(f"{path}: the {what} is not valid JSON ({where}): {error.msg}") from None
    if not isinstance(value, dict):
        raise BadInputError(f"{path}: the {what} must be a JSON object")
    return value


def _lines(path: str) -> list[bytes]:
    """The lines of a JSONL file, the first without a byte-order mark, unparsed: the classifier parses them
    and reports damaged ones as warnings.

    Only a line feed ends a line, as for the producers and every JSONL reader, so that a warning and a
    gap name the same line: `bytes.splitlines` would end one at a lone carriage return too.
    """
    lines = _read(path).split(b"\n")
    if not lines[-1]:
        lines.pop()  # what follows the last line feed, when nothing does
    return lines
