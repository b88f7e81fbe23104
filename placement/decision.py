"""The engine's answer and its explanation.

The explanation is kept as arrays (a reason code per host, a score matrix for the candidates)
and turned into dictionaries only when read, so deciding over thousands of hosts stays cheap
and a caller that wants only the top candidates never builds the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .names import NO_HOST_FITS
from .table import IntArray


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

    @cached_property
    def rejected(self) -> dict[str, str]:
        rows = np.flatnonzero(self.reason_codes)
        keywords = ("", *self.keywords)
        codes = self.reason_codes[rows].tolist()
        names = self.names
        return {names[i]: keywords[c] for i, c in zip(rows.tolist(), codes, strict=True)}

    @cached_property
    def scores(self) -> dict[str, dict[str, int]]:
        return self._scores_of(range(len(self.candidates)))

    @cached_property
    def reason_counts(self) -> dict[str, int]:
        counts = np.bincount(self.reason_codes, minlength=len(self.keywords) + 1)
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
        return {
            "host": self.host,
            "vmid": self.vmid,
            "error": self.error,
            "rejected": self.rejected,
            "scores": self.scores,
        }

    def _ranking(self) -> IntArray:
        # Candidates are in name order, so a stable sort on -total keeps name_asc for ties.
        return np.argsort(-self.totals, kind="stable")

    def _scores_of(self, rows: Any) -> dict[str, dict[str, int]]:
        rows = list(rows)
        keys = (*self.plugins, "total")
        table = np.column_stack([self.matrix, self.totals])[rows].tolist()
        names = self.names
        hosts = self.candidates[rows].tolist()
        return {
            names[i]: dict(zip(keys, row, strict=True)) for i, row in zip(hosts, table, strict=True)
        }
