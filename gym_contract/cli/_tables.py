"""Tables of the text reports as rich lays them out: aligned columns, rules under headings, colour where wanted."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

# rich styles for cells: the coverage verdicts, diagnostic codes and the headings.
CELL_STYLES = {"V": "green", "O": "yellow", "X": "red", "code": "cyan", "heading": "bold"}
# Wide enough for any table the reports print: off a terminal nothing may wrap or be cut.
_WIDTH_OFF_TERMINAL = 4096


@dataclass
class Table:
    """Headings, rows of text cells, which columns are right-aligned (numbers) and an optional closing row (totals)."""

    headings: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)
    right: frozenset[int] = frozenset()
    total: Sequence[str] | None = None
    show_headings: bool = True
    # A style for every cell of a column (e.g. codes), over the per-word verdict styles.
    column_styles: dict[int, str] = field(default_factory=dict)

    def add(self, *cells: str) -> None:
        self.rows.append(cells)


def render(table: Table, out: TextIO, *, colour: bool, indent: int = 0) -> None:
    """Write the table to `out`, each line indented; without colour the lines carry no escape and no trailing space."""
    on_terminal = bool(getattr(out, "isatty", lambda: False)())
    width = shutil.get_terminal_size().columns if on_terminal else _WIDTH_OFF_TERMINAL
    # Importing rich costs tens of milliseconds, much of a small file's whole run: a table rich would lay
    # out without colour, shrinking or measuring any character is laid out here, as rich would lay it out.
    lines = None if colour else plain_lines(table, indent, width)
    for line in rich_lines(table, colour, indent, width) if lines is None else lines:
        out.write(line + "\n")


def plain_lines(table: Table, indent: int, width: int) -> list[str] | None:
    """The lines rich writes for the table without colour, or None when rich must lay it out.

    That is when a cell is not printable ASCII (rich measures such text cell by cell), a row has not
    one cell per heading, or the table is wider than ``width`` (rich shrinks the columns).
    """
    shown = [*([table.headings] if table.show_headings else []), *table.rows]
    shown += [table.total] if table.total is not None else []
    columns = len(table.headings)
    if any(len(row) != columns or not all(cell.isascii() and cell.isprintable() for cell in row) for row in shown):
        return None
    widths = [max((len(row[column]) for row in shown), default=0) for column in range(columns)]
    # Two spaces part the columns, whether as padding and the box's divider or as padding alone.
    total_width = sum(widths) + 2 * (columns - 1)
    if indent + total_width > width:
        return None
    if not total_width:  # every cell empty and one column: rich writes nothing
        return []
    margin = " " * indent
    rule = margin + "\u2500" * total_width

    def line(row: Sequence[str]) -> str:
        cells = (
            # rich drops a right-aligned cell's trailing spaces before it aligns the rest.
            cell.rstrip().rjust(size) if column in table.right else cell.ljust(size)
            for column, (cell, size) in enumerate(zip(row, widths, strict=True))
        )
        return (margin + "  ".join(cells)).rstrip()

    lines = [line(row) for row in table.rows]
    if table.show_headings:
        lines[:0] = [line(table.headings), rule]
    if table.total is not None:
        lines += [rule, line(table.total)] if table.show_headings else [line(table.total)]
    return lines


def rich_lines(table: Table, colour: bool, indent: int, width: int) -> list[str]:
    """The table's lines as rich lays it out in ``width`` columns, coloured or without trailing spaces."""
    from io import StringIO

    from rich import box
    from rich.console import Console
    from rich.padding import Padding
    from rich.table import Table as RichTable

    grid = RichTable(
        # SIMPLE: a rule under the headings and one above the totals, so that they do not read as one more row.
        box=box.SIMPLE if table.show_headings else None,
        show_header=table.show_headings,
        show_footer=table.total is not None,
        show_edge=False,
        pad_edge=False,
        header_style=CELL_STYLES["heading"] if colour else "",
        footer_style="",
        # Two spaces between columns: one of padding and the box's divider, or two of padding without a box.
        padding=(0, 1 if table.show_headings else 2, 0, 0),
    )
    totals = _cells(table, table.total, colour) if table.total is not None else [""] * len(table.headings)
    for index, (heading, total) in enumerate(zip(table.headings, totals, strict=True)):
        justify = "right" if index in table.right else "left"
        grid.add_column(heading, footer=total, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in table.rows:
        grid.add_row(*_cells(table, row, colour))
    buffer = StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=colour,
        color_system="standard" if colour else None,
        highlight=False,
        emoji=False,
        markup=False,
        legacy_windows=False,
    )
    console.print(Padding(grid, (0, 0, 0, indent), expand=False))
    return [line if colour else line.rstrip() for line in buffer.getvalue().splitlines()]


def _cells(table: Table, row: Sequence[str], colour: bool) -> list[Any]:
    return [_cell(text, colour, table.column_styles.get(column)) for column, text in enumerate(row)]


def _cell(text: str, colour: bool, style: str | None) -> Any:
    """A cell as rich text, never read as markup: a producer or code may hold brackets."""
    from rich.text import Text

    if not colour or style is not None:
        return Text(text, style=CELL_STYLES[style] if colour and style else "")
    styled = Text()
    for position, word in enumerate(text.split(" ")):
        if position:
            styled.append(" ")
        styled.append(word, style=CELL_STYLES.get(word, ""))
    return styled
