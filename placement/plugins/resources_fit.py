"""Filters 12-14, the disk and device filters, and score: NodeResourcesFit.

Filter: `allocated + request > floor(capacity * ratio)` fails, CPU then memory then GPU (GPUs
are never overcommitted; a request without GPU never fails on them), then disk (only when the
request asks for some; the host's own `disk_allocation_ratio`), then devices: some device `d`
the request asks `n > 0` of with `devices_allocated[d] + n > devices_capacity[d]` (absent: 0;
never overcommitted). An exact fit passes. The explanation names the first short device by
name order (`device_short`).
Score: the policy's strategy per resource (see `strategies`), the weighted mean over the
resources with a positive weight, `(sC * w_cpu + sM * w_mem + sD * w_disk) // (w_cpu + w_mem +
w_disk)`. Defaults: LeastAllocated, cpu 1, memory 1, disk 0 (disk filtered, not scored).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..framework import FilterMasks, RequestContext
from ..models import AllocationRatios, Host, Policy, VmRequest
from ..names import (
    INSUFFICIENT_CPU,
    INSUFFICIENT_DEVICE,
    INSUFFICIENT_DISK,
    INSUFFICIENT_GPU,
    INSUFFICIENT_MEMORY,
    NODE_RESOURCES_FIT,
)
from ..table import HostTable, IntArray
from ..usage import Scored, scored_resources
from . import strategies as s


def _per_resource(policy: Policy, r: int, cap: int) -> int:
    if policy.scoring_strategy == "LeastAllocated":
        return s.least_allocated(r, cap)
    if policy.scoring_strategy == "MostAllocated":
        return s.most_allocated(r, cap)
    return s.requested_to_capacity(r, cap, policy.ratio_shape)


def _per_resource_v(policy: Policy, a: Scored) -> IntArray:
    if policy.scoring_strategy == "LeastAllocated":
        return s.least_allocated_v(a)
    if policy.scoring_strategy == "MostAllocated":
        return s.most_allocated_v(a)
    return s.requested_to_capacity_v(a, policy.ratio_shape)


def device_short(request: VmRequest, host: Host) -> str | None:
    """The first device (by name) the host has too few of for the request, or None."""
    for name, count in sorted(request.devices.items()):
        have = host.devices_capacity.get(name, 0) - host.devices_allocated.get(name, 0)
        if count > 0 and count > have:
            return name
    return None


class NodeResourcesFit:
    name = NODE_RESOURCES_FIT
    reasons = (
        INSUFFICIENT_CPU,
        INSUFFICIENT_MEMORY,
        INSUFFICIENT_GPU,
        INSUFFICIENT_DISK,
        INSUFFICIENT_DEVICE,
    )

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        u = ctx.usage(host)
        if u.cpu_req > u.cpu_cap:
            return INSUFFICIENT_CPU
        if u.mem_req > u.mem_cap:
            return INSUFFICIENT_MEMORY
        if ctx.request.gpu > 0 and u.gpu_req > u.gpu_cap:
            return INSUFFICIENT_GPU
        if ctx.request.disk_gb > 0 and u.disk_req > u.disk_cap:
            return INSUFFICIENT_DISK
        if device_short(ctx.request, host) is not None:
            return INSUFFICIENT_DEVICE
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> FilterMasks:
        request = ctx.request
        ratios = ctx.policy.allocation_ratios
        # allocated + asked > capacity is asked > capacity - allocated: the room is kept per
        # table and allocation ratios, so each resource is one comparison per request, and
        # none when the request fits in the least room of any host (no mask to write).
        room = table.memo(("room", ratios.cpu, ratios.memory_mb), lambda: _Room.of(table, ratios))
        devices = None
        for name, count in request.devices.items():
            if count > 0:
                short = table.device_short(name, count)
                devices = short if devices is None else devices | short
        u = ctx.table_usage(table)
        return (
            room.cpu < request.cpu if request.cpu > room.least_cpu else None,
            room.memory < request.memory_mb if request.memory_mb > room.least_memory else None,
            u.gpu_req > u.gpu_cap if request.gpu > 0 else None,
            u.disk_req > u.disk_cap if request.disk_gb > 0 else None,
            devices,
        )

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        w = ctx.policy.resource_weights
        out = []
        for host in hosts:
            u = ctx.usage(host)
            total = _per_resource(ctx.policy, u.cpu_req, u.cpu_cap) * w.cpu
            total += _per_resource(ctx.policy, u.mem_req, u.mem_cap) * w.memory_mb
            if w.disk_gb:
                total += _per_resource(ctx.policy, u.disk_req, u.disk_cap) * w.disk_gb
            out.append(total // (w.cpu + w.memory_mb + w.disk_gb))
        return out

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        resources = scored_resources(ctx.policy)
        block = ctx.candidate_usage(table, idx).scored(resources)
        per_resource = _per_resource_v(ctx.policy, block)
        w = ctx.policy.resource_weights
        weights = [getattr(w, r) for r in resources]
        total = per_resource[0] if weights[0] == 1 else per_resource[0] * weights[0]
        for row, weight in zip(per_resource[1:], weights[1:], strict=True):
            if weight == 1:
                total += row
            elif weight:
                total += row * weight
        divisor = w.cpu + w.memory_mb + w.disk_gb
        if divisor > 0 and divisor & (divisor - 1) == 0:
            # A power of two (the default weights sum to 2): an arithmetic shift floors alike
            # and costs a fraction of an integer division.
            total >>= divisor.bit_length() - 1
        else:
            total //= divisor
        return total


@dataclass(frozen=True, eq=False)
class _Room:
    """CPU and memory left on every host before any request: effective capacity less
    allocated (negative when already over); and the least of each over the hosts."""

    cpu: IntArray
    memory: IntArray
    least_cpu: int
    least_memory: int

    @classmethod
    def of(cls, table: HostTable, ratios: AllocationRatios) -> _Room:
        cpu_cap, mem_cap = table.effective_capacity(ratios.cpu, ratios.memory_mb)
        cpu, memory = cpu_cap - table.cpu_allocated, mem_cap - table.memory_allocated
        if len(table) == 0:
            return cls(cpu, memory, 0, 0)
        return cls(cpu, memory, int(cpu.min()), int(memory.min()))
