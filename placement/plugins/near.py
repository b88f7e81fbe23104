"""Pre-filter, filter 17 and score: `near`, the domain of the VM being replaced.

`near: {vm, topology_key, required}` wants the domain of the host of an existing VM.
Pre-filter: the VM must be among the existing VMs and its host in the inventory with the key;
otherwise there is no placement, error `near_unknown` (no host is listed as rejected).
Filter (required): a host that lacks the key or is in another domain fails with `not_near`.
Score (only when `near` is set and not required): 100 in the wanted domain, 0 otherwise.
Default weight 2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import PreFilterFailure, RequestContext
from ..models import Host
from ..names import NEAR, NEAR_UNKNOWN, NOT_NEAR
from ..table import BoolArray, HostTable, IntArray
from ..topology import NearDomain, domain_of
from ..topology_record import describe_domain


def wanted(ctx: RequestContext) -> NearDomain:
    target = ctx.near_target()
    assert target is not None, "only called for a request with near"
    return target


def not_near_detail(ctx: RequestContext, host: Host) -> str:
    """`wants zone=z2 (host h7 of node-3), has zone=z1` for the explanation."""
    near = ctx.request.near
    if near is None:
        return ""
    target = wanted(ctx)
    want = describe_domain(near.topology_key, target.domain)
    have = describe_domain(near.topology_key, domain_of(host, near.topology_key))
    return f"wants {want} (host {target.host} of {target.vm}), has {have}"


def _same_domain(ctx: RequestContext, table: HostTable) -> BoolArray:
    near = ctx.request.near
    assert near is not None
    domains = table.domains(near.topology_key)
    target = wanted(ctx).domain
    # -2 matches no host: the wanted domain is unknown or held by no host of the table.
    code = -2 if target is None else domains.lookup.get(target, -2)
    return domains.code == code


class Near:
    name = NEAR
    reasons = (NOT_NEAR,)

    def pre_filter(self, ctx: RequestContext) -> PreFilterFailure | None:
        if ctx.request.near is None:
            return None
        target = wanted(ctx)
        return None if target.domain is not None else PreFilterFailure(NEAR_UNKNOWN, target.problem)

    def _in_domain(self, ctx: RequestContext, host: Host) -> bool:
        near = ctx.request.near
        assert near is not None
        target = wanted(ctx).domain
        return target is not None and domain_of(host, near.topology_key) == target

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        near = ctx.request.near
        if near is None or not near.required:
            return None
        return None if self._in_domain(ctx, host) else NOT_NEAR

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        near = ctx.request.near
        if near is None or not near.required:
            return None
        return ~_same_domain(ctx, table)

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        near = ctx.request.near
        if near is None or near.required:
            return None
        return [100 if self._in_domain(ctx, h) else 0 for h in hosts]

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        near = ctx.request.near
        if near is None or near.required:
            return None
        scores = _same_domain(ctx, table)[idx].astype(np.int64)
        scores *= 100
        return scores
