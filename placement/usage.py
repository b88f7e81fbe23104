"""What each host would use once the new VM is on it: effective capacity and requested amount.

`Usage` is one host's (the reference semantics); `TableUsage` is every host's, as columns, and
`CandidateUsage` the candidates' only. Columns are computed on first use and shared by the
plugins of one request: the resources filter computes the requested CPU and memory, and the
scores reuse them for the candidates. A column a request does not need (disk, say) is never
computed. The scores read `Amounts`, the candidates' columns as float64: every amount is an
integer below 2**53, so the floats are exact, and float arithmetic is several times faster than
int64 division.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .models import AllocationRatios, Host, VmRequest
from .table import FloatArray, HostTable, IntArray

# Score resources: the request's amount and the table's (capacity, allocated) columns.
SCORED = ("cpu", "memory_mb", "disk_gb")


@dataclass(frozen=True, eq=False)
class Amounts:
    """One resource of the candidates, as exact floats: effective capacity, the capacity as a
    divisor (a zero capacity divides by 1), and the amount requested once the new VM is on
    the host; `largest_cap` bounds every capacity of the table."""

    cap: FloatArray
    cap_or_1: FloatArray
    req: FloatArray
    largest_cap: float = 0.0


@dataclass(frozen=True)
class Usage:
    """Effective capacities and amounts requested once the new VM is on the host."""

    cpu_cap: int
    cpu_req: int
    mem_cap: int
    mem_req: int
    gpu_cap: int
    gpu_req: int
    disk_cap: int
    disk_req: int

    @classmethod
    def of(cls, host: Host, request: VmRequest, ratios: AllocationRatios) -> Usage:
        cpu_ratio = host.cpu_allocation_ratio or ratios.cpu
        mem_ratio = host.memory_allocation_ratio or ratios.memory_mb
        return cls(
            cpu_cap=math.floor(host.cpu_capacity * cpu_ratio),
            cpu_req=host.cpu_allocated + request.cpu,
            mem_cap=math.floor(host.memory_mb_capacity * mem_ratio),
            mem_req=host.memory_mb_allocated + request.memory_mb,
            gpu_cap=host.gpu_capacity,
            gpu_req=host.gpu_allocated + request.gpu,
            disk_cap=math.floor(host.disk_gb_capacity * host.disk_allocation_ratio),
            disk_req=host.disk_gb_allocated + request.disk_gb,
        )


class TableUsage:
    """`Usage` of every host of the table, column by column."""

    def __init__(self, table: HostTable, request: VmRequest, ratios: AllocationRatios) -> None:
        self.table = table
        self.request = request
        self.ratios = ratios
        self._candidates: CandidateUsage | None = None

    @cached_property
    def _capacity(self) -> tuple[IntArray, IntArray]:
        return self.table.effective_capacity(self.ratios.cpu, self.ratios.memory_mb)

    @cached_property
    def cpu_cap(self) -> IntArray:
        return self._capacity[0]

    @cached_property
    def cpu_req(self) -> IntArray:
        return self.table.cpu_allocated + self.request.cpu

    @cached_property
    def mem_cap(self) -> IntArray:
        return self._capacity[1]

    @cached_property
    def mem_req(self) -> IntArray:
        return self.table.memory_allocated + self.request.memory_mb

    @cached_property
    def gpu_cap(self) -> IntArray:
        return self.table.gpu_capacity

    @cached_property
    def gpu_req(self) -> IntArray:
        return self.table.gpu_allocated + self.request.gpu

    @cached_property
    def disk_cap(self) -> IntArray:
        return self.table.disk_effective

    @cached_property
    def disk_req(self) -> IntArray:
        return self.table.disk_allocated + self.request.disk_gb

    def of(self, idx: IntArray) -> CandidateUsage:
        """The columns of the hosts `idx` (the candidates), shared by the scores."""
        if self._candidates is None or self._candidates.idx is not idx:
            self._candidates = CandidateUsage(self, idx)
        return self._candidates


class CandidateUsage:
    """`TableUsage` of some hosts only (`idx`, indices into the table)."""

    def __init__(self, whole: TableUsage, idx: IntArray) -> None:
        self.whole = whole
        self.idx = idx
        self._amounts: dict[str, Amounts] = {}

    @cached_property
    def cpu_cap(self) -> IntArray:
        return self.whole.cpu_cap[self.idx]

    @cached_property
    def cpu_req(self) -> IntArray:
        return self.whole.cpu_req[self.idx]

    @cached_property
    def mem_cap(self) -> IntArray:
        return self.whole.mem_cap[self.idx]

    @cached_property
    def mem_req(self) -> IntArray:
        return self.whole.mem_req[self.idx]

    @cached_property
    def gpu_cap(self) -> IntArray:
        return self.whole.gpu_cap[self.idx]

    @cached_property
    def gpu_req(self) -> IntArray:
        return self.whole.gpu_req[self.idx]

    @cached_property
    def disk_cap(self) -> IntArray:
        return self.whole.disk_cap[self.idx]

    @cached_property
    def disk_req(self) -> IntArray:
        return self.whole.disk_req[self.idx]

    def amounts(self, resource: str) -> Amounts:
        """A scored resource (`SCORED`) of the candidates as floats, computed once."""
        cached = self._amounts.get(resource)
        if cached is None:
            whole = self.whole
            table, ratios = whole.table, whole.ratios
            if resource == "cpu":
                cap, allocated, asked = whole.cpu_cap, table.cpu_allocated, whole.request.cpu
                key: tuple[object, ...] = (resource, ratios.cpu, ratios.memory_mb)
            elif resource == "memory_mb":
                cap, allocated = whole.mem_cap, table.memory_allocated
                asked = whole.request.memory_mb
                key = (resource, ratios.cpu, ratios.memory_mb)
            else:
                cap, allocated, asked = whole.disk_cap, table.disk_allocated, whole.request.disk_gb
                key = (resource,)
            cap_f, cap_or_1, allocated_f, largest = table.memo(
                ("float", *key),
                lambda: (
                    cap.astype(np.float64),
                    np.maximum(cap, 1).astype(np.float64),
                    allocated.astype(np.float64),
                    float(cap.max(initial=0)),
                ),
            )
            req = allocated_f[self.idx]
            req += asked
            cached = Amounts(cap_f[self.idx], cap_or_1[self.idx], req, largest)
            self._amounts[resource] = cached
        return cached
