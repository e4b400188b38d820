"""The report tables laid out without rich are the lines rich writes for them, byte for byte."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from gym_contract.cli._tables import Table, plain_lines, render, rich_lines

# Printable ASCII, spaces and brackets included (a producer's name may hold either), and empty cells.
_CELL = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=14)


@st.composite
def tables(draw: st.DrawFn) -> Table:
    columns = draw(st.integers(1, 5))
    row = st.lists(_CELL, min_size=columns, max_size=columns)
    table = Table(
        draw(row),
        rows=draw(st.lists(row, max_size=4)),
        right=frozenset(draw(st.sets(st.integers(0, columns - 1)))),
        total=draw(st.none() | row),
        show_headings=draw(st.booleans()),
    )
    return table


@given(tables(), st.integers(0, 6), st.integers(1, 90))
def test_a_plain_table_is_laid_out_as_rich_lays_it_out(table, indent, width):
    lines = plain_lines(table, indent, width)
    expected = rich_lines(table, False, indent, width)
    assert lines is None or lines == expected
    # Narrower than the table, rich shrinks it and is left to; off a terminal no such table is printed.
    assert plain_lines(table, indent, 4096) == rich_lines(table, False, indent, 4096)


@given(st.sampled_from(["é", "漢字", "\t", "✗", "\x1b[31m"]), st.booleans())
def test_a_cell_rich_must_measure_is_left_to_rich(text, show_headings):
    table = Table(("name", "count"), show_headings=show_headings)
    table.add(f"a{text}b", "1")
    assert plain_lines(table, 2, 4096) is None


def test_render_writes_the_plain_layout_off_a_terminal_and_rich_s_in_colour():
    table = Table(("source", "rollouts", "C1"), right=frozenset({1}))
    table.add("claude_code", "12", "V")
    table.add("pi", "3", "O")
    table.total = ("all rollouts", "15", "O")
    plain, coloured = io.StringIO(), io.StringIO()
    render(table, plain, colour=False, indent=4)
    render(table, coloured, colour=True, indent=4)
    assert plain.getvalue() == (
        "    source        rollouts  C1\n"
        "    ──────────────────────────\n"
        "    claude_code         12  V\n"
        "    pi                   3  O\n"
        "    ──────────────────────────\n"
        "    all rollouts        15  O\n"
    )
    assert "\x1b[32mV\x1b[0m" in coloured.getvalue()
