"""The plugin contract: a name, and one small protocol per stage.

A filter tells, per host, the first reason keyword it fails (or None). A score gives, for the
candidates, an integer 0..100 per host after its own normalisation, or None when it does not
apply to this request (then it is left out of the total and of the breakdown). Built-in plugins
also evaluate a whole `HostTable` at once with numpy; the per-host methods are the reference
semantics and must give the same answers. Site plugins may implement only the per-host form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .models import ExistingVm, Host, Policy, VmRequest
from .table import BoolArray, HostTable, IntArray
from .topology import NearDomain, domain_of, near_domain
from .usage import CandidateUsage, TableUsage, Usage


@dataclass(frozen=True)
class PreFilterFailure:
    """A request that no host can take, whatever the hosts: no host is listed as rejected."""

    error: str  # a stable keyword, e.g. near_unknown
    detail: str


@runtime_checkable
class PreFilter(Protocol):
    def pre_filter(self, ctx: RequestContext) -> PreFilterFailure | None:
        """Runs once per request before any filter (kube-scheduler's PreFilter returning
        UnschedulableAndUnresolvable); the first failure ends the decision."""
        ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str
    # Keywords this filter may report, in the order it checks them.
    reasons: tuple[str, ...]

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None: ...


# One boolean mask per reason (None: that check does not apply to the request).
FilterMasks = tuple[BoolArray | None, ...]


@runtime_checkable
class TableFilter(Protocol):
    def filter_table(
        self, ctx: RequestContext, table: HostTable
    ) -> IntArray | BoolArray | FilterMasks | None:
        """Per host: 0 passes, i + 1 fails with `reasons[i]`; or a boolean mask, True failing
        with `reasons[0]`; or a mask per reason, a host failing the first that holds it.
        None: no host fails for this request (kube-scheduler's PreFilter "Skip"), so the
        engine does no work for it."""
        ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None: ...


@runtime_checkable
class TableScore(Protocol):
    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        """Scores of the candidates `idx` (indices into the table), or None when not applicable."""
        ...


class PerHostScore:
    """Base for a score computed host by host, with an optional normalisation over candidates."""

    name: str = ""

    def score_host(self, ctx: RequestContext, host: Host) -> int:
        raise NotImplementedError

    def normalize(self, ctx: RequestContext, raw: list[int]) -> list[int] | None:
        return raw

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        return self.normalize(ctx, [self.score_host(ctx, h) for h in hosts])


@dataclass(eq=False)
class RequestContext:
    """Per-request state computed once before any host is looked at (or on first use)."""

    request: VmRequest
    policy: Policy
    existing_vms: Sequence[ExistingVm]
    name_regex: re.Pattern[str] | None
    # Every host of the inventory: spread and near look beyond the host being filtered.
    table: HostTable
    memo: dict[str, Any] = field(default_factory=dict)
    _group_rows: dict[str, IntArray] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        request: VmRequest,
        policy: Policy,
        existing_vms: Sequence[ExistingVm],
        table: HostTable,
    ) -> RequestContext:
        regex = re.compile(request.node_name_regex) if request.node_name_regex else None
        return cls(request, policy, existing_vms, regex, table)

    @cached_property
    def group_hosts(self) -> frozenset[str]:
        """Hosts holding a VM of the request's anti-affinity group (in the table or not)."""
        group = self.request.anti_affinity_group
        if group is None:
            return frozenset()
        return frozenset(vm.host for vm in self.existing_vms if vm.group == group)

    @cached_property
    def group_domains(self) -> frozenset[str]:
        """The domains of `group_hosts` under the request's anti_affinity_scope (hosts of the
        table that have that key)."""
        domains: set[str] = set()
        for name in self.group_hosts:
            i = self.table.index.get(name)
            domain = (
                None
                if i is None
                else domain_of(self.table.hosts[i], self.request.anti_affinity_scope)
            )
            if domain is not None:
                domains.add(domain)
        return frozenset(domains)

    def group_rows(self, group: str) -> IntArray:
        """Table rows of the hosts of `group`'s existing VMs, one per VM (a VM on a host
        outside the table is left out). Found once per request and group, shared by
        anti-affinity and spread (`HostTable.group_rows`)."""
        rows = self._group_rows.get(group)
        if rows is None:
            rows = self._group_rows[group] = self.table.group_rows(group, self.existing_vms)
        return rows

    def near_target(self) -> NearDomain | None:
        """The host and domain the request's `near` names (once per request); None without."""
        near = self.request.near
        if near is None:
            return None
        if "near" not in self.memo:
            self.memo["near"] = near_domain(near, self.existing_vms, self.table)
        return self.memo["near"]

    def usage(self, host: Host) -> Usage:
        return Usage.of(host, self.request, self.policy.allocation_ratios)

    def table_usage(self, table: HostTable) -> TableUsage:
        cached = self.memo.get("usage")
        if cached is None:
            cached = TableUsage(table, self.request, self.policy.allocation_ratios)
            self.memo["usage"] = cached
        return cached

    def candidate_usage(self, table: HostTable, idx: IntArray) -> CandidateUsage:
        """`table_usage` of the candidates `idx` only, shared by the scores of this request."""
        return self.table_usage(table).of(idx)


def per_signature(sig: IntArray, values: Sequence[int] | Sequence[bool]) -> IntArray:
    """Broadcast one value per distinct signature to every host carrying it."""
    return np.asarray(values, dtype=np.int64)[sig] if len(sig) else np.zeros(0, dtype=np.int64)
