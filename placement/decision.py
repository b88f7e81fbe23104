"""The engine's answer and its explanation.

The explanation is kept as arrays (a reason code per host, a score matrix for the candidates)
and turned into dictionaries only when read, so deciding over thousands of hosts stays cheap
and a caller that wants only the top candidates never builds the rest.

Reading the whole explanation builds one dict per host, so that step runs no Python code per
host: names and keywords are taken from object arrays and zipped into the dict in C, and the
score breakdowns, which repeat a lot (every score is an integer 0..100), are built once per
distinct row and found again by the engine's `BreakdownLookup` (`breakdowns`). Candidates with
the same breakdown share that one dict: like the cached explanation itself, it is read-only.
When most hosts are candidates, their dict starts as a copy of the inventory's {name: None} (a
copy reuses the hash table; thousands of inserts would rebuild it several times) less the
rejected hosts. Likewise, when most hosts are rejected and most of those for one reason (a
spread constraint rejecting whole zones), `rejected` starts as a copy of the table's {name:
that keyword} (`HostTable.names_to`), less the candidates, with the other rejections set in
place. A copy costs a few nanoseconds per entry, an insert, a removal or a value set several
times that, so each dict is built by whichever touches the fewest entries; both keep name order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .breakdowns import MAX_PLUGINS, BreakdownLookup, build_rows
from .names import NO_HOST_FITS
from .table import IntArray, ObjectArray, object_array
from .topology_record import PlacedTopology

# Distinct score rows are found with a lookup table of at most this many entries; wider score
# ranges (site plugins) fall back to a sort.
_RANK_LIMIT = 1 << 16
# {plugins: their breakdowns}, one per engine (the weights make the total).
BreakdownCache = dict[tuple[str, ...], BreakdownLookup]
# Columns spanning fewer values than this are used as they are, without ranking them.
_DIRECT_RANGE = 64


@dataclass(frozen=True, eq=False)
class Decision:
    host: str | None
    vmid: int | None
    error: str | None
    names: tuple[str, ...]  # every host, sorted by name
    keywords: tuple[str, ...]  # reason code c > 0 means keywords[c - 1]
    reason_codes: IntArray  # per host, 0 for a candidate
    candidates: IntArray  # indices of hosts that passed every filter
    plugins: tuple[str, ...]  # score plugins included for this request
    matrix: IntArray  # candidates x plugins, each 0..100 before its weight
    totals: IntArray  # per candidate, the weighted sum
    detail: str = ""  # the reason of a VM id shortage
    # `names` as an object array (HostTable.name_array); built from `names` when not given.
    name_array: ObjectArray | None = field(default=None, repr=False)
    # The request's topology and the chosen host's domains; None when it names no topology.
    topology: PlacedTopology | None = None
    # `names` as a dict {name: None} (HostTable.name_dict); built from `names` when not given.
    name_dict: dict[str, None] | None = field(default=None, repr=False)
    # Score breakdowns already built, by plugins and scores (the engine's): reused, not rebuilt.
    interned: BreakdownCache | None = field(default=None, repr=False)
    # {name: value} for every host, by value (HostTable.names_to); None: never used.
    names_to: Callable[[str], dict[str, str]] | None = field(default=None, repr=False)

    @cached_property
    def rejected(self) -> dict[str, str]:
        codes, rejected = self.reason_codes, self._rejected_count
        if rejected == 0:
            return {}
        keywords = object_array(("", *self.keywords))
        passed = len(codes) - rejected  # the candidates (some host was judged)
        # Most hosts rejected, most of them for one reason (a spread, a pool): copy the table's
        # {name: that keyword}, take out the candidates and set the other rejections, when
        # that is fewer entries to touch than inserting every rejected host.
        worth = passed + len(codes) // 8  # one reason must reject more hosts for a copy to pay
        if self.names_to is not None and rejected > worth:
            code = int(self._code_counts[1:].argmax()) + 1
            if self._code_counts[code] > worth:
                out = self.names_to(self.keywords[code - 1]).copy()
                deque(map(out.pop, self._candidate_names), 0)
                other = np.flatnonzero((codes != code) & (codes != 0))
                found = keywords[codes[other]].tolist()
                out.update(zip(self._names_at(other), found, strict=True))
                return out
        found = keywords[codes[self._rejected_rows]].tolist()
        return dict(zip(self._rejected_names, found, strict=True))

    @cached_property
    def scores(self) -> dict[str, dict[str, int]]:
        if len(self.candidates) == 0:
            return {}
        breakdowns = self._breakdowns()
        if len(self.candidates) < self._rejected_count:
            return dict(zip(self._candidate_names, breakdowns, strict=True))
        out: dict[str, Any] = (self.name_dict or dict.fromkeys(self.names)).copy()
        deque(map(out.pop, self._rejected_names), 0)
        # The keys left are the candidates, in name order: setting their values while reading
        # them is safe (no key is added or removed) and saves listing their names.
        out.update(zip(out, breakdowns, strict=True))
        return out

    @cached_property
    def reason_counts(self) -> dict[str, int]:
        counts = self._code_counts
        pairs = [(self.keywords[c - 1], int(n)) for c, n in enumerate(counts) if c and n]
        return dict(sorted(pairs, key=lambda kv: (-kv[1], kv[0])))

    @cached_property
    def summary(self) -> str:
        if self.error == NO_HOST_FITS:
            if not self.names:
                return "no host fits: the inventory has no hosts"
            parts = ", ".join(f"{n} {k}" for k, n in self.reason_counts.items())
            return f"no host fits: {parts}"
        if self.error is not None:
            return f"{self.error}: {self.detail}" if self.detail else self.error
        total = int(self.totals[self._ranking()[0]]) if len(self.candidates) else 0
        vmid = f", vmid {self.vmid}" if self.vmid is not None else ""
        return f"placed on {self.host} (total {total}){vmid}"

    def ranked(self) -> list[str]:
        """Candidates, best first (total descending, then name ascending)."""
        return [self.names[self.candidates[j]] for j in self._ranking()]

    def top_scores(self, n: int) -> dict[str, dict[str, int]]:
        """The score breakdown of the `n` best candidates only, best first."""
        return self._scores_of(self._ranking()[: max(n, 0)])

    def to_json(self) -> dict[str, Any]:
        out = {
            "host": self.host,
            "vmid": self.vmid,
            "error": self.error,
            "rejected": self.rejected,
            "scores": self.scores,
        }
        if self.topology is not None:
            out["topology"] = self.topology.model_dump()
        return out

    def _ranking(self) -> IntArray:
        # Candidates are in name order, so a stable sort on -total keeps name_asc for ties.
        return np.argsort(-self.totals, kind="stable")

    def _breakdowns(self) -> list[dict[str, int]]:
        """The breakdown dict of every candidate, from the engine's lookup where it can."""
        plugins = self.plugins
        if self.interned is not None and 1 <= len(plugins) <= MAX_PLUGINS:
            lookup = self.interned.get(plugins)
            if lookup is None:
                lookup = self.interned[plugins] = BreakdownLookup(plugins, self.matrix)
            found = lookup.find(self.matrix, self.totals)
            if found is not None:
                return found
        # The total follows from the plugin scores, so the plugin columns alone tell rows apart.
        picked, inverse = _distinct_rows(self.matrix)
        built = build_rows((*plugins, "total"), self.matrix[picked], self.totals[picked])
        return object_array(built)[inverse].tolist()

    def _names_at(self, idx: IntArray) -> list[str]:
        return self._name_array[idx].tolist()

    @cached_property
    def _code_counts(self) -> IntArray:
        """Hosts per reason code (index 0: candidates)."""
        return np.bincount(self.reason_codes, minlength=len(self.keywords) + 1)

    @cached_property
    def _rejected_count(self) -> int:
        return int(np.count_nonzero(self.reason_codes))

    @cached_property
    def _rejected_rows(self) -> IntArray:
        # nonzero of a boolean array runs several times faster than of the int64 codes.
        return np.flatnonzero(self.reason_codes != 0)

    @cached_property
    def _candidate_names(self) -> list[str]:
        return self._names_at(self.candidates)

    @cached_property
    def _rejected_names(self) -> list[str]:
        return self._names_at(self._rejected_rows)

    @cached_property
    def _name_array(self) -> ObjectArray:
        return object_array(self.names) if self.name_array is None else self.name_array

    def _scores_of(self, rows: Any) -> dict[str, dict[str, int]]:
        rows = list(rows)
        keys = (*self.plugins, "total")
        table = np.column_stack([self.matrix, self.totals])[rows].tolist()
        names = self.names
        hosts = self.candidates[rows].tolist()
        return {
            names[i]: dict(zip(keys, row, strict=True)) for i, row in zip(hosts, table, strict=True)
        }


def _distinct_rows(matrix: IntArray) -> tuple[IntArray, IntArray]:
    """For an integer matrix: the index of one row per distinct row, and for every row the
    position of its distinct row in that list. Linear time: each column is replaced by the dense
    rank of its values (scores span a small range), the ranks are combined into one mixed-radix
    code per row, and codes are told apart with a lookup table instead of a sort."""
    n = len(matrix)
    code: IntArray | None = None
    space = offset = 1
    lows, highs = matrix.min(axis=0).tolist(), matrix.max(axis=0).tolist()
    for column, low, high in zip(matrix.T, lows, highs, strict=True):
        if low < 0 or high >= _RANK_LIMIT:
            return _distinct_rows_sorted(matrix)
        if high - low < _DIRECT_RANGE and space * (high - low + 1) < _RANK_LIMIT:
            # A narrow column is its own rank (value - low + 1): no lookup needed.
            distinct, ranks = high - low + 1, column - (low - 1)
        else:
            present = np.zeros(high + 1, dtype=bool)
            present[column] = True
            rank = np.cumsum(present)  # the dense rank of each value, from 1
            distinct, ranks = int(rank[-1]), rank[column]
        if space * distinct >= _RANK_LIMIT:
            return _distinct_rows_sorted(matrix)
        if code is None:
            code = ranks
        else:
            code *= distinct
            code += ranks
            offset = offset * distinct + 1
        space *= distinct
    # Ranks counted from 1 add `offset` to every code: take it off once.
    code = np.zeros(n, dtype=np.int64) if code is None else code - offset
    representative = np.full(space, -1, dtype=np.int64)
    representative[code] = np.arange(n)
    seen = representative >= 0
    position = np.cumsum(seen) - 1
    return representative[seen], position[code]


def _distinct_rows_sorted(matrix: IntArray) -> tuple[IntArray, IntArray]:
    _, picked, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
    return picked, inverse.reshape(-1)
