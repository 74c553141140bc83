"""One CSV writer for every CSV the app serves: a text cell a spreadsheet would run as a formula is neutralised.

A spreadsheet opening the file runs a cell that begins with `=`, `+`, `-` or `@` as a formula
(`=HYPERLINK(...)` in an imported title, a note starting with `+`), and a leading tab, carriage
return or line feed can hide one; OWASP's advice is to prefix such a cell with a single quote,
which the spreadsheet shows as text. Only text is touched: a number (int, float, Decimal) or a
boolean is written as it is, so a negative discrimination stays a number.
"""
import csv
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def neutral(value: Any) -> Any:
    """The cell as written: text a spreadsheet would run is prefixed with a single quote; anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class Writer:
    """csv.writer with every cell neutralised; `writerow` returns what the stream's `write` returned
    (so a streaming response can yield the lines)."""

    def __init__(self, stream, **options) -> None:
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]):
        return self._writer.writerow([neutral(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)
