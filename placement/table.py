"""The host inventory as columns, built once and evaluated by every request.

Hosts are sorted by name here, so every later step is independent of the input order and
"first maximum" is the name_asc tie-break. Labels and taints are interned: hosts sharing a
label set or a taint set share one signature, and per-request label/taint logic runs once per
distinct set instead of once per host.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import repeat
from operator import is_
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .models import ExistingVm, Host, Taint
from .names import TOPOLOGY_HOST, TOPOLOGY_RACK

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
ObjectArray = npt.NDArray[np.object_]
T = TypeVar("T")
# `names_to` keeps at most this many dicts per table (each as large as the inventory).
_NAMES_TO_KEPT = 4
# What `with_allocations` changes: a host's allocations, as Host fields and as columns.
_ALLOCATED = (
    ("cpu_allocated", "cpu_allocated"),
    ("memory_mb_allocated", "memory_allocated"),
    ("gpu_allocated", "gpu_allocated"),
    ("disk_gb_allocated", "disk_allocated"),
    ("vm_count", "vm_count"),
)
# Cached properties that depend on no allocation: a table with other allocations shares them.
_SHARED_PROPERTIES = ("name_array", "name_dict", "disk_effective", "any_unschedulable")


def object_array(values: Sequence[object]) -> ObjectArray:
    """A 1-D object array holding `values` as they are."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _packed(names: list[str]) -> tuple[str, ...]:
    """Equal copies of `names`, allocated one after the other. An explanation hashes and
    references every host name: names read in order from adjacent memory take a fraction of
    the cache misses of names scattered among each host's other objects."""
    scratch = [name + "." for name in names]
    return tuple(name[:-1] for name in scratch)


def _same_objects(kept: tuple[object, ...], current: Sequence[object]) -> bool:
    """Whether `current` holds the very objects of `kept`, in order."""
    return len(kept) == len(current) and all(map(is_, kept, current))


@dataclass(frozen=True, eq=False)
class Domains:
    """Hosts' domains under one topology key: `code[i]` indexes `values`, -1 lacks the key."""

    code: IntArray
    values: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.values)

    @cached_property
    def lookup(self) -> dict[str, int]:
        """Domain value -> code."""
        return {value: code for code, value in enumerate(self.values)}

    @cached_property
    def held(self) -> BoolArray:
        """Per code, whether a host holds that domain, then one last slot (False) for code -1."""
        held = np.zeros(len(self.values) + 1, dtype=bool)
        held[self.code[self.code >= 0]] = True
        return held


@dataclass(frozen=True, eq=False)
class HostTable:
    hosts: tuple[Host, ...]
    names: tuple[str, ...]
    index: dict[str, int]
    unschedulable: BoolArray
    dedicated: BoolArray
    pool: IntArray  # code into pool_codes, -1 for no pool
    pool_codes: dict[str, int]
    rack: IntArray  # code into rack_codes, -1 for no rack
    rack_codes: dict[str, int]
    cpu_capacity: IntArray
    cpu_allocated: IntArray
    cpu_ratio: FloatArray  # NaN: the policy default applies
    memory_capacity: IntArray
    memory_allocated: IntArray
    memory_ratio: FloatArray
    gpu_capacity: IntArray
    gpu_allocated: IntArray
    disk_capacity: IntArray
    disk_allocated: IntArray
    disk_ratio: FloatArray
    # Per device name any host has: capacity and allocation of every host (0 where absent).
    device_capacity: dict[str, IntArray]
    device_allocated: dict[str, IntArray]
    vm_count: IntArray
    vm_quota: IntArray  # -1 for unlimited
    taint_sig: IntArray
    taint_sets: tuple[tuple[Taint, ...], ...]
    label_sig: IntArray
    label_sets: tuple[dict[str, str], ...]
    _regex_cache: dict[str, BoolArray] = field(default_factory=dict, repr=False)
    _capacity_cache: dict[tuple[float, float], tuple[IntArray, IntArray]] = field(
        default_factory=dict, repr=False
    )
    _domain_cache: dict[str, Domains] = field(default_factory=dict, repr=False)
    _memo: dict[Hashable, Any] = field(default_factory=dict, repr=False)
    # {group: (the VMs, the hosts of the group's VMs, their rows)}, the last seen per group
    # (`group_rows`).
    _rows_cache: dict[str, tuple[tuple[ExistingVm, ...], tuple[str, ...], IntArray]] = field(
        default_factory=dict, repr=False
    )
    # {keyword: {name: keyword} for every host}, for `names_to`.
    _names_to: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.hosts)

    @classmethod
    def build(cls, hosts: Sequence[Host]) -> HostTable:
        ordered = tuple(sorted(hosts, key=lambda h: h.name))
        pool_codes: dict[str, int] = {}
        rack_codes: dict[str, int] = {}
        taint_ids: dict[tuple[Taint, ...], int] = {}
        label_ids: dict[tuple[tuple[str, str], ...], int] = {}
        label_sets: list[dict[str, str]] = []
        pools, racks, taint_sig, label_sig = [], [], [], []
        for h in ordered:
            pools.append(-1 if h.pool is None else pool_codes.setdefault(h.pool, len(pool_codes)))
            racks.append(-1 if h.rack is None else rack_codes.setdefault(h.rack, len(rack_codes)))
            taints = tuple(sorted(set(h.taints), key=lambda t: (t.key, t.value, t.effect)))
            taint_sig.append(taint_ids.setdefault(taints, len(taint_ids)))
            labels = tuple(sorted(h.labels.items()))
            if labels not in label_ids:
                label_ids[labels] = len(label_ids)
                label_sets.append(dict(labels))
            label_sig.append(label_ids[labels])

        def ints(values: Sequence[int]) -> IntArray:
            return np.array(values, dtype=np.int64)

        def ratios(values: Sequence[float | None]) -> FloatArray:
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        def devices(field: str) -> dict[str, IntArray]:
            # Few hosts have devices: fill only those, per name.
            out: dict[str, IntArray] = {}
            for i, h in enumerate(ordered):
                for name, count in getattr(h, field).items():
                    if name not in out:
                        out[name] = np.zeros(len(ordered), dtype=np.int64)
                    out[name][i] = count
            return out

        names = _packed([h.name for h in ordered])
        return cls(
            hosts=ordered,
            names=names,
            index={name: i for i, name in enumerate(names)},
            unschedulable=np.array([h.unschedulable for h in ordered], dtype=bool),
            dedicated=np.array([h.dedicated for h in ordered], dtype=bool),
            pool=ints(pools),
            pool_codes=pool_codes,
            rack=ints(racks),
            rack_codes=rack_codes,
            cpu_capacity=ints([h.cpu_capacity for h in ordered]),
            cpu_allocated=ints([h.cpu_allocated for h in ordered]),
            cpu_ratio=ratios([h.cpu_allocation_ratio for h in ordered]),
            memory_capacity=ints([h.memory_mb_capacity for h in ordered]),
            memory_allocated=ints([h.memory_mb_allocated for h in ordered]),
            memory_ratio=ratios([h.memory_allocation_ratio for h in ordered]),
            gpu_capacity=ints([h.gpu_capacity for h in ordered]),
            gpu_allocated=ints([h.gpu_allocated for h in ordered]),
            disk_capacity=ints([h.disk_gb_capacity for h in ordered]),
            disk_allocated=ints([h.disk_gb_allocated for h in ordered]),
            disk_ratio=ratios([h.disk_allocation_ratio for h in ordered]),
            device_capacity=devices("devices_capacity"),
            device_allocated=devices("devices_allocated"),
            vm_count=ints([h.vm_count for h in ordered]),
            vm_quota=ints([-1 if h.vm_quota is None else h.vm_quota for h in ordered]),
            taint_sig=ints(taint_sig),
            taint_sets=tuple(taint_ids),
            label_sig=ints(label_sig),
            label_sets=tuple(label_sets),
        )

    def with_allocations(self, changed: Sequence[Host]) -> HostTable:
        """This table with `changed` hosts (of the same names) in place of its own: equal to
        `build` of the hosts so changed when they differ from this table's in their
        allocations only (what reservations counted on an inventory change). Columns copied
        once, a few rows written, and what depends on no allocation shared: building a table
        of thousands of hosts again costs a hundred times more."""
        rows = [self.index[h.name] for h in changed]
        hosts = list(self.hosts)
        for i, h in zip(rows, changed, strict=True):
            hosts[i] = h
        columns: dict[str, Any] = {}
        for field_name, column_name in _ALLOCATED:
            column = getattr(self, column_name).copy()
            column[rows] = [getattr(h, field_name) for h in changed]
            columns[column_name] = column
        devices = {name: column.copy() for name, column in self.device_allocated.items()}
        for i, h in zip(rows, changed, strict=True):
            for name in devices.keys() - h.devices_allocated.keys():
                devices[name][i] = 0
            for name, count in h.devices_allocated.items():
                if name not in devices:
                    devices[name] = np.zeros(len(hosts), dtype=np.int64)
                devices[name][i] = count
        table = replace(
            self,
            hosts=tuple(hosts),
            device_allocated=devices,
            _regex_cache=self._regex_cache,
            _capacity_cache=self._capacity_cache,
            _domain_cache=self._domain_cache,
            _names_to=self._names_to,
            # Allocations went into these: the new table starts its own.
            _memo={},
            _rows_cache={},
            **columns,
        )
        for name in _SHARED_PROPERTIES:
            # Computed once on this table, then shared by every table made from it.
            table.__dict__[name] = getattr(self, name)
        return table

    @cached_property
    def name_array(self) -> ObjectArray:
        """`names` as an object array: names of many hosts at once are `name_array[idx]`."""
        return object_array(self.names)

    @cached_property
    def name_dict(self) -> dict[str, None]:
        """`names` as a dict, copied to start an explanation that names most hosts."""
        return dict.fromkeys(self.names)

    def names_to(self, value: str) -> dict[str, str]:
        """{name: value} for every host, in name order, kept for a few values (reason
        keywords): copied to start an explanation in which most hosts share one value. A copy
        runs at memory speed; inserting the same entries one by one costs several times more."""
        cached = self._names_to.get(value)
        if cached is None:
            cached = dict.fromkeys(self.name_dict, value)
            if len(self._names_to) < _NAMES_TO_KEPT:
                self._names_to[value] = cached
        return cached

    def effective_capacity(
        self, cpu_ratio: float, memory_ratio: float
    ) -> tuple[IntArray, IntArray]:
        """CPU and memory capacity times the allocation ratio (the host's own, else the given
        default), floored. It depends on the policy only, so it is computed once per table."""
        key = (cpu_ratio, memory_ratio)
        cached = self._capacity_cache.get(key)
        if cached is None:
            cpu = np.where(np.isnan(self.cpu_ratio), cpu_ratio, self.cpu_ratio)
            mem = np.where(np.isnan(self.memory_ratio), memory_ratio, self.memory_ratio)
            cached = (
                np.floor(self.cpu_capacity * cpu).astype(np.int64),
                np.floor(self.memory_capacity * mem).astype(np.int64),
            )
            self._capacity_cache[key] = cached
        return cached

    @cached_property
    def disk_effective(self) -> IntArray:
        """Disk capacity times the host's allocation ratio, floored."""
        return np.floor(self.disk_capacity * self.disk_ratio).astype(np.int64)

    def device_short(self, name: str, count: int) -> BoolArray:
        """Hosts where `count` more of device `name` would exceed its capacity."""
        capacity = self.device_capacity.get(name)
        if capacity is None:  # no host has any: every host is short
            return np.ones(len(self), dtype=bool)
        allocated = self.device_allocated.get(name)
        used = count if allocated is None else allocated + count
        return used > capacity

    @cached_property
    def quota_full(self) -> BoolArray:
        """Hosts that already run as many VMs as their quota allows (no request changes it)."""
        return (self.vm_quota >= 0) & (self.vm_count >= self.vm_quota)

    @cached_property
    def any_quota_full(self) -> bool:
        return bool(self.quota_full.any())

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, kept for later requests: for a result that depends on the inventory and
        on a part of the request that many requests share (a set of tolerations, say). At most
        256 are kept; later keys are computed each time."""
        if key in self._memo:
            return cast(T, self._memo[key])
        value = compute()
        if len(self._memo) < 256:
            self._memo[key] = value
        return value

    def group_rows(self, group: str, vms: Sequence[ExistingVm]) -> IntArray:
        """The rows of the hosts of `group`'s VMs among `vms`, one per VM, leaving out a host
        outside the table. Requests placing into the same group mostly see the same VMs, so
        the last VMs seen per group are kept with their rows. Reading 300 VMs' fields costs
        about 30 us when they are in the CPU cache and 50 to 75 us inside a decision loop,
        whose arrays evict them; checking that they are the same objects reads no field
        (a few us), and a VM is frozen, so the same object has the same group and host.
        Identity, not `==`: comparing 300 equal but distinct VMs field by field takes 350 us.
        New objects are read; when their hosts are the last ones seen, the index lookups
        (300 dict probes) are skipped."""
        cached = self._rows_cache.get(group)
        if cached is not None and _same_objects(cached[0], vms):
            return cached[2]
        kept = tuple(vms)  # the caller may change its list later
        hosts = tuple([vm.host for vm in kept if vm.group == group])
        if cached is not None and cached[1] == hosts:
            rows = cached[2]
        else:
            found = np.fromiter(map(self.index.get, hosts, repeat(-1)), dtype=np.int64)
            rows = found[found >= 0]
            rows.flags.writeable = False  # shared by later requests
        if len(self._rows_cache) < 64 or group in self._rows_cache:
            self._rows_cache[group] = kept, hosts, rows
        return rows

    @cached_property
    def any_unschedulable(self) -> bool:
        return bool(self.unschedulable.any())

    @cached_property
    def any_dedicated(self) -> bool:
        return bool(self.dedicated.any())

    def domains(self, key: str) -> Domains:
        """Every host's domain under a topology key, as codes (cached per key)."""
        cached = self._domain_cache.get(key)
        if cached is None:
            if key == TOPOLOGY_HOST:
                cached = Domains(np.arange(len(self), dtype=np.int64), self.names)
            elif key == TOPOLOGY_RACK:
                cached = Domains(self.rack, tuple(self.rack_codes))
            else:
                values: dict[str, int] = {}
                per_set = [
                    -1 if (v := labels.get(key)) is None else values.setdefault(v, len(values))
                    for labels in self.label_sets
                ]
                code = (
                    np.asarray(per_set, dtype=np.int64)[self.label_sig]
                    if len(self)
                    else (np.zeros(0, dtype=np.int64))
                )
                cached = Domains(code, tuple(values))
            if len(self._domain_cache) < 64:
                self._domain_cache[key] = cached
        return cached

    def name_matches(self, pattern: str) -> BoolArray:
        """Unanchored search of every host name, cached per pattern for later requests."""
        cached = self._regex_cache.get(pattern)
        if cached is None:
            search = re.compile(pattern).search
            cached = np.array([search(n) is not None for n in self.names], dtype=bool)
            if len(self._regex_cache) < 64:
                self._regex_cache[pattern] = cached
        return cached
