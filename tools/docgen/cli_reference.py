"""The command-line reference, read from the argparse parser that gym_contract.cli builds."""

from __future__ import annotations

import argparse
import re

from gym_contract import cli

from .markdown import cell, fenced, prose


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
