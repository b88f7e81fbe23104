"""Filter 9 and score: taints and tolerations with Kubernetes semantics.

Filter: a NoSchedule or NoExecute taint that no toleration tolerates rejects the host.
Score (only when some candidate carries a PreferNoSchedule taint): with `n` the untolerated
PreferNoSchedule taints of a host, `100 - 100 * n // max(n)`; 100 for all when max is 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext, per_signature
from ..models import Host, Taint, Toleration
from ..names import TAINT_TOLERATION, UNTOLERATED_TAINT
from ..table import BoolArray, HostTable, IntArray

_HARD = ("NoSchedule", "NoExecute")
_SOFT = "PreferNoSchedule"


def tolerated(taint: Taint, tolerations: Sequence[Toleration]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def _blocks(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> bool:
    return any(t.effect in _HARD and not tolerated(t, tolerations) for t in taints)


def _soft_count(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    return sum(1 for t in taints if t.effect == _SOFT and not tolerated(t, tolerations))


def _has_soft(taints: Sequence[Taint]) -> bool:
    return any(t.effect == _SOFT for t in taints)


def _normalize(counts: list[int]) -> list[int]:
    top = max(counts, default=0)
    return [100 if top == 0 else 100 - 100 * n // top for n in counts]


class TaintToleration:
    name = TAINT_TOLERATION
    reasons = (UNTOLERATED_TAINT,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        return UNTOLERATED_TAINT if _blocks(host.taints, ctx.request.tolerations) else None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        tol = ctx.request.tolerations

        def untolerated() -> BoolArray | None:
            blocked = [_blocks(s, tol) for s in table.taint_sets]
            return per_signature(table.taint_sig, blocked).astype(bool) if any(blocked) else None

        # Requests share a few sets of tolerations: judge each set once per inventory.
        return table.memo(("untolerated", *tol), untolerated)

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        if not any(_has_soft(h.taints) for h in hosts):
            return None
        return _normalize([_soft_count(h.taints, ctx.request.tolerations) for h in hosts])

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        tol = ctx.request.tolerations
        # Requests share a few sets of tolerations: per set, the table's hosts once.
        soft: _SoftTaints | None = table.memo(("soft", *tol), lambda: _SoftTaints.of(table, tol))
        return None if soft is None else soft.scores(idx)


class _SoftTaints:
    """Per host of a table, for one set of tolerations: its untolerated PreferNoSchedule
    taints, -1 for a host without any PreferNoSchedule taint; and the scores that follow for
    each maximum count seen so far. A request then reads its candidates with two gathers."""

    def __init__(self, counts: IntArray) -> None:
        self.counts = counts
        self._by_top: dict[int, IntArray] = {}

    @classmethod
    def of(cls, table: HostTable, tol: Sequence[Toleration]) -> _SoftTaints | None:
        """None when no host has a PreferNoSchedule taint (the score never applies)."""
        counts = [_soft_count(s, tol) if _has_soft(s) else -1 for s in table.taint_sets]
        return cls(per_signature(table.taint_sig, counts)) if max(counts, default=-1) >= 0 else None

    def scores(self, idx: IntArray) -> IntArray | None:
        """The candidates' scores, None when none of them has a PreferNoSchedule taint."""
        top = int(self.counts[idx].max(initial=-1))
        if top < 0:
            return None
        if top == 0:
            return np.full(len(idx), 100, dtype=np.int64)
        scores = self._by_top.get(top)
        if scores is None:
            # A host without PreferNoSchedule taints (-1) scores as one with none untolerated.
            scores = self._by_top[top] = 100 - (100 * np.maximum(self.counts, 0)) // top
        return scores[idx]
