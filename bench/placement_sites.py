"""Seeded synthetic sites and request streams shared by the placement benchmarks."""

from __future__ import annotations

import random
from dataclasses import dataclass

from placement.models import ExistingVm, Host, VmRequest

# (cpu, memory_mb, gpu, weight): common bare-metal shapes of a mixed site.
HOST_SHAPES = [
    (32, 128 * 1024, 0, 4),
    (48, 192 * 1024, 0, 3),
    (64, 256 * 1024, 0, 3),
    (96, 512 * 1024, 0, 2),
    (128, 1024 * 1024, 0, 1),
    (64, 512 * 1024, 4, 1),
    (96, 768 * 1024, 8, 1),
]
# (cpu, memory_mb, gpu, weight): Kubernetes worker flavours, small ones most often.
FLAVOURS = [
    (2, 4096, 0, 5),
    (4, 8192, 0, 6),
    (4, 16384, 0, 4),
    (8, 16384, 0, 4),
    (8, 32768, 0, 3),
    (16, 32768, 0, 2),
    (16, 65536, 0, 2),
    (32, 131072, 0, 1),
    (8, 65536, 1, 1),
]


def _pick(rng: random.Random, table: list[tuple[int, int, int, int]]) -> tuple[int, int, int]:
    cpu, mem, gpu, _ = rng.choices(table, weights=[t[3] for t in table])[0]
    return cpu, mem, gpu


def make_hosts(count: int, seed: int = 7, fill: float = 0.5) -> list[Host]:
    """Heterogeneous hosts: pools, racks, zones, overcommit, GPUs, taints, quotas, cordons."""
    rng = random.Random(seed)
    hosts = []
    for i in range(count):
        cpu, mem, gpu = _pick(rng, HOST_SHAPES)
        ratio = rng.choice([1.0, 1.0, 2.0, 4.0])
        used = rng.random() * fill
        taints = []
        if rng.random() < 0.05:
            taints.append({"key": "maintenance", "value": "soon", "effect": "PreferNoSchedule"})
        if gpu and rng.random() < 0.5:
            taints.append({"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"})
        hosts.append(
            Host.model_validate(
                {
                    "name": f"bm-{i:05d}",
                    "pool": rng.choice(["general", "general", "general", "batch", "edge"]),
                    "dedicated": rng.random() < 0.03,
                    "cpu_capacity": cpu,
                    "cpu_allocated": int(cpu * ratio * used),
                    "cpu_allocation_ratio": ratio,
                    "memory_mb_capacity": mem,
                    "memory_mb_allocated": int(mem * used),
                    "memory_allocation_ratio": 1.0,
                    "gpu_capacity": gpu,
                    "gpu_allocated": rng.randint(0, gpu) if gpu else 0,
                    "labels": {
                        "zone": f"z{rng.randint(1, 3)}",
                        "cpu-gen": str(rng.choice([3, 4, 5])),
                        "disk": rng.choice(["ssd", "nvme"]),
                    },
                    "taints": taints,
                    "rack": f"r{i // 20:03d}",
                    "vm_count": int(used * 20),
                    "vm_quota": rng.choice([None, None, 20, 40]),
                    "unschedulable": rng.random() < 0.02,
                }
            )
        )
    return hosts


def make_requests(count: int, seed: int = 11) -> list[VmRequest]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        cpu, mem, gpu = _pick(rng, FLAVOURS)
        tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists"}] if gpu else []
        out.append(
            VmRequest.model_validate(
                {
                    "name": f"vm-{i}",
                    "cpu": cpu,
                    "memory_mb": mem,
                    "gpu": gpu,
                    "tolerations": tolerations,
                }
            )
        )
    return out


def make_group(
    hosts: list[Host], size: int, group: str = "web", seed: int = 13
) -> list[ExistingVm]:
    """`size` VMs of one group on random schedulable hosts of the site (a spread to keep up)."""
    rng = random.Random(seed)
    usable = [h.name for h in hosts if not h.unschedulable]
    return [
        ExistingVm(name=f"{group}-{i}", host=rng.choice(usable), group=group) for i in range(size)
    ]


@dataclass
class BaselineHost:
    """What the original scheduler looked at: plain attributes, no validation."""

    name: str
    pool: str | None
    dedicated: bool
    cpu_free: int
    cpu_total: int
    mem_free: int
    mem_total: int
    vms: int
    quota: int


def baseline_hosts(hosts: list[Host]) -> list[BaselineHost]:
    return [
        BaselineHost(
            h.name, h.pool, h.dedicated,
            h.cpu_capacity - h.cpu_allocated, h.cpu_capacity,
            h.memory_mb_capacity - h.memory_mb_allocated, h.memory_mb_capacity,
            h.vm_count, h.vm_quota or 100,
        )
        for h in hosts
    ]  # fmt: skip


def baseline_place(hosts: list[BaselineHost], req: VmRequest) -> str | None:
    """The original virtflow scheduler: filter, then (1-cpu use) + (1-mem use) - vms/quota."""
    best, best_score = None, float("-inf")
    for h in hosts:
        if req.pool is not None and h.pool != req.pool:
            continue
        if h.dedicated != req.dedicated or h.vms >= h.quota:
            continue
        if h.cpu_free < req.cpu or h.mem_free < req.memory_mb:
            continue
        score = (
            (1 - (h.cpu_total - h.cpu_free + req.cpu) / h.cpu_total)
            + (1 - (h.mem_total - h.mem_free + req.memory_mb) / h.mem_total)
            - h.vms / h.quota
        )
        if score > best_score:
            best, best_score = h.name, score
    return best
