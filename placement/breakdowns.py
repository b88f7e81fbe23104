"""Score breakdowns an engine has built, found again by their scores.

An explanation gives every candidate a breakdown dict {plugin: score, ..., "total": n}. Scores
are integers 0..100 and rows repeat a lot (a few hundred distinct rows among thousands of
candidates), so each distinct row is built once and shared, read-only, by the candidates of a
decision and by the later decisions of the same engine (the weights, hence the total, are the
engine's).

`BreakdownLookup` finds the dicts of all candidates with a few numpy calls and no Python code
per candidate: a row's scores in base 101 are its slot number. Two columns (the two that vary
most) give the offset inside a page of 101 * 101 slots and the other columns pick the page, so
only the pages a site's rows reach are allocated (40 KB each), however many plugins score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .table import IntArray, ObjectArray

_BASE = 101  # scores are 0..100
_PAGE = _BASE * _BASE
# At most 2 columns pick the page (a page table of 101 * 101 entries): 4 plugins.
MAX_PLUGINS = 4
# Beyond these the lookup starts again empty: about 10 MB of slots, 65,536 breakdowns.
_MAX_PAGES = 256
_MAX_BREAKDOWNS = 1 << 16


class BreakdownLookup:
    """The breakdown dicts of one tuple of plugins (1 to `MAX_PLUGINS`), by scores."""

    def __init__(self, plugins: tuple[str, ...], rows: IntArray) -> None:
        if not 1 <= len(plugins) <= MAX_PLUGINS:
            raise ValueError(f"a lookup takes 1 to {MAX_PLUGINS} plugins, not {len(plugins)}")
        self.keys = (*plugins, "total")
        self._clear(rows)

    def __len__(self) -> int:
        return self._count

    def _clear(self, rows: IntArray) -> None:
        """Start empty, laid out for rows like `rows`: the two columns with the most distinct
        values make the offset in a page, so that few pages are needed."""
        distinct = [len(np.unique(column)) for column in rows.T] if len(rows) else []
        by_count = sorted(range(len(self.keys) - 1), key=lambda j: -distinct[j] if distinct else j)
        self._offset = sorted(by_count[:2])
        self._page = sorted(by_count[2:])
        self._count = 0
        self._objects: ObjectArray = np.empty(1024, dtype=object)
        # Per page code, the page's first slot (page number times _PAGE); -1: no page yet.
        self._page_of = np.full(_BASE ** len(self._page), -1, dtype=np.int64)
        self._page_of[0] = 0  # page 0 exists from the start (the only one without page columns)
        self._pages = 1
        self._slots = np.full(_PAGE, -1, dtype=np.int32)

    def find(
        self, matrix: IntArray, totals: IntArray, *, again: bool = False
    ) -> list[dict[str, int]] | None:
        """The breakdown of every row of `matrix` (candidates x plugins, with their `totals`),
        or None when some score is outside 0..100 (a site plugin's), or when this decision
        alone needs more than the lookup holds: the caller builds them."""
        if len(matrix) == 0:
            return []
        if matrix.view(np.uint64).max() > 100:  # a negative score reads as a huge one
            return None
        columns = matrix.T
        flat = _code(columns, self._offset)
        if self._page:
            # One page column (up to 3 plugins) indexes the page table as it is.
            code = columns[self._page[0]] if len(self._page) == 1 else _code(columns, self._page)
            starts = self._page_of[code]
            if starts.min() < 0:
                new = np.unique(code[starts < 0])
                if self._pages + len(new) > _MAX_PAGES:
                    return None if again else self._again(matrix, totals)
                self._add_pages(new)
                starts = self._page_of[code]
            flat += starts
        slots = self._slots[flat]
        if slots.min() < 0:
            missing = np.flatnonzero(slots < 0)
            _, first = np.unique(flat[missing], return_index=True)
            rows = missing[first]
            if self._count + len(rows) > _MAX_BREAKDOWNS:
                return None if again else self._again(matrix, totals)
            self._add_rows(flat[rows], matrix[rows], totals[rows])
            slots = self._slots[flat]
        found: list[dict[str, int]] = self._objects[slots].tolist()
        return found

    def _again(self, matrix: IntArray, totals: IntArray) -> list[dict[str, int]] | None:
        """`find` in a lookup emptied and laid out anew for these rows."""
        self._clear(matrix)
        return self.find(matrix, totals, again=True)

    def _add_pages(self, codes: IntArray) -> None:
        self._page_of[codes] = np.arange(self._pages, self._pages + len(codes)) * _PAGE
        self._pages += len(codes)
        self._slots = np.concatenate([self._slots, np.full(len(codes) * _PAGE, -1, np.int32)])

    def _add_rows(self, flat: IntArray, rows: IntArray, totals: IntArray) -> None:
        start, end = self._count, self._count + len(rows)
        if end > len(self._objects):
            grown = np.empty(max(2 * len(self._objects), end), dtype=object)
            grown[:start] = self._objects[:start]
            self._objects = grown
        self._objects[start:end] = build_rows(self.keys, rows, totals)
        self._slots[flat] = np.arange(start, end)
        self._count = end


def _code(columns: IntArray, which: Sequence[int]) -> IntArray:
    """The scores of the columns `which` as one base-101 number per row (a new array), the
    first column the lowest digit; by Horner's rule, two numpy calls per further column."""
    if len(which) == 1:
        return columns[which[0]].copy()
    code = columns[which[-1]] * _BASE
    for j in reversed(which[1:-1]):
        code += columns[j]
        code *= _BASE
    code += columns[which[0]]
    return code


def build_rows(keys: Sequence[str], rows: IntArray, totals: IntArray) -> list[dict[str, int]]:
    """One breakdown dict per row: the row's scores then its total, under `keys`."""
    columns = [*rows.T.tolist(), totals.tolist()]
    return _dict_rows(len(columns))(keys, columns)


@lru_cache(maxsize=16)
def _dict_rows(width: int) -> Callable[[Sequence[str], list[list[int]]], list[dict[str, int]]]:
    """`build(keys, columns)`: one dict {keys[j]: columns[j][i]} per i. A dict display is
    several times faster than `dict(zip(keys, row))`, so the display is generated per width
    (the code holds only generated identifiers; the keys are passed in as values)."""
    keys = [f"k{j}" for j in range(width)]
    values = [f"v{j}" for j in range(width)]
    pairs = ", ".join(f"{k}: {v}" for k, v in zip(keys, values, strict=True))
    source = (
        "def build(keys, columns):\n"
        f"    {', '.join(keys)}, = keys\n"
        f"    return [{{{pairs}}} for {', '.join(values)}, in zip(*columns)]\n"
    )
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace["build"]
