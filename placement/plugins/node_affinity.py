"""Filters 10-11 and score: node selector, required and preferred node affinity.

Filter: every selector pair present and equal, then (when `required` is non-empty) some term
whose expressions are all true. An empty term, or a term with an expression that is not label
syntax (or a Gt/Lt value that is not an integer), matches no host, as in kube-scheduler; in
`preferred` such a term adds nothing. Score (only when `preferred` is non-empty): the sum of the
weights of matching preferred terms, normalised `100 * raw // max(raw)` (0 for all when max is 0).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext, per_signature
from ..models import Host, MatchExpression, VmRequest
from ..names import NODE_AFFINITY, NODE_AFFINITY_MISMATCH, NODE_SELECTOR_MISMATCH
from ..table import HostTable, IntArray


def term_matches(term: Sequence[MatchExpression], labels: dict[str, str]) -> bool:
    """All expressions true; an empty term, or one Kubernetes cannot parse, matches nothing."""
    return bool(term) and all(expr.matches(labels) for expr in term)


def label_reason(request: VmRequest, labels: dict[str, str]) -> int:
    """0 passes, 1 selector mismatch, 2 required affinity mismatch."""
    if any(labels.get(k) != v for k, v in request.node_selector.items()):
        return 1
    affinity = request.node_affinity
    if (
        affinity
        and affinity.required
        and not any(term_matches(term, labels) for term in affinity.required)
    ):
        return 2
    return 0


def _raw(request: VmRequest, labels: dict[str, str]) -> int:
    assert request.node_affinity is not None
    return sum(p.weight for p in request.node_affinity.preferred if term_matches(p.match, labels))


class NodeAffinity:
    name = NODE_AFFINITY
    reasons = (NODE_SELECTOR_MISMATCH, NODE_AFFINITY_MISMATCH)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        code = label_reason(ctx.request, host.labels)
        return self.reasons[code - 1] if code else None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | None:
        request = ctx.request
        if not request.node_selector and not (
            request.node_affinity and request.node_affinity.required
        ):
            return None
        return per_signature(table.label_sig, [label_reason(request, s) for s in table.label_sets])

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        if not (ctx.request.node_affinity and ctx.request.node_affinity.preferred):
            return None
        raw = [_raw(ctx.request, h.labels) for h in hosts]
        top = max(raw, default=0)
        return [0 if top == 0 else 100 * r // top for r in raw]

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        if not (ctx.request.node_affinity and ctx.request.node_affinity.preferred):
            return None
        raw = per_signature(table.label_sig[idx], [_raw(ctx.request, s) for s in table.label_sets])
        top = int(raw.max(initial=0))
        return np.zeros(len(idx), dtype=np.int64) if top == 0 else (100 * raw) // top
