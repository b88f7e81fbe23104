"""Where a decision's time goes: the median wall time of each stage, timed inside the real
loop of `placement_speed.py --topology-only` (spread + near, 5,000 hosts, full explanation).

Run: .venv/bin/python bench/placement_stages.py [--decisions N]
Each stage is wrapped with a timer while the loop runs, so the figures include what the loop
does to the CPU caches (a stage timed alone, on warm caches, reads up to half as long); the
median leaves out the decisions another process on the machine interrupted. The wrappers add
about a microsecond per stage. Stages nest: "filters" holds the filter plugins, "scores" the
score plugins, "decide" both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from placement_sites import make_group, make_hosts, make_requests

from placement.decision import Decision
from placement.engine import Engine
from placement.models import Policy, VmRequest
from placement.table import HostTable

Timings = dict[str, list[float]]


def timed(times: Timings, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, recording the wall time of each call under `label`."""
    spent = times.setdefault(label, [])

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=3000)
    args = parser.parse_args()
    engine = Engine(Policy())
    hosts = make_hosts(5_000)
    table = HostTable.build(hosts)
    group = make_group(hosts, 300)
    spread = {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    near = {"vm": group[0].name, "topology_key": "rack", "required": False}
    extra = {"anti_affinity_group": "web", "topology_spread": [spread], "near": near}
    requests = [VmRequest.model_validate({**r.model_dump(), **extra}) for r in make_requests(16)]

    times: Timings = {}
    # Instance attributes shadow the methods: only this engine and its plugins are timed.
    engine._filter = timed(times, "filters", engine._filter)  # type: ignore[method-assign]
    engine._score = timed(times, "scores", engine._score)  # type: ignore[method-assign]
    stages: list[tuple[Any, str]] = [(p, "filter_table") for p in engine.pipeline.filters]
    stages += [(p, "score_table") for p, _ in engine.pipeline.scores]
    for plugin, method in stages:
        if hasattr(plugin, method):
            label = f"  {method.split('_')[0]} {plugin.name}"
            setattr(plugin, method, timed(times, label, getattr(plugin, method)))
    # The explanation's two dicts are cached properties of Decision: time what computes them.
    for name in ("rejected", "scores"):
        prop = Decision.__dict__[name]
        assert isinstance(prop, cached_property)
        prop.func = timed(times, f"explanation: {name}", prop.func)

    whole: list[float] = []
    decide: list[float] = []
    for i in range(args.decisions):
        start = time.perf_counter()
        decision = engine.decide(table, requests[i % len(requests)], group)
        decided = time.perf_counter()
        decision.to_json()
        whole.append(time.perf_counter() - start)
        decide.append(decided - start)
    times["decide"] = decide
    times["decide + to_json"] = whole

    skip = args.decisions // 5  # the first decisions warm the caches up
    print(f"{'stage':<44} {'median us':>9}")
    for label, spent in times.items():
        kept = spent[skip:] if len(spent) > skip else spent
        if kept and statistics.median(kept) >= 1e-6:
            print(f"{label:<44} {statistics.median(kept) * 1e6:>9.1f}")


if __name__ == "__main__":
    main()
