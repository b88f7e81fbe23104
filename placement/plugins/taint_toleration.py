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
        # Per taint set: has it a PreferNoSchedule taint, and how many are untolerated.
        soft, counts = table.memo(
            ("soft", *tol),
            lambda: (
                np.array([_has_soft(s) for s in table.taint_sets], dtype=bool),
                np.array([_soft_count(s, tol) for s in table.taint_sets], dtype=np.int64),
            ),
        )
        if not soft.any():
            return None
        sig = table.taint_sig[idx]
        present = np.bincount(sig, minlength=len(soft)) > 0  # the candidates' taint sets
        if not soft[present].any():
            return None
        top = int(counts[present].max())
        if top == 0:
            return np.full(len(idx), 100, dtype=np.int64)
        return (100 - (100 * counts) // top)[sig]
