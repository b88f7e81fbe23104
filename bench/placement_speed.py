"""Placement speed: decisions per second for one VM request, all default plugins, full
explanation, against the original scheduler's plain Python loop.

Run: .venv/bin/python bench/placement_speed.py [--quick]
Each figure is the best of three rounds that alternate between our engine and the baseline,
by the clock and (the `cpu` columns) in the CPU time of this process.
The host table is built once per inventory (as a worker would per snapshot). The headline,
"decisions/s", is a decision with its full explanation materialised: `Decision.to_json()`, with
`rejected` {host: keyword} for every rejected host and `scores` {host: {plugin: score, "total"}}
for every candidate. "arrays/s" keeps the explanation as arrays only (reason code per host,
score matrix), as callers that read `top_scores(n)` and `reason_counts` do.

The topology run places a member of a 300-VM group at 5,000 hosts with one DoNotSchedule
spread constraint over the zone label and a preferred `near` by rack, against the same
requests without them (the cost of the topology plugins).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from placement_sites import baseline_hosts, baseline_place, make_group, make_hosts, make_requests

from placement.engine import Engine
from placement.models import Policy, VmRequest
from placement.table import HostTable


def rate(fn: Callable[[int], object], budget: float) -> tuple[float, float]:
    """Calls per second of fn(i), running for about `budget` seconds (at least 3 calls): by
    the clock, and by the CPU time of this process (less moved by other work on the machine)."""
    calls, start, cpu = 0, time.perf_counter(), time.process_time()
    while True:
        fn(calls)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= budget and calls >= 3:
            return calls / elapsed, calls / max(time.process_time() - cpu, 1e-9)


def best_rates(
    fns: list[Callable[[int], object]], budget: float, rounds: int
) -> tuple[list[float], list[float]]:
    """The best rate of each function over `rounds` rounds that alternate between them, so a
    burst of load from elsewhere on the machine does not favour one side; by the clock and
    in CPU time."""
    for fn in fns:
        fn(0)  # warm up
    best, best_cpu = [0.0] * len(fns), [0.0] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            wall, cpu = rate(fn, budget / rounds)
            best[k], best_cpu[k] = max(best[k], wall), max(best_cpu[k], cpu)
    return best, best_cpu


def measure(count: int, engine: Engine, requests: list[VmRequest], budget: float) -> None:
    hosts = make_hosts(count)
    start = time.perf_counter()
    table = HostTable.build(hosts)
    build_ms = (time.perf_counter() - start) * 1000
    plain = baseline_hosts(hosts)

    def decide(i: int) -> object:
        return engine.decide(table, requests[i % len(requests)])

    def decide_json(i: int) -> object:
        return engine.decide(table, requests[i % len(requests)]).to_json()

    def baseline(i: int) -> object:
        return baseline_place(plain, requests[i % len(requests)])

    (ours_json, ours, theirs), cpu = best_rates([decide_json, decide, baseline], budget, rounds=3)
    agree = sum(engine.decide(table, r).host == baseline_place(plain, r) for r in requests)
    print(f"{count:>6} {build_ms:>9.1f} {ours_json:>12.0f} {theirs:>11.0f} "
          f"{ours_json / theirs:>7.1f}x {ours:>9.0f}  {agree:>5}/{len(requests)} "
          f"{cpu[0]:>9.0f} {cpu[2]:>9.0f} {cpu[0] / cpu[2]:>7.1f}x")  # fmt: skip


def measure_topology(count: int, engine: Engine, requests: list[VmRequest], budget: float) -> None:
    hosts = make_hosts(count)
    table = HostTable.build(hosts)
    group = make_group(hosts, 300)
    replaced = group[0].name
    spread = {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    near = {"vm": replaced, "topology_key": "rack", "required": False}
    extra = {"anti_affinity_group": "web", "topology_spread": [spread], "near": near}
    topo = [VmRequest.model_validate({**r.model_dump(), **extra}) for r in requests]

    def plain(i: int) -> object:
        return engine.decide(table, requests[i % len(requests)], group).to_json()

    def spread_near(i: int) -> object:
        return engine.decide(table, topo[i % len(topo)], group).to_json()

    def spread_near_arrays(i: int) -> object:
        return engine.decide(table, topo[i % len(topo)], group)

    fns: list[Callable[[int], object]] = [spread_near, plain, spread_near_arrays]
    (with_json, without, arrays), cpu = best_rates(fns, budget, rounds=3)
    sample = engine.decide(table, topo[0], group)
    print(f"{count:>6} {with_json:>16.0f} {without:>16.0f} {arrays:>9.0f} "
          f"{cpu[0]:>9.0f} {cpu[1]:>9.0f}  {sample.summary}")  # fmt: skip
    print(f"{'':>6} rejections of the first request: {sample.reason_counts}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="shorter runs (noisier)")
    parser.add_argument("--topology-only", action="store_true", help="only the topology run")
    args = parser.parse_args()
    budget = 0.5 if args.quick else 2.0
    requests = make_requests(16)
    engine = Engine(Policy())
    if not args.topology_only:
        print(f"{'hosts':>6} {'table ms':>9} {'decisions/s':>12} {'baseline/s':>11} "
              f"{'speed-up':>8} {'arrays/s':>9}  same host {'cpu dec/s':>9} {'cpu base':>9} "
              f"{'cpu x':>7}")  # fmt: skip
        for count in (1_000, 5_000, 20_000, 50_000):
            measure(count, engine, requests, budget)
        print("decisions/s: full explanation materialised (to_json); speed-up = decisions/s over")
        print("the baseline; arrays/s: explanation kept as arrays; same host: requests where both")
        print("chose the same host (they score differently); cpu dec/s, cpu base: decisions/s and")
        print("baseline/s in CPU time of this process (best round), cpu x their ratio.")
        print()
    print(
        f"{'hosts':>6} {'spread+near/s':>16} {'no topology/s':>16} {'arrays/s':>9} "
        f"{'cpu s+n/s':>9} {'cpu no/s':>9}  first decision"
    )
    measure_topology(5_000, engine, requests, budget)
    print("spread+near/s: one DoNotSchedule zone spread of a 300-VM group and a preferred near by")
    print("rack, full explanation; no topology/s: the same requests and VMs without them; cpu:")
    print("the same two in CPU time.")


if __name__ == "__main__":
    main()
