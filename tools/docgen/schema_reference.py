"""The reference pages rendered from schemas/: one page per schema file, the index, gap codes, criteria, models."""

from __future__ import annotations

import json
import re
from typing import Any

from gym_contract import schemas

from . import ROOT
from .markdown import cell, code, dump, fenced, link, pretty, prose

VERSION = schemas.SCHEMA_VERSION
SCHEMA_DIR = ROOT / "schemas" / VERSION
SCHEMA_SUFFIX = ".schema.json"
SCHEMA_PAGES = "reference/schemas"


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
        if not properties or self.tagged_branches(node):  # a union's tag is told of in its rules
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
        tagged = self.tagged_branches(node)
        if (node.get("type") == "object" or "properties" in node) and not tagged:
            if extra is False:
                found.append("Unknown keys are rejected (`additionalProperties: false`).")
            elif extra is True or extra is None:
                found.append("Keys not listed here are accepted and kept (`additionalProperties: true`).")
        properties = {} if tagged else node.get("properties", {})
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
            if branches and not properties:
                options = ", ".join(dict.fromkeys(self.type_of(branch) for branch in branches))
                found.append(f"Must match {word} of: {options}.")
        if tagged:
            tag, pairs = tagged
            shown = ", ".join(f"{code(value)} → {self.ref(target)}" for value, target in pairs)
            found.append(f"Told apart by {code(tag)}: {shown}.")
        return [f"- {rule}" for rule in found]

    def tagged_branches(self, node: dict[str, Any]) -> tuple[str, list[tuple[str, str]]] | None:
        """The required tag of a `oneOf` of records and each record's value of it, when every branch fixes one."""
        required, branches = node.get("required", []), node.get("oneOf", [])
        if len(required) != 1 or not branches or any(set(branch) != {"$ref"} for branch in branches):
            return None
        pairs = []
        for branch in branches:
            file, _, pointer = branch["$ref"].partition("#")
            target = load(file.removesuffix(SCHEMA_SUFFIX)) if file else self.document
            for part in filter(None, pointer.split("/")):
                target = target[part]
            value = target.get("properties", {}).get(required[0], {}).get("const")
            if not isinstance(value, str):
                return None
            pairs.append((value, branch["$ref"]))
        return required[0], pairs

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
