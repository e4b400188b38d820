"""Render the generated parts of the docs from their sources; --check fails when a page is stale.

Hand-written pages under `docs/` hold generated blocks between two markers:

    <!-- BEGIN GENERATED schema:trajectory (tools/render_docs.py; do not edit by hand) -->
    ...
    <!-- END GENERATED schema:trajectory -->

The name after `GENERATED` says what fills the block:

    schema:<file>         schemas/v1/<file>.schema.json: fields, types, required, defaults, enums,
                          bounds, descriptions, rules, $defs and examples
    schema-index          every bundled schema and named fragment, with its $id
    gap-codes             schemas/v1/gap_codes.json, one anchor per code
    criteria-gaps         the same registry, by the capability criteria (C1-C7) each gap weakens
    errors                gym_contract.diagnostics.CODES, one anchor per code, each with its example
                          input from docs/examples/errors/ run through the command line
    cli                   the command's argparse parser (gym_contract.cli.build_parser())
    models                the public classes of gym_contract.models and the schema each follows
    console:<name>        a gym-contract command (see CONSOLE) run on the repository's examples
    assert-valid:<name>   what assert_valid says about docs/examples/<name>.json

Everything shown is produced by running the code, so --check also proves that every generated
example still behaves as the page says.

Usage:
    python tools/render_docs.py            # rewrite every generated block in place
    python tools/render_docs.py --check    # exit 1 and name each stale page; write nothing
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import posixpath
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing: use its package
    sys.path.insert(0, str(ROOT))

from gym_contract import cli, schemas  # noqa: E402
from gym_contract.diagnostics import CODES  # noqa: E402

VERSION = schemas.SCHEMA_VERSION
SCHEMA_DIR = ROOT / "schemas" / VERSION
SCHEMA_SUFFIX = ".schema.json"
SCHEMA_PAGES = "reference/schemas"
ERROR_EXAMPLES = "examples/errors"  # under docs/
# Shown in place of wherever the docs folder really is, so a copy renders the same text.
ERROR_EXAMPLES_SHOWN = f"docs/{ERROR_EXAMPLES}"

BEGIN = "<!-- BEGIN GENERATED {name} (tools/render_docs.py; do not edit by hand) -->"
END = "<!-- END GENERATED {name} -->"
BLOCK = re.compile(
    r"^<!-- BEGIN GENERATED (?P<name>[A-Za-z0-9_:.-]+) [^\n]*-->\n(?P<body>.*?)^<!-- END GENERATED (?P=name) -->$",
    re.MULTILINE | re.DOTALL,
)
ANY_MARKER = re.compile(r"<!-- (?:BEGIN|END) GENERATED ")

# The one diagnostic whose example is a command rather than a file: nothing can be opened.
UNOPENABLE = "input_unreadable"
MISSING_INPUT = "no-such-file.jsonl"
# Options an example needs to show its code at a readable size.
EXAMPLE_ARGS = {"line_too_long": ["--max-line-bytes", "64"]}
# What a reader needs to know about an example beyond its input and output.
EXAMPLE_NOTES = {
    UNOPENABLE: "An input that cannot be opened at all stops the command before any record is read: it prints "
    "why and exits with status 2. An input that fails part-way through (an I/O error) is reported as this "
    "diagnostic, after every line read before the failure has been checked.",
    "input_truncated": "The example is a gzip file cut short, so its bytes are not shown; the two lines before "
    "the cut were checked.",
    "json_duplicate_key": "Every object of the contract is looked at, and a record's top level. The inside of "
    "an opaque payload (a model call's request or response, a tool's output, a turn's question, answer or "
    "reasoning, a rollout key outside the contract) is not: the contract says nothing of its content, and "
    "validation never decodes it. Commands that use payloads, such as `project`, do refuse a record whose "
    "payload repeats a key.",
    "line_too_long": "The default limit is 64 MiB per line; the example lowers it with `--max-line-bytes` (an "
    "option left out of `--help`) to stay readable.",
}


# --------------------------------------------------------------------------------------------- helpers


def link(page: str, target: str) -> str:
    """A relative link from the docs page ``page`` to ``target`` (docs-relative, with an optional #anchor)."""
    path, _, anchor = target.partition("#")
    relative = posixpath.relpath(path, posixpath.dirname(page)) if path != page else ""
    return relative + (f"#{anchor}" if anchor else "")


def cell(text: str) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def prose(text: str) -> str:
    """Text from a data source, made safe for Markdown: brackets and angle brackets outside code spans escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    escape = str.maketrans({"[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;"})
    return "".join(part if part.startswith("`") else part.translate(escape) for part in parts)


def code(value: str) -> str:
    """Inline code for any text, backticks included."""
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def pretty(value: Any, width: int = 96, indent: str = "") -> str:
    """JSON indented by two spaces, with every container that fits on the rest of its line kept on one."""
    flat = dump(value)
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = [f"{inner}{dump(key)}: {pretty(item, width, inner).lstrip()}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + pretty(item, width, inner) for item in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def fenced(language: str, text: str, title: str | None = None) -> list[str]:
    fence = "```" if "```" not in text else "````"
    header = f'{fence}{language} title="{title}"' if title else f"{fence}{language}"
    return [header, *text.rstrip("\n").split("\n"), fence]


def schema_stems() -> list[str]:
    return sorted(path.name.removesuffix(SCHEMA_SUFFIX) for path in SCHEMA_DIR.glob(f"*{SCHEMA_SUFFIX}"))


def load(stem: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / f"{stem}{SCHEMA_SUFFIX}").read_text(encoding="utf-8"))


def schema_page(stem: str) -> str:
    return f"{SCHEMA_PAGES}/{stem}.md"


# ------------------------------------------------------------------------------------- schema pages


class SchemaPage:
    """Renders one schema file: its root object, its `$defs`, every rule and example, as Markdown."""

    def __init__(self, stem: str, page: str) -> None:
        self.stem = stem
        self.page = page
        self.document = load(stem)

    # references ---------------------------------------------------------------------------------

    def ref(self, ref: str) -> str:
        """A link for a `$ref`: to a `$defs` entry on this page, or to another schema's page."""
        file, _, pointer = ref.partition("#")
        stem = file.removesuffix(SCHEMA_SUFFIX) if file else self.stem
        document = self.document if stem == self.stem else load(stem)
        if pointer.startswith("/$defs/"):
            name = pointer.removeprefix("/$defs/")
            return f"[{name}]({link(self.page, f'{schema_page(stem)}#{name}')})"
        return f"[{document.get('title', stem)}]({link(self.page, schema_page(stem))})"

    # types and constraints ---------------------------------------------------------------------

    def type_of(self, node: Any) -> str:
        if node is True or node == {}:
            return "any JSON value"
        if not isinstance(node, dict):
            return "never" if node is False else "?"
        if "$ref" in node:
            return self.ref(node["$ref"])
        if "const" in node:
            return f"{code(dump(node['const']))} (constant)"
        branches = node.get("anyOf") or node.get("oneOf")
        if branches:
            return " or ".join(dict.fromkeys(self.type_of(branch) for branch in branches))
        types = node.get("type")
        if types is None and "enum" in node:
            types = list(dict.fromkeys(_json_type(value) for value in node["enum"]))
        if types is None:
            return "any JSON value"
        names = [types] if isinstance(types, str) else list(types)
        shown = []
        for name in names:
            if name == "array":
                items = self.type_of(node.get("items", True))
                shown.append(f"array of {items}" if " or " not in items else f"array of ({items})")
            else:
                shown.append(name)
        return " or ".join(shown)

    def constraints(self, node: Any) -> list[str]:
        if not isinstance(node, dict):
            return []
        found = []
        if "enum" in node:
            found.append("one of " + ", ".join(code(dump(value)) for value in node["enum"]))
        for key, text in (
            ("minimum", "≥ {}"),
            ("exclusiveMinimum", "> {}"),
            ("maximum", "≤ {}"),
            ("exclusiveMaximum", "< {}"),
            ("minLength", "at least {} characters"),
            ("maxLength", "at most {} characters"),
            ("minItems", "at least {} items"),
            ("maxItems", "at most {} items"),
        ):
            if key in node:
                found.append(text.format(dump(node[key])))
        if "pattern" in node:
            found.append("matches " + code(node["pattern"]))
        if node.get("uniqueItems"):
            found.append("items unique")
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            found.extend(f"each item {rule}" for rule in self.constraints(node["items"]))
        for branch in node.get("anyOf", []) + node.get("oneOf", []):
            found.extend(rule for rule in self.constraints(branch) if rule not in found)
        return found

    # objects ------------------------------------------------------------------------------------

    def fields_table(self, node: dict[str, Any]) -> list[str]:
        properties = node.get("properties", {})
        if not properties:
            return []
        required = set(node.get("required", []))
        lines = [
            "| field | type | required | default | description |",
            "|---|---|---|---|---|",
        ]
        for name, prop in properties.items():
            prop = prop if isinstance(prop, dict) else {}
            description = prose(prop.get("description", ""))
            rules = self.constraints(prop)
            if rules:
                description = f"{description} *({'; '.join(rules)})*" if description else f"*{'; '.join(rules)}*"
            default = code(dump(prop["default"])) if "default" in prop else ""
            lines.append(
                f"| {code(name)} | {cell(self.type_of(prop))} | {'yes' if name in required else ''} "
                f"| {cell(default)} | {cell(description)} |"
            )
        return lines

    def rules(self, node: dict[str, Any]) -> list[str]:
        """What the object demands beyond its fields table, one bullet each."""
        found = []
        extra = node.get("additionalProperties")
        if node.get("type") == "object" or "properties" in node:
            if extra is False:
                found.append("Unknown keys are rejected (`additionalProperties: false`).")
            elif extra is True or extra is None:
                found.append("Keys not listed here are accepted and kept (`additionalProperties: true`).")
        properties = node.get("properties", {})
        for name in node.get("required", []):
            if name not in properties:
                found.append(f"{code(name)} is required.")
        if "if" in node and "then" in node:
            said = node["then"].get("description") or node["if"].get("description")
            detail = f": {said}" if said else ""
            found.append(f"Conditional rule (`if` / `then`){detail}.")
        for name, needs in node.get("dependentRequired", {}).items():
            found.append(f"{code(name)} comes only together with {', '.join(code(n) for n in needs)}.")
        for keyword, word in (("oneOf", "exactly one"), ("anyOf", "at least one")):
            branches = node.get(keyword)
            if branches and not node.get("properties"):
                options = ", ".join(dict.fromkeys(self.type_of(branch) for branch in branches))
                found.append(f"Must match {word} of: {options}.")
        discriminator = node.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
            pairs = ", ".join(
                f"{code(value)} → {self.ref(target)}" for value, target in discriminator["mapping"].items()
            )
            found.append(f"Told apart by {code(discriminator.get('propertyName', 'kind'))}: {pairs}.")
        return [f"- {rule}" for rule in found]

    def examples(self, node: dict[str, Any], target: str) -> list[str]:
        lines: list[str] = []
        for example in node.get("examples", []):
            lines += ["", f"<!-- validate: {target} -->", *fenced("json", pretty(example))]
        return lines

    def render(self) -> str:
        document = self.document
        uri = document["$id"]
        raw = link(self.page, f"schemas/{VERSION}/{self.stem}{SCHEMA_SUFFIX}")
        lines = [
            f"- **`$id`:** `{uri}`",
            f"- **File:** [`schemas/{VERSION}/{self.stem}{SCHEMA_SUFFIX}`]({raw}), served by this site at its `$id`",
            f"- **Print it:** `gym-contract schema show {self.stem}`",
            "",
        ]
        if document.get("description"):
            lines += [f"**Description** {prose(document['description'])}", ""]
        if "properties" in document:
            lines += ["## Fields {#fields}", "", *self.fields_table(document)]
        rules = self.rules(document)
        if rules and "properties" in document:
            lines += ["", "## Rules {#rules}", "", *rules]
        examples = self.examples(document, self.stem)
        if examples:
            lines += ["", "## Example {#example}" if len(document["examples"]) == 1 else "## Examples {#examples}"]
            lines += examples
        definitions = document.get("$defs", {})
        if definitions:
            lines += ["", "## Definitions {#definitions}", ""]
            lines.append("Named parts of this schema (`$defs`), each reachable as `" + uri + "#/$defs/<name>`.")
            for name, definition in definitions.items():
                lines += ["", f"### {name} {{#{name}}}", ""]
                if definition.get("description"):
                    lines += [prose(definition["description"]), ""]
                if "properties" in definition:
                    lines += [*self.fields_table(definition), ""]
                elif "$ref" not in definition and "anyOf" not in definition and "oneOf" not in definition:
                    lines += [f"Type: {self.type_of(definition)}", ""]
                lines += self.rules(definition)
                lines += self.examples(definition, f"{self.stem}#/$defs/{name}")
        return "\n".join(lines).replace("\n\n\n", "\n\n").strip("\n")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "any")


def render_schema(page: str, stem: str) -> str:
    if stem not in schema_stems():
        raise KeyError(f"no schema file schemas/{VERSION}/{stem}{SCHEMA_SUFFIX}")
    return SchemaPage(stem, page).render()


def render_schema_index(page: str) -> str:
    lines = ["| schema | title | describes | `$id` |", "|---|---|---|---|"]
    for name in schemas.names():
        uri = schemas.schema_id(name)
        file_part, _, pointer = uri.partition("#")
        stem = file_part.rsplit("/", 1)[1].removesuffix(SCHEMA_SUFFIX)
        schema = schemas.get(name)
        title = schema.get("title", name)
        target = schema_page(stem) + (f"#{pointer.removeprefix('/$defs/')}" if pointer else "")
        description = prose(schema.get("description", "").split(". ")[0].rstrip("."))
        raw = link(page, f"schemas/{VERSION}/{stem}{SCHEMA_SUFFIX}")
        shown_id = f"[`{file_part.rsplit('/', 1)[1]}`]({raw})" + (f" `#{pointer}`" if pointer else "")
        lines.append(f"| {code(name)} | [{title}]({link(page, target)}) | {cell(description)} | {shown_id} |")
    lines += ["", f"Every `$id` starts with `https://gym-contract.dev/schemas/{VERSION}/`."]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- gap codes

CRITERIA_PAGE = "reference/criteria.md"
GAP_PAGE = "reference/gap-codes.md"


def _gap_example(entry: dict[str, Any]) -> dict[str, Any]:
    """An ObservationGap as it appears in a `gaps` list; placeholders in angle brackets."""
    example: dict[str, Any] = {"code": entry["code"]}
    detail = entry.get("detail")
    if detail:
        template = re.fullmatch(r"`([^`]+)`", detail)
        if template:
            example["detail"] = template.group(1)
        elif "`" not in detail and len(detail) <= 40:
            example["detail"] = f"<{detail}>"
    return example


def render_gap_codes(page: str) -> str:
    registry = schemas.gap_codes()
    by_emitter: dict[str, list[str]] = {}
    for code_name, entry in registry.items():
        for emitter in entry["emitted_by"]:
            by_emitter.setdefault(emitter, []).append(code_name)
    lines = [
        f"{len(registry)} codes in the registry of contract {schemas.CONTRACT_VERSION}.",
        "",
        "| emitted by | codes |",
        "|---|---|",
    ]
    for emitter in sorted(by_emitter):
        listed = ", ".join(f"[{code_name}](#{code_name})" for code_name in sorted(by_emitter[emitter]))
        lines.append(f"| `{emitter}` | {listed} |")
    for code_name, entry in sorted(registry.items()):
        criteria = ", ".join(f"[{c}]({link(page, f'{CRITERIA_PAGE}#{c}')})" for c in entry["criteria"]) or "none"
        detail = prose(entry["detail"]) if entry["detail"] else "unset"
        lines += [
            "",
            f"### `{code_name}` {{#{code_name}}}",
            "",
            prose(entry["meaning"]),
            "",
            f"- **detail:** {detail}",
            f"- **emitted by:** {', '.join(f'`{e}`' for e in entry['emitted_by'])}",
            f"- **reduces:** {criteria}",
            "",
            "<!-- validate: observation_gap -->",
            *fenced("json", dump(_gap_example(entry))),
        ]
    return "\n".join(lines)


def render_criteria_gaps(page: str) -> str:
    registry = schemas.gap_codes()
    lines = ["| criterion | gap codes that reduce its evidence |", "|---|---|"]
    for criterion in (f"C{n}" for n in range(1, 8)):
        codes = [name for name, entry in sorted(registry.items()) if criterion in entry["criteria"]]
        listed = ", ".join(f"[{name}]({link(page, f'{GAP_PAGE}#{name}')})" for name in codes) or "none"
        lines.append(f"| [{criterion}](#{criterion}) ({len(codes)}) | {listed} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ errors


def error_example_file(docs: Path, code_name: str) -> Path | None:
    """The example input of a diagnostic code: `docs/examples/errors/<code>.<ext>`."""
    found = sorted((docs / ERROR_EXAMPLES).glob(f"{code_name}.*"))
    return found[0] if found else None


def run_cli(args: list[str]) -> tuple[int, str]:
    """Run `gym-contract` in this process; its exit status and what it printed (stdout, then stderr)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")  # with .buffer, like sys.stdout
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(args)
        except SystemExit as stop:  # argparse errors, --version
            status = int(stop.code or 0)
    printed = []
    for stream in (out, err):
        stream.flush()
        printed.append(stream.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
    return status, "".join(printed)


def error_example(docs: Path, code_name: str) -> tuple[list[str], int, str, str | None, str] | None:
    """A code's example, or None if it has none: (arguments shown, exit status, output shown, input, its title).

    The input is None when it is not text (a compressed file, or no file at all).
    """
    if code_name == UNOPENABLE:
        missing = docs / ERROR_EXAMPLES / MISSING_INPUT
        shown = f"{ERROR_EXAMPLES_SHOWN}/{MISSING_INPUT}"
        status, output = run_cli(["validate", str(missing)])
        return ["validate", shown], status, output.replace(str(missing), shown), None, ""
    path = error_example_file(docs, code_name)
    if path is None:
        return None
    shown = f"{ERROR_EXAMPLES_SHOWN}/{path.name}"
    args = ["validate", *EXAMPLE_ARGS.get(code_name, []), str(path)]
    status, output = run_cli(args)
    # Keep the diagnostics and the verdict; the counts and the timing line that follow are left out.
    kept = []
    for line in output.replace(str(path), shown).split("\n"):
        kept.append(line)
        if line.startswith(("PASS (", "FAIL (")):
            break
    if path.name.endswith((".gz", ".zst")):
        return [*args[:-1], shown], status, "\n".join(kept), None, path.name
    text = path.read_bytes().decode("utf-8", errors="backslashreplace").rstrip("\n")
    title = path.name
    if "\n" not in text and len(text) > 100:
        with contextlib.suppress(ValueError):
            text, title = pretty(json.loads(text), width=88), f"{path.name} (one line in the file, shown indented)"
    return [*args[:-1], shown], status, "\n".join(kept), text, title


def render_errors(page: str, docs: Path) -> str:
    lines = ["| code | severity | meaning |", "|---|---|---|"]
    for code_name, info in CODES.items():
        lines.append(f"| [`{code_name}`](#{code_name}) | {info.severity} | {cell(prose(info.summary))} |")
    for code_name, info in CODES.items():
        lines += ["", f"### `{code_name}` {{#{code_name}}}", "", f"**{info.severity}** · {prose(info.summary)}", ""]
        example = error_example(docs, code_name)
        if example is None:
            lines += [f"No example yet: add `{ERROR_EXAMPLES_SHOWN}/{code_name}.jsonl`.", ""]
            continue
        command, status, output, content, title = example
        if code_name in EXAMPLE_NOTES:
            lines += [EXAMPLE_NOTES[code_name], ""]
        if content is not None:
            lines += [*fenced("json" if content.startswith(("{", "[")) else "text", content, title), ""]
        shown_command = " ".join(["gym-contract", *command])
        lines += [f"<!-- exit: {status} -->", *fenced("console", f"$ {shown_command}\n{output.rstrip()}")]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- CLI


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(choice) for choice in action.choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _usage_part(action: argparse.Action) -> str:
    if isinstance(action, argparse._SubParsersAction):
        return f"{_metavar(action)} ..."
    if not action.option_strings:
        name = _metavar(action)
        return {"+": f"{name} [{name} ...]", "*": f"[{name} ...]", "?": f"[{name}]"}.get(str(action.nargs), name)
    flag = action.option_strings[0]
    text = flag if action.nargs == 0 else f"{flag} {_metavar(action)}"
    return text if action.required else f"[{text}]"


def _visible(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions if action.help != argparse.SUPPRESS]


def _usage(prog: str, parser: argparse.ArgumentParser, width: int = 90) -> str:
    """The usage line as argparse lays it out (options, then positionals), wrapped at ``width``."""
    actions = _visible(parser)
    parts = [_usage_part(a) for a in actions if a.option_strings] + [
        _usage_part(a) for a in actions if not a.option_strings
    ]
    lines, current = [], f"usage: {prog}"
    indent = " " * len(current)
    for part in parts:
        if len(current) + 1 + len(part) > width and current.strip() != f"usage: {prog}":
            lines.append(current)
            current = indent
        current += f" {part}"
    return "\n".join([*lines, current])


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", ")")) else f"{text}."


def render_cli(page: str) -> str:
    lines: list[str] = ["Every command also takes `-h` / `--help`, which prints its usage and exits."]

    def describe(prog: str, summary: str, parser: argparse.ArgumentParser, depth: int) -> None:
        anchor = "-".join(prog.split()[1:]) or "gym-contract"
        lines.extend(["", f"{'#' * depth} `{prog}` {{#{anchor}}}", ""])
        description = parser.description or summary
        if description:
            lines.extend([prose(_sentence(description)), ""])
        lines.extend([*fenced("text", _usage(prog, parser)), ""])
        rows = []
        for action in _visible(parser):
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
                continue
            names = ", ".join(action.option_strings) if action.option_strings else _metavar(action)
            takes_value = action.option_strings and action.nargs != 0 and action.choices is None
            shown = f"{names} {_metavar(action)}" if takes_value else names
            details = []
            if action.choices is not None:
                details.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
            help_text = (action.help or "").replace("%(prog)s", prog)
            has_default = (
                action.option_strings and action.nargs != 0 and action.default not in (None, argparse.SUPPRESS)
            )
            if has_default and "default" not in help_text:
                details.append(f"default `{action.default}`")
            text = "; ".join(part for part in [help_text, *details] if part)
            rows.append(f"| `{cell(shown)}` | {cell(prose(_sentence(text)))} |")
        if rows:
            lines.extend(["| argument | meaning |", "|---|---|", *rows])
        for name, sub_summary, sub in _subcommands(parser):
            describe(f"{prog} {name}", sub_summary, sub, min(depth + 1, 4))

    describe("gym-contract", "", cli.build_parser(), 2)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


# ----------------------------------------------------------------------------------- console runs

# `console:<name>` blocks: a command run on the repository's example files, shown with its output.
CONSOLE = {
    "validate-example": ["validate", "examples/rollouts.jsonl"],
    "validate-damaged": ["validate", "examples/damaged_rollouts.jsonl"],
    "validate-damaged-json": [
        "validate",
        "examples/damaged_rollouts.jsonl",
        "--format",
        "json",
        "--max-diagnostics",
        "1",
    ],
    "validate-quiet": ["validate", "examples/rollouts.jsonl", "--quiet", "--fail-on", "warning"],
    "validate-bundle": ["validate", "docs/examples/bundle.json"],
    "validate-bundle-bad": ["validate", "docs/examples/bundle_with_problems.json"],
    "version": ["--version"],
    "join-example": [
        *("join", "--capture", "examples/capture", "--rollout-id", "7-0"),
        "docs/examples/join_observations.json",
    ],
    "project-example": [
        *("project", "docs/examples/project_rollouts.jsonl"),
        *("--capture-dir", "examples/capture", "-o", "/dev/null"),
    ],
    "schema-list": ["schema", "list"],
    "schema-show-id": ["schema", "show", "trajectory", "--id"],
}
# Lines that differ from one run to the next: throughput, and the JSON report's timing fields.
VOLATILE = re.compile(r'^(\s+[\d.,]+ MB in [\d.]+ s \(.*\)|\s+"(seconds|mb_per_s)": .*)$')


def render_console(page: str, name: str) -> str:
    if name not in CONSOLE:
        raise KeyError(f"no console example {name!r}; known: {', '.join(CONSOLE)}")
    args = CONSOLE[name]
    status, output = run_cli(args)
    kept = [line for line in output.rstrip("\n").split("\n") if not VOLATILE.match(line)]
    return "\n".join(
        [f"<!-- exit: {status} -->", *fenced("console", "\n".join([f"$ gym-contract {' '.join(args)}", *kept]))]
    )


def render_assert_valid(page: str, name: str, docs: Path) -> str:
    """What `gym_contract.testing.assert_valid` says about `docs/examples/<name>.json`."""
    from gym_contract.testing import assert_valid

    record = json.loads((docs / "examples" / f"{name}.json").read_text(encoding="utf-8"))
    try:
        assert_valid(record)
    except AssertionError as failure:
        message = f"AssertionError: {failure}"
    else:
        message = "(passes: no diagnostic at or above the threshold)"
    return "\n".join(fenced("text", message))


# ------------------------------------------------------------------------------------------- models


def render_models(page: str) -> str:
    from gym_contract import models

    titles: dict[str, str] = {}
    for stem in schema_stems():
        document = load(stem)
        titles.setdefault(document.get("title", ""), schema_page(stem))
        for name, definition in document.get("$defs", {}).items():
            titles.setdefault(definition.get("title", name), f"{schema_page(stem)}#{name}")
    lines = ["| class | follows the schema |", "|---|---|"]
    for name in models.__all__:
        target = titles.get(name)
        where = f"[{name}]({link(page, target)})" if target else "—"
        lines.append(f"| `gym_contract.models.{name}` | {where} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- driver

Renderer = Callable[[str, str, Path], str]


def renderer(name: str) -> Renderer:
    kind, _, argument = name.partition(":")
    simple: dict[str, Callable[[str], str]] = {
        "schema-index": render_schema_index,
        "gap-codes": render_gap_codes,
        "criteria-gaps": render_criteria_gaps,
        "cli": render_cli,
        "models": render_models,
    }
    if kind == "schema" and argument:
        return lambda page, arg, docs: render_schema(page, arg)
    if kind == "assert-valid" and argument:
        return lambda page, arg, docs: render_assert_valid(page, arg, docs)
    if kind == "console" and argument:
        return lambda page, arg, docs: render_console(page, arg)
    if kind == "errors" and not argument:
        return lambda page, arg, docs: render_errors(page, docs)
    if kind in simple and not argument:
        return lambda page, arg, docs: simple[kind](page)
    raise KeyError(f"unknown generated block {name!r}")


def pages(docs: Path) -> Iterator[Path]:
    yield from sorted(path for path in docs.rglob("*.md") if path.is_file())


def render_page(text: str, page: str, docs: Path) -> str:
    """The page with every generated block rendered afresh."""

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        _, _, argument = name.partition(":")
        body = renderer(name)(page, argument, docs)
        return f"{BEGIN.format(name=name)}\n{body}\n{END.format(name=name)}"

    rendered = BLOCK.sub(replace, text)
    if len(ANY_MARKER.findall(text)) != 2 * len(BLOCK.findall(text)):
        raise ValueError(f"{page}: a GENERATED marker has no partner (BEGIN and END must name the same block)")
    return rendered


def problems_of_coverage(docs: Path) -> list[str]:
    """Sources without a page: a schema file with no generated block, a required page missing."""
    blocks = {match.group("name") for path in pages(docs) for match in BLOCK.finditer(path.read_text(encoding="utf-8"))}
    missing = [
        f"schema {stem}: no page has a `schema:{stem}` block (expected in docs/{schema_page(stem)})"
        for stem in schema_stems()
        if f"schema:{stem}" not in blocks
    ]
    missing += [f"no page has a `{name}` block" for name in ("errors", "gap-codes", "cli") if name not in blocks]
    return missing


def main(argv: list[str] | None = None) -> int:
    os.chdir(ROOT)  # console examples name files relative to the repository root
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="report stale pages and exit 1; write nothing")
    parser.add_argument("--docs-dir", type=Path, default=ROOT / "docs", help="docs folder (default: docs/)")
    args = parser.parse_args(argv)
    docs = args.docs_dir.resolve()

    stale = []
    for path in pages(docs):
        page = path.relative_to(docs).as_posix()
        text = path.read_text(encoding="utf-8")
        if "GENERATED" not in text:
            continue
        rendered = render_page(text, page, docs)
        if rendered == text:
            continue
        stale.append(page)
        if args.check:
            diff = difflib.unified_diff(
                text.splitlines(), rendered.splitlines(), f"docs/{page}", f"docs/{page} (rendered)", lineterm="", n=1
            )
            print("\n".join(list(diff)[:40]))
        else:
            path.write_text(rendered, encoding="utf-8")
            print(f"rendered docs/{page}")
    problems = problems_of_coverage(docs)
    for problem in problems:
        print(f"render_docs: {problem}", file=sys.stderr)
    if args.check and stale:
        print(
            f"render_docs: {len(stale)} page(s) out of date: {', '.join(stale)}; "
            "run `python tools/render_docs.py` and commit the result",
            file=sys.stderr,
        )
    return 1 if problems or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
