"""Filters 12-14 and score: NodeResourcesFit.

Filter: `allocated + request > floor(capacity * ratio)` fails, CPU then memory then GPU (GPUs
are never overcommitted; a request without GPU never fails on them). An exact fit passes.
Score: the policy's strategy per resource (see `strategies`), combined with the resource
weights as `(sC * w_cpu + sM * w_mem) // (w_cpu + w_mem)`. Defaults: LeastAllocated, 1 and 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext
from ..models import Host, Policy
from ..names import INSUFFICIENT_CPU, INSUFFICIENT_GPU, INSUFFICIENT_MEMORY, NODE_RESOURCES_FIT
from ..table import HostTable, IntArray
from . import strategies as s


def _per_resource(policy: Policy, r: int, cap: int) -> int:
    if policy.scoring_strategy == "LeastAllocated":
        return s.least_allocated(r, cap)
    if policy.scoring_strategy == "MostAllocated":
        return s.most_allocated(r, cap)
    return s.requested_to_capacity(r, cap, policy.ratio_shape)


def _per_resource_v(policy: Policy, r: IntArray, cap: IntArray) -> IntArray:
    if policy.scoring_strategy == "LeastAllocated":
        return s.least_allocated_v(r, cap)
    if policy.scoring_strategy == "MostAllocated":
        return s.most_allocated_v(r, cap)
    return s.requested_to_capacity_v(r, cap, policy.ratio_shape)


class NodeResourcesFit:
    name = NODE_RESOURCES_FIT
    reasons = (INSUFFICIENT_CPU, INSUFFICIENT_MEMORY, INSUFFICIENT_GPU)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        u = ctx.usage(host)
        if u.cpu_req > u.cpu_cap:
            return INSUFFICIENT_CPU
        if u.mem_req > u.mem_cap:
            return INSUFFICIENT_MEMORY
        if ctx.request.gpu > 0 and u.gpu_req > u.gpu_cap:
            return INSUFFICIENT_GPU
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | None:
        u = ctx.table_usage(table)
        gpu_short = u.gpu_req > u.gpu_cap if ctx.request.gpu > 0 else False
        out = np.where(gpu_short, 3, 0)
        out = np.where(u.mem_req > u.mem_cap, 2, out)
        return np.where(u.cpu_req > u.cpu_cap, 1, out)

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        w = ctx.policy.resource_weights
        out = []
        for host in hosts:
            u = ctx.usage(host)
            cpu = _per_resource(ctx.policy, u.cpu_req, u.cpu_cap)
            mem = _per_resource(ctx.policy, u.mem_req, u.mem_cap)
            out.append((cpu * w.cpu + mem * w.memory_mb) // (w.cpu + w.memory_mb))
        return out

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        u = ctx.candidate_usage(table, idx)
        w = ctx.policy.resource_weights
        cpu = _per_resource_v(ctx.policy, u.cpu_req, u.cpu_cap)
        mem = _per_resource_v(ctx.policy, u.mem_req, u.mem_cap)
        return (cpu * w.cpu + mem * w.memory_mb) // (w.cpu + w.memory_mb)
