"""Placement quality: how many VMs each strategy fits before the first request that fits
nowhere, how much capacity it strands, and an upper bound no placement can beat; then how
evenly each strategy spreads one group of VMs over the site's racks.

Run: .venv/bin/python bench/placement_quality.py [--hosts 200] [--time-limit 20]
Site: seeded heterogeneous hosts, partly filled; stream: seeded realistic VM flavours. Every
strategy uses the engine's filters; they differ only in how a candidate is chosen. The bound
is the longest prefix of the stream that a MILP (scipy.optimize.milp, HiGHS) cannot prove
infeasible, with the same per-host capacity, quota and eligibility: an exact optimum when every
solve finishes, still a valid upper bound when a solve hits the time limit.

Spread: `--group` VMs of one group (4 CPU, 8 GiB, like spares for one upgrade) placed one by
one, each seeing the ones before it, on the same site. Per strategy: how many were placed, how
many racks hold one, and the most and fewest per rack over the racks that could take one (the
skew a rack failure exposes). The plain strategies know nothing of the group; rack
anti-affinity refuses once every rack holds one; the spread constraint keeps the skew.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from placement_sites import make_hosts, make_requests

from placement.decision import Decision
from placement.engine import Engine
from placement.models import ExistingVm, Host, Policy, VmRequest
from placement.names import (
    INSUFFICIENT_CPU,
    INSUFFICIENT_GPU,
    INSUFFICIENT_MEMORY,
    RESOURCE_ALIGNMENT,
    VM_QUOTA_EXCEEDED,
)
from placement.table import HostTable

# Rejections that placing VMs can cause; any other keyword makes a host ineligible for good.
CAPACITY = {INSUFFICIENT_CPU, INSUFFICIENT_MEMORY, INSUFFICIENT_GPU, VM_QUOTA_EXCEEDED}
Chooser = Callable[[Decision, dict[str, Host], VmRequest], str]


def original_score(host: Host, req: VmRequest) -> float:
    cpu = host.cpu_capacity * (host.cpu_allocation_ratio or 1.0)
    mem = host.memory_mb_capacity * (host.memory_allocation_ratio or 1.0)
    quota = host.vm_quota or 100
    return (
        (1 - (host.cpu_allocated + req.cpu) / cpu)
        + (1 - (host.memory_mb_allocated + req.memory_mb) / mem)
        - host.vm_count / quota
    )


def choosers(seed: int) -> dict[str, tuple[Policy, Chooser]]:
    rng = random.Random(seed)

    def engine_choice(d: Decision, hosts: dict[str, Host], req: VmRequest) -> str:
        return d.host or ""

    return {
        "LeastAllocated": (Policy(), engine_choice),
        "MostAllocated": (Policy(scoring_strategy="MostAllocated"), engine_choice),
        # Packing: LeastAllocated plus the alignment of the request with the free room.
        "Least + align": (Policy(plugin_weights={RESOURCE_ALIGNMENT: 3}), engine_choice),
        "original score": (
            Policy(),
            lambda d, hosts, req: max(d.ranked(), key=lambda n: (original_score(hosts[n], req), n)),
        ),
        "random": (Policy(), lambda d, hosts, req: rng.choice(sorted(d.ranked()))),
    }


def run(
    hosts: list[Host], stream: list[VmRequest], policy: Policy, choose: Chooser
) -> dict[str, Host]:
    engine = Engine(policy)
    by_name = {h.name: h for h in hosts}
    placed = 0
    for req in stream:
        decision = engine.decide(HostTable.build(list(by_name.values())), req)
        if decision.host is None:
            break
        name = choose(decision, by_name, req)
        h = by_name[name]
        by_name[name] = h.model_copy(
            update={
                "cpu_allocated": h.cpu_allocated + req.cpu,
                "memory_mb_allocated": h.memory_mb_allocated + req.memory_mb,
                "gpu_allocated": h.gpu_allocated + req.gpu,
                "vm_count": h.vm_count + 1,
            }
        )
        placed += 1
    by_name["__placed__"] = Host(name=str(placed), cpu_capacity=0, memory_mb_capacity=0)
    return by_name


def free(host: Host) -> tuple[int, int]:
    cpu = int(host.cpu_capacity * (host.cpu_allocation_ratio or 1.0)) - host.cpu_allocated
    mem = int(host.memory_mb_capacity * (host.memory_allocation_ratio or 1.0))
    return cpu, mem - host.memory_mb_allocated


def stranded(hosts: dict[str, Host], stream: list[VmRequest]) -> tuple[int, int]:
    """Free CPU on hosts too short of memory for the smallest flavour, and the reverse."""
    min_cpu = min(r.cpu for r in stream)
    min_mem = min(r.memory_mb for r in stream)
    cpu_lost = mem_lost = 0
    for name, h in hosts.items():
        if name == "__placed__" or h.unschedulable or h.dedicated:
            continue
        cpu, mem = free(h)
        if mem < min_mem:
            cpu_lost += max(cpu, 0)
        if cpu < min_cpu:
            mem_lost += max(mem, 0)
    return cpu_lost, mem_lost


def prefix_feasible(hosts: list[Host], stream: list[VmRequest], k: int, limit: float) -> bool:
    """False only when the solver proves the first k requests cannot all be placed."""
    flavours = sorted({(r.cpu, r.memory_mb, r.gpu) for r in stream[:k]})
    need = {f: 0 for f in flavours}
    for r in stream[:k]:
        need[(r.cpu, r.memory_mb, r.gpu)] += 1
    eligible = []
    for f in flavours:
        sample = next(r for r in stream[:k] if (r.cpu, r.memory_mb, r.gpu) == f)
        d = Engine(Policy()).decide(HostTable.build(hosts), sample)
        ok = [
            j for j, h in enumerate(hosts) if d.rejected.get(h.name, VM_QUOTA_EXCEEDED) in CAPACITY
        ]
        eligible.append(ok)
    pairs = [(fi, j) for fi, js in enumerate(eligible) for j in js]
    if not pairs:
        return k == 0
    n = len(pairs)
    rows = len(flavours) + 4 * len(hosts)
    a = lil_matrix((rows, n))
    lower, upper = np.zeros(rows), np.zeros(rows)
    for v, (fi, j) in enumerate(pairs):
        cpu, mem, gpu = flavours[fi]
        a[fi, v] = 1
        base = len(flavours) + 4 * j
        a[base, v], a[base + 1, v], a[base + 2, v], a[base + 3, v] = cpu, mem, gpu, 1
    for fi, f in enumerate(flavours):
        lower[fi] = upper[fi] = need[f]
    for j, h in enumerate(hosts):
        base = len(flavours) + 4 * j
        cpu, mem = free(h)
        quota = (h.vm_quota - h.vm_count) if h.vm_quota is not None else 10**6
        caps = (cpu, mem, h.gpu_capacity - h.gpu_allocated, quota)
        for i, cap in enumerate(caps):
            lower[base + i], upper[base + i] = -np.inf, max(cap, 0)
    res = milp(
        c=np.zeros(n),
        constraints=LinearConstraint(a.tocsr(), lower, upper),
        integrality=np.ones(n),
        bounds=Bounds(0, np.inf),
        options={"time_limit": limit},
    )
    return bool(res.status != 2)  # 2: proven infeasible; a timeout proves nothing


def upper_bound(hosts: list[Host], stream: list[VmRequest], best: int, limit: float) -> int:
    lo, hi = best, len(stream)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if prefix_feasible(hosts, stream, mid, limit):
            lo = mid
        else:
            hi = mid - 1
    return lo


SpreadStrategy = tuple[Policy, Chooser, dict[str, object]]


def spread_strategies(seed: int) -> dict[str, SpreadStrategy]:
    spread = {"topology_key": "rack", "max_skew": 1, "group": "web"}
    plain: dict[str, SpreadStrategy] = {k: (p, c, {}) for k, (p, c) in choosers(seed).items()}
    least, pick, _ = plain["LeastAllocated"]
    most = Policy(scoring_strategy="MostAllocated")
    return {
        **plain,
        "rack anti-aff.": (
            least, pick, {"anti_affinity_group": "web", "anti_affinity_scope": "rack"}
        ),
        "Least + spread": (
            least, pick, {"topology_spread": [{**spread, "when_unsatisfiable": "DoNotSchedule"}]}
        ),
        "Most + spread~": (
            most, pick, {"topology_spread": [{**spread, "when_unsatisfiable": "ScheduleAnyway"}]}
        ),
    }  # fmt: skip


def spread_group(
    hosts: list[Host], size: int, policy: Policy, choose: Chooser, fields: dict[str, object]
) -> tuple[int, dict[str, int]]:
    """Place `size` group members in turn; their count per rack, and the racks that could
    take one (a rack with a host that passes every filter for an empty group)."""
    engine = Engine(policy)
    by_name = {h.name: h for h in hosts}
    members: list[ExistingVm] = []
    base = {"cpu": 4, "memory_mb": 8192, **fields}
    first = VmRequest.model_validate({"name": "web-0", **base})
    open_racks = {by_name[n].rack for n in engine.decide(HostTable.build(hosts), first).ranked()}
    for i in range(size):
        req = VmRequest.model_validate({"name": f"web-{i}", **base})
        decision = engine.decide(HostTable.build(list(by_name.values())), req, members)
        if decision.host is None:
            break
        name = choose(decision, by_name, req)
        h = by_name[name]
        by_name[name] = h.model_copy(
            update={
                "cpu_allocated": h.cpu_allocated + req.cpu,
                "memory_mb_allocated": h.memory_mb_allocated + req.memory_mb,
                "vm_count": h.vm_count + 1,
            }
        )
        members.append(ExistingVm(name=req.name, host=name, group="web"))
    per_rack = {r: 0 for r in open_racks if r is not None}
    for vm in members:
        rack = by_name[vm.host].rack
        if rack is not None:
            per_rack[rack] = per_rack.get(rack, 0) + 1
    return len(members), per_rack


def report_spread(hosts: list[Host], size: int, seed: int) -> None:
    racks = len({h.rack for h in hosts if h.rack is not None})
    print()
    print(f"spread: a group of {size} VMs (4 CPU, 8 GiB) over {racks} racks")
    print(f"{'strategy':<16} {'placed':>6} {'racks used':>10} {'most/rack':>9} "
          f"{'fewest/rack':>11} {'skew':>4}")  # fmt: skip
    for label, (policy, choose, fields) in spread_strategies(seed).items():
        placed, per_rack = spread_group(hosts, size, policy, choose, fields)
        counts = list(per_rack.values()) or [0]
        used = sum(1 for c in counts if c)
        print(f"{label:<16} {placed:>6} {used:>10} {max(counts):>9} {min(counts):>11} "
              f"{max(counts) - min(counts):>4}")  # fmt: skip
    print("racks counted: those with a host that could take a member; skew = most - fewest.")
    print("spread~: ScheduleAnyway (a score, weight 2); spread: DoNotSchedule (a filter).")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per MILP solve")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--group", type=int, default=30, help="VMs of the spread group")
    parser.add_argument("--spread-only", action="store_true", help="only the spread report")
    args = parser.parse_args()
    hosts = make_hosts(args.hosts, seed=args.seed, fill=0.6)
    if args.spread_only:
        report_spread(hosts, args.group, args.seed)
        return
    stream = make_requests(args.requests, seed=args.seed + 1)
    print(f"site: {len(hosts)} hosts (partly filled), stream of {len(stream)} requests")
    print(f"{'strategy':<16} {'VMs placed':>10} {'stranded CPU':>13} {'stranded GiB':>13} {'s':>5}")
    best = 0
    placed_by: dict[str, int] = {}
    for label, (policy, choose) in choosers(args.seed).items():
        start = time.perf_counter()
        final = run(hosts, stream, policy, choose)
        placed = placed_by[label] = int(final["__placed__"].name)
        best = max(best, placed)
        cpu, mem = stranded(final, stream)
        took = time.perf_counter() - start
        print(f"{label:<16} {placed:>10} {cpu:>13} {mem // 1024:>13} {took:>5.1f}")
    start = time.perf_counter()
    bound = upper_bound(hosts, stream, best, args.time_limit)
    took = time.perf_counter() - start
    print(f"{'upper bound':<16} {bound:>10} {'':>13} {'':>13} {took:>5.1f}")
    shares = ", ".join(f"{label} {placed / bound:.1%}" for label, placed in placed_by.items())
    print(f"of the bound: {shares}")
    print("VMs placed: requests placed in order before the first that fits nowhere.")
    print("stranded: free CPU on hosts without memory for the smallest flavour, and the reverse.")
    report_spread(hosts, args.group, args.seed)


if __name__ == "__main__":
    main()
