"""What each host would use once the new VM is on it: effective capacity and requested amount.

`Usage` is one host's (the reference semantics); `TableUsage` is every host's, as columns, and
`CandidateUsage` the candidates' only. Columns are computed on first use and shared by the
plugins of one request: the resources filter computes the requested CPU and memory, and the
scores reuse them for the candidates. A column a request does not need (disk, say) is never
computed. The scores read `Scored`, the candidates' scored resources as float64 rows: every
amount is an integer below 2**53, so the floats are exact, and float arithmetic is several times
faster than int64 division. The free room and capacities behind it are kept per table (they do
not depend on the request), so a request gathers two rows blocks and subtracts its amounts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .models import AllocationRatios, Host, Policy, VmRequest
from .table import FloatArray, HostTable, IntArray

# Score resources: the request's amount and the table's (capacity, allocated) columns.
SCORED = ("cpu", "memory_mb", "disk_gb")


def scored_resources(policy: Policy) -> tuple[str, ...]:
    """The resources the scores read: CPU and memory, and disk when it has a weight."""
    return SCORED if policy.resource_weights.disk_gb > 0 else SCORED[:2]


@dataclass(frozen=True, eq=False)
class Scored:
    """The scored resources of the candidates, one row per resource of `resources`, as exact
    floats: `free` is the effective capacity less the amount requested once the new VM is on
    the host (negative when over), `cap_or_1` the capacity as a divisor (a zero capacity
    divides by 1), `asked` the request's amounts; `largest_cap` bounds every capacity of the
    table. One numpy call computes a step for every resource at once."""

    resources: tuple[str, ...]
    asked: tuple[int, ...]
    free: FloatArray
    cap_or_1: FloatArray
    largest_cap: float
    table_cap: FloatArray = field(repr=False)
    idx: IntArray = field(repr=False)

    @cached_property
    def cap(self) -> FloatArray:
        """The effective capacity itself (0 where it is 0)."""
        return np.take(self.table_cap, self.idx, axis=1)

    def requested(self) -> FloatArray:
        """The amount requested once the VM is on the host (a new array)."""
        return self.cap - self.free

    def requested_or_full(self) -> FloatArray:
        """`requested()`, except more than the divisor where the capacity is 0: its fraction
        of `cap_or_1` reads as full there, without looking at the capacity (a new array)."""
        return self.cap_or_1 - self.free


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
    """`TableUsage` of some hosts only (`idx`, indices into the table).

    It keeps the table, request and ratios, not the `TableUsage` that holds it: a reference
    back would make a cycle, and every decision's candidate rows would then wait for the
    garbage collector instead of being freed when the request is done."""

    def __init__(self, whole: TableUsage, idx: IntArray) -> None:
        self.table, self.request, self.ratios = whole.table, whole.request, whole.ratios
        self.idx = idx
        self._scored: dict[tuple[str, ...], Scored] = {}

    def scored(self, resources: tuple[str, ...]) -> Scored:
        """The rows of `resources` (of `SCORED`) for the candidates, computed once."""
        cached = self._scored.get(resources)
        if cached is None:
            table, ratios = self.table, self.ratios
            both, cap, largest = table.memo(
                ("scored", resources, ratios.cpu, ratios.memory_mb),
                lambda: _scored_columns(table, ratios, resources),
            )
            asked = tuple(getattr(self.request, r) for r in resources)
            # One gather for the free room and the divisors; the rows are views of it.
            block = np.take(both, self.idx, axis=1)
            rows, divisors = block[: len(resources)], block[len(resources) :]
            for row, amount in zip(rows, asked, strict=True):
                if amount:
                    row -= amount
            cached = Scored(resources, asked, rows, divisors, largest, cap, self.idx)
            self._scored[resources] = cached
        return cached


def _scored_columns(
    table: HostTable, ratios: AllocationRatios, resources: tuple[str, ...]
) -> tuple[FloatArray, FloatArray, float]:
    """Per table and allocation ratios, one row per resource, as floats: the free room before
    any request, then the capacity as a divisor (one block, gathered at once); the capacity;
    and the largest capacity."""
    cpu_cap, mem_cap = table.effective_capacity(ratios.cpu, ratios.memory_mb)
    columns = {
        "cpu": (cpu_cap, table.cpu_allocated),
        "memory_mb": (mem_cap, table.memory_allocated),
        "disk_gb": (table.disk_effective, table.disk_allocated),
    }
    shape = (len(resources), len(table))
    cap = np.array([columns[r][0] for r in resources], dtype=np.float64).reshape(shape)
    allocated = np.array([columns[r][1] for r in resources], dtype=np.float64).reshape(shape)
    both = np.concatenate([cap - allocated, np.maximum(cap, 1.0)])
    return both, cap, float(cap.max(initial=0.0))
