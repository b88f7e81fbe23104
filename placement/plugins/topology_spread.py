"""Filter 16 and score: PodTopologySpread, Kubernetes' meaning over a group's VMs.

Per constraint, *eligible hosts* have the key and pass pool, node_selector and node_affinity
(taints and cordons do not matter: nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore).
`count[d]` = VMs of the constraint's group on eligible hosts of domain `d`; `min` = the
smallest `count[d]` over the eligible hosts' domains (0 when there are none).
Filter (DoNotSchedule): a host lacking the key, or with `count[d] + 1 - min > max_skew`, fails
with `topology_spread_violation`.
Score (only with a ScheduleAnyway constraint): `raw(h)` = sum over those constraints of
`count[domain(h)]`, `100 - 100 * raw // max(raw)` over the candidates that have every key (100
for all when max is 0); a candidate lacking a key scores 0. Default weight 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..framework import RequestContext, per_signature
from ..models import Host, TopologySpreadConstraint, VmRequest
from ..names import POD_TOPOLOGY_SPREAD, TOPOLOGY_SPREAD_VIOLATION
from ..table import BoolArray, HostTable, IntArray
from ..topology import domain_of
from ..topology_record import describe_domain
from .node_affinity import label_reason


@dataclass(frozen=True)
class SpreadCounts:
    """One constraint evaluated host by host: the reference semantics."""

    constraint: TopologySpreadConstraint
    counts: dict[str, int]  # every domain of an eligible host, 0 included
    min: int

    def count(self, domain: str) -> int:
        return self.counts.get(domain, 0)

    def violated_by(self, domain: str | None) -> bool:
        if domain is None:
            return True
        return self.count(domain) + 1 - self.min > self.constraint.max_skew


@dataclass(frozen=True, eq=False)
class TableSpread:
    """One constraint over the whole table, kept per domain: hosts read their domain's entry
    with one gather when a result is needed, so a request makes one pass over the table's
    hosts per result instead of several (a host array per step)."""

    constraint: TopologySpreadConstraint
    code: IntArray  # per host, its domain code under the key (-1 lacks the key)
    counts: IntArray  # per domain code, then one last slot, 0, read by code -1
    min: int

    def violations(self) -> BoolArray:
        # count + 1 - min > max_skew, in one comparison.
        over = self.counts > self.constraint.max_skew + self.min - 1
        over[-1] = True  # a host lacking the key always violates
        return over[self.code]

    def count_at(self, idx: IntArray) -> IntArray:
        """count[domain(h)] of the hosts at `idx`, 0 where a host lacks the key."""
        return self.counts[self.code[idx]]


def _eligible(request: VmRequest, host: Host) -> bool:
    pool_ok = request.pool is None or host.pool == request.pool
    return pool_ok and label_reason(request, host.labels) == 0


def spread_counts(ctx: RequestContext) -> list[SpreadCounts]:
    """Every constraint's counts, host by host (computed once per request)."""
    cached = ctx.memo.get("spread_counts")
    if cached is None:
        request = ctx.request
        eligible = [h for h in ctx.table.hosts if _eligible(request, h)]
        cached = []
        for constraint in request.topology_spread:
            key, group = constraint.topology_key, request.spread_group(constraint)
            domain_by_host = {h.name: domain_of(h, key) for h in eligible}
            counts = {d: 0 for d in domain_by_host.values() if d is not None}
            for vm in ctx.existing_vms:
                domain = domain_by_host.get(vm.host)
                if vm.group == group and domain is not None:
                    counts[domain] += 1
            cached.append(SpreadCounts(constraint, counts, min(counts.values(), default=0)))
        ctx.memo["spread_counts"] = cached
    return cached


def _eligible_table(ctx: RequestContext, table: HostTable) -> BoolArray | None:
    """The hosts eligible for the request's constraints, before the key; None for all."""
    request = ctx.request
    in_pool = None if request.pool is None else table.pool == table.pool_codes.get(request.pool, -2)
    if not request.node_selector and not (request.node_affinity and request.node_affinity.required):
        # Every label set passes: no selector, no required term.
        return in_pool
    labels_ok = per_signature(
        table.label_sig, [label_reason(request, s) == 0 for s in table.label_sets]
    ).astype(bool)
    return labels_ok if in_pool is None else labels_ok & in_pool


def spread_table(ctx: RequestContext, table: HostTable) -> list[TableSpread]:
    """Every constraint's counts over the table (computed once per request)."""
    cached = ctx.memo.get("spread_table")
    if cached is None:
        request = ctx.request
        base = _eligible_table(ctx, table)
        cached = []
        for constraint in request.topology_spread:
            group = request.spread_group(constraint)
            domains = table.domains(constraint.topology_key)
            vm_hosts = np.zeros(0, dtype=np.int64) if group is None else ctx.group_rows(group)
            if base is None:
                # Every host with the key is eligible: its domains are the table's own.
                vm_codes = domains.code[vm_hosts]
                vm_codes = vm_codes[vm_codes >= 0]
                present = domains.held
            else:
                eligible = base & (domains.code >= 0)
                vm_codes = domains.code[vm_hosts[eligible[vm_hosts]]]
                present = np.zeros(len(domains) + 1, dtype=bool)
                present[domains.code[eligible]] = True
            # One extra slot so that a host lacking the key (code -1) reads a 0.
            counts = np.bincount(vm_codes, minlength=len(domains) + 1)
            counts[-1] = 0
            low = int(counts[present].min()) if present.any() else 0
            cached.append(TableSpread(constraint, domains.code, counts, low))
        ctx.memo["spread_table"] = cached
    return cached


def _hard(c: TopologySpreadConstraint) -> bool:
    return c.when_unsatisfiable == "DoNotSchedule"


def violation_detail(ctx: RequestContext, host: Host) -> str:
    """The first violated constraint, e.g. `zone=z1 has 3, min 1, max_skew 1`."""
    for spread in spread_counts(ctx):
        key = spread.constraint.topology_key
        domain = domain_of(host, key)
        if _hard(spread.constraint) and spread.violated_by(domain):
            if domain is None:
                return describe_domain(key, None)
            have = spread.count(domain)
            return f"{describe_domain(key, domain)} has {have}, min {spread.min}, " + (
                f"max_skew {spread.constraint.max_skew}"
            )
    return ""


def _normalize(raw: IntArray, complete: BoolArray) -> IntArray:
    top = int(raw[complete].max(initial=0))
    scores = np.full(len(raw), 100, dtype=np.int64) if top == 0 else 100 - (100 * raw) // top
    return np.where(complete, scores, 0)


class PodTopologySpread:
    name = POD_TOPOLOGY_SPREAD
    reasons = (TOPOLOGY_SPREAD_VIOLATION,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        for spread in spread_counts(ctx):
            domain = domain_of(host, spread.constraint.topology_key)
            if _hard(spread.constraint) and spread.violated_by(domain):
                return TOPOLOGY_SPREAD_VIOLATION
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        if not any(_hard(c) for c in ctx.request.topology_spread):
            return None
        hard = [s.violations() for s in spread_table(ctx, table) if _hard(s.constraint)]
        return np.logical_or.reduce(hard) if len(hard) > 1 else hard[0]

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        if all(_hard(c) for c in ctx.request.topology_spread):
            return None
        soft = [s for s in spread_counts(ctx) if not _hard(s.constraint)]
        if not soft:
            return None
        raw, complete = [], []
        for host in hosts:
            domains = [domain_of(host, s.constraint.topology_key) for s in soft]
            complete.append(all(d is not None for d in domains))
            raw.append(sum(s.count(d) for s, d in zip(soft, domains, strict=True) if d is not None))
        top = max((r for r, ok in zip(raw, complete, strict=True) if ok), default=0)
        return [
            0 if not ok else 100 if top == 0 else 100 - 100 * r // top
            for r, ok in zip(raw, complete, strict=True)
        ]

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        if all(_hard(c) for c in ctx.request.topology_spread):
            return None
        soft = [s for s in spread_table(ctx, table) if not _hard(s.constraint)]
        if not soft:
            return None
        raw = np.zeros(len(idx), dtype=np.int64)
        complete = np.ones(len(idx), dtype=bool)
        for spread in soft:
            raw += spread.count_at(idx)
            complete &= spread.code[idx] >= 0
        return _normalize(raw, complete)
