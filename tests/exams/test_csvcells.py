"""The one CSV writer (exams.csvcells): text a spreadsheet would run is neutralised, numbers stay numbers."""
import csv
import io
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exams.csvcells import FORMULA_STARTS, Writer, neutral


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("https://evil.example","Click")', '\'=HYPERLINK("https://evil.example","Click")'),
        ("+1 call me", "'+1 call me"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("\n=1+1", "'\n=1+1"),
        ("A plain title", "A plain title"),
        ("a = b", "a = b"),
        ("", ""),
        (-0.5, -0.5),
        (Decimal("-0.50"), Decimal("-0.50")),
        (-3, -3),
        (True, True),
        (None, None),
    ],
)
def test_a_cell_is_neutralised_only_when_it_is_text_a_spreadsheet_would_run(cell, written):
    assert neutral(cell) == written


def test_the_writer_writes_numbers_as_numbers_and_formulas_as_text():
    out = io.StringIO()
    Writer(out, lineterminator="\n").writerows([["=1+1", -2, Decimal("-0.50"), "-0.50", None]])
    assert out.getvalue() == "'=1+1,-2,-0.50,'-0.50,\n"


@given(st.lists(st.text() | st.integers() | st.decimals(allow_nan=False, allow_infinity=False), min_size=1, max_size=5))
def test_every_text_cell_read_back_is_safe_and_holds_what_was_written(row):
    out = io.StringIO()
    Writer(out).writerow(row)
    [read] = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    for cell, value in zip(read, row, strict=True):
        if isinstance(value, str):
            assert not cell.startswith(FORMULA_STARTS)
            assert cell in (value, "'" + value)
        else:
            assert cell == str(value)
