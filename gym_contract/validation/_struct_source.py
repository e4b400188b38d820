"""The records' Structs, as the compiler builds them from the schemas, written out as one module of Python source."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
import typing
from pathlib import Path
from typing import Any

import msgspec

from gym_contract import schemas
from gym_contract._vocabulary import SCHEMA_OF_KIND
from gym_contract.validation._struct_checks import helper_type, post_init_source
from gym_contract.validation._struct_types import Definition, _Compiler

RENDERED = Path(__file__).with_name("_structs_v1.py")
"""Where the module is committed; `_struct_types` imports it."""

COMMAND = "python tools/gen_structs.py"
"""The command that writes the module again."""

_PLAIN = {bool: "bool", int: "int", float: "float", str: "str", dict: "dict", list: "list"}
_MSGSPEC = {msgspec.Raw: "msgspec.Raw", msgspec.UnsetType: "msgspec.UnsetType", msgspec.Struct: "msgspec.Struct"}
# What `msgspec.Meta` may say, in the order it is written out.
_META = ("gt", "ge", "lt", "le", "multiple_of", "pattern", "min_length", "max_length")
# Names the module binds for the types and checks; an attribute of a Struct must not hide one in its class body.
_MODULE_NAMES = frozenset(
    {"Annotated", "Any", "Literal", "Union", "msgspec", "conformer", "MemberStruct", "UNSET", *_PLAIN.values()}
)
# Names the checks bind afresh for each helper and constant they make: numbered again, in order, in the module.
_NUMBERED = re.compile(r"_([hc])\d+")


class RenderError(Exception):
    """The compiled types hold something this module cannot write out as source."""


class _Module:
    """The source of the module, written one Struct after those its fields refer to."""

    def __init__(self, compiler: _Compiler) -> None:
        self.compiler = compiler
        self.written: dict[Any, str] = {}  # Struct -> its class name, once its class is written
        self.classes: list[str] = []
        self.bound: dict[str, str] = {}  # module-level name -> the source of its value
        self.helpers: list[str] = []  # the helpers' assignments, made once every class exists
        self.counts = {"h": 0, "c": 0}
        # Names an attribute with a default would hide, in its class body, from the annotations after it.
        self.hidden = _MODULE_NAMES | {struct.__name__ for struct in compiler.definitions}

    def type_source(self, kind: Any) -> str:
        """A type expression that evaluates, in the module, to a type equal to ``kind``."""
        if kind is None or kind is type(None):
            return "None"
        if isinstance(kind, type) and kind in _PLAIN:
            return _PLAIN[kind]
        if isinstance(kind, type) and kind in _MSGSPEC:
            return _MSGSPEC[kind]
        if kind in self.compiler.definitions:
            return self.struct(kind)
        origin, arguments = typing.get_origin(kind), typing.get_args(kind)
        if origin is typing.Union:
            return f"Union[{', '.join(self.type_source(member) for member in arguments)}]"
        if origin is typing.Literal:
            return f"Literal[{', '.join(_literal(value) for value in arguments)}]"
        if origin is typing.Annotated:
            base, *metadata = arguments
            return f"Annotated[{', '.join([self.type_source(base), *map(_meta, metadata)])}]"
        if origin in (list, dict):
            return f"{_PLAIN[origin]}[{', '.join(self.type_source(argument) for argument in arguments)}]"
        raise RenderError(f"no source for the type {kind!r}")

    def struct(self, struct: Any) -> str:
        """The class name of a Struct, its class written first if it is not yet."""
        if struct not in self.written:
            definition = self.compiler.definitions[struct]
            self.written[struct] = ""  # being written: a Struct that refers back to it would be a cycle
            source = self._class(definition)
            self.written[struct] = definition.struct.__name__
            self.classes.append(source)
        name = self.written[struct]
        if not name:
            raise RenderError(f"{struct.__name__} refers to itself through its fields")
        return name

    def _class(self, definition: Definition) -> str:
        name = definition.struct.__name__
        if not name.isidentifier() or name in _MODULE_NAMES or name.startswith("_"):
            raise RenderError(f"a Struct named {name!r} cannot be a class of the module")
        options = ["MemberStruct", "kw_only=True", f"forbid_unknown_fields={definition.forbid}"]
        if definition.renamed:
            options.append(f"rename={_literal(definition.renamed)}")
        if definition.tag is not None:
            options += [f"tag_field={_literal(definition.tag[0])}", f"tag={_literal(definition.tag[1])}"]
        options.append("gc=False")
        body = [self._field(*field) for field in definition.fields]
        if definition.tag is not None and definition.tag[0] in definition.struct.__dict__:
            body.append(f"    {definition.tag[0]} = {_literal(definition.tag[1])}")  # the tag, read as a member
        if definition.checks:
            body.append(self._post_init(definition))
        return f"class {name}({', '.join(options)}):\n" + ("\n".join(body) or "    pass") + "\n"

    def _field(self, attribute: str, kind: Any, *default: Any) -> str:
        if attribute in self.hidden:
            raise RenderError(f"a field named {attribute!r} would hide the module's {attribute} in its class")
        if default and default != (msgspec.UNSET,):
            raise RenderError(f"field {attribute!r} has a default other than UNSET: {default[0]!r}")
        return f"    {attribute}: {self.type_source(kind)}" + (" = msgspec.UNSET" if default else "")

    def _post_init(self, definition: Definition) -> str:
        """The `__post_init__` the checks compile to, its helpers and constants bound in the module."""
        made = post_init_source(definition.checks, definition.what)
        header = "def __post_init__(self):"
        if not made.source.startswith(header):
            raise RenderError(f"a __post_init__ that does not start {header!r}")
        lines = made.source.splitlines()
        renamed: dict[str, str] = {"_refusal": _literal(made.names["_refusal"])}  # the message, written in place
        tokens = list(tokenize.generate_tokens(io.StringIO(made.source).readline))
        names = [
            token
            for token, before in zip(tokens, [None, *tokens[:-1]], strict=True)
            # A name after a dot is an attribute of the Struct, not a name the checks bind.
            if token.type == tokenize.NAME and token.string in made.names and (before is None or before.string != ".")
        ]
        for token in names:
            if token.string not in renamed:
                renamed[token.string] = self._bind(token.string, made.names[token.string])
        for token in reversed(names):  # from the last, so that the positions of the others hold
            (row, start), (_, end) = token.start, token.end
            line = lines[row - 1]
            lines[row - 1] = line[:start] + renamed[token.string] + line[end:]
        lines[0] = lines[0].replace(header, "def __post_init__(self) -> None:")
        return "\n" + "\n".join("    " + line for line in lines)

    def _bind(self, name: str, value: Any) -> str:
        """The module-level name under which ``value``, bound to ``name`` by a check, is defined."""
        numbered = _NUMBERED.fullmatch(name)
        if numbered is None:
            source = self.value_source(value)
            if self.bound.setdefault(name, source) != source:
                raise RenderError(f"the checks bind {name} to two values: {self.bound[name]} and {source}")
            return name
        letter = numbered.group(1)
        new = f"_{letter}{self.counts[letter]}"
        self.counts[letter] += 1
        if letter == "h":
            self.helpers.append(f"{new} = conformer({self.type_source(helper_type(name))})")
        else:
            self.bound[new] = self.value_source(value)
        return new

    def value_source(self, value: Any) -> str:
        """Source that evaluates to ``value``: a constant of JSON, the UNSET marker, a type, a tuple of them."""
        if value is msgspec.UNSET:
            return "msgspec.UNSET"
        if isinstance(value, tuple):
            items = [self.value_source(item) for item in value]
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        if isinstance(value, type) or typing.get_origin(value) is not None:
            return self.type_source(value)
        return _literal(value)


def _literal(value: Any) -> str:
    """Python source for a JSON value (or a mapping of text), checked to read back as the very value."""
    source = repr(value)
    try:
        same = ast.literal_eval(source)
    except (ValueError, SyntaxError):
        same = None
    if same != value or type(same) is not type(value):
        raise RenderError(f"no literal source for {value!r}")
    return source


def _meta(meta: Any) -> str:
    if not isinstance(meta, msgspec.Meta):
        raise RenderError(f"no source for the annotation {meta!r}")
    given = {word: getattr(meta, word) for word in _META if getattr(meta, word) is not None}
    source = f"msgspec.Meta({', '.join(f'{word}={_literal(value)}' for word, value in given.items())})"
    if eval(source, {"msgspec": msgspec}) != meta:  # something it says that is not among _META
        raise RenderError(f"no source for {meta!r}")
    return source


_HEAD = f'''"""The records' Structs compiled from the bundled schemas, written out by {COMMAND}: do not edit."""

from typing import Annotated, Any, Literal, Union

import msgspec

from gym_contract._objects import MemberStruct
from gym_contract.validation._struct_checks import conformer'''


def render() -> str:
    """The module's source, before formatting: the Structs of every kind's schema, from a compiler of its own."""
    compiler = _Compiler()
    module = _Module(compiler)
    roots = {
        name: module.type_source(compiler.for_uri(schemas.schema_id(name))) for name in sorted(SCHEMA_OF_KIND.values())
    }
    parts = [
        _HEAD,
        f"SCHEMAS_DIGEST = {_literal(schemas._digest())}\n"
        '"""The digest (`schemas._digest`) of the schema files these Structs come from: others make them stale."""\n',
        "".join(f"{name} = {source}\n" for name, source in module.bound.items()),
        *module.classes,
        "".join(f"{line}\n" for line in module.helpers),
        "SCHEMA_TYPES: dict[str, Any] = {\n"
        + "".join(f"    {_literal(name)}: {source},\n" for name, source in roots.items())
        + "}\n"
        + '"""The type of the schema of each kind of record, by the schema\'s name."""\n',
    ]
    return "\n\n".join(part for part in parts if part)


def formatted(source: str) -> str:
    """``source`` as `ruff format` lays it out with the repository's settings; RenderError if ruff fails."""
    command = [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(RENDERED), "-"]
    try:
        run = subprocess.run(command, input=source, capture_output=True, text=True, check=False, cwd=RENDERED.parent)
    except OSError as error:
        raise RenderError(f"cannot run ruff: {error}") from None
    if run.returncode != 0:
        raise RenderError(f"ruff format failed: {run.stderr.strip()}")
    return run.stdout
