"""Time to answer a booking: the placement activity's decision for one booking on 5,000 hosts
that already hold 1,000 bookings (target: under 50 ms p95), and the same decision without
holds, every reservation counted at once (the ledger before bookings).

Run: .venv/bin/python bench/booking_answer.py [--hosts 5000] [--bookings 1000] [--rounds 200]
The activity reads the inventory from a JSON file for every answer (parsed and validated again
only when its content changed), counts the reservations over the booking's window, rewrites the
table rows of the hosts they sit on and decides. `--from-memory` hands it the document from
memory instead, a source with no version: parsed never, validated for every answer (what every
answer cost before the activity kept a validated inventory).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from placement_sites import make_hosts

from activities.placement import PlacementActivities, decide, placement_input
from activities.prepared_inventory import PreparedInventory
from contracts.placement import PlaceVmsInput
from hypervisors.inventory import FileInventory, InventorySource
from placement.holds import Hold
from placement.models import VmRequest
from placement.reservations import Reservation, apply_reservations

NOW = datetime(2026, 12, 1, tzinfo=UTC)


class MemoryInventory:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    async def load(self) -> dict[str, Any]:
        return self.document


def window(rng: random.Random) -> Hold:
    """A maintenance window within the next two weeks, two to twelve hours long."""
    start = NOW + timedelta(hours=rng.randint(1, 14 * 24))
    return Hold(start=start, end=start + timedelta(hours=rng.randint(2, 12)))


def request(name: str, rng: random.Random) -> VmRequest:
    cpu, memory = rng.choice([(2, 4096), (4, 8192), (8, 16384), (8, 32768)])
    return VmRequest(name=name, cpu=cpu, memory_mb=memory, pool="general")


async def booked(
    activities: PlacementActivities, count: int, rng: random.Random
) -> list[Reservation]:
    """`count` bookings placed through the activity in one batch, each counting those before
    it over its own window (as the ledger's batch does)."""
    holds = [window(rng) for _ in range(count)]
    asked = [request(f"spare-b{i}", rng) for i in range(count)]
    result = await activities.place_vms(
        PlaceVmsInput(inventory="site", requests=asked, holds=holds, now=NOW)
    )
    return [
        Reservation.of(a, d.host, d.vmid, a.name, hold=h)
        for a, d, h in zip(asked, result.decisions, holds, strict=True)
        if d.host is not None
    ]


async def timed(
    activities: PlacementActivities, held: list[Reservation], rounds: int, holds: bool
) -> list[float]:
    rng = random.Random(11)
    times = []
    for i in range(rounds):
        inp = PlaceVmsInput(
            inventory="site",
            requests=[request(f"spare-q{i}", rng)],
            reservations=held,
            holds=[window(rng)] if holds else [],
            now=NOW if holds else None,
        )
        t0 = time.perf_counter()
        await activities.place_vms(inp)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def stages(document: dict[str, Any], held: list[Reservation], rounds: int) -> None:
    """Where one answer's time goes (CPU time of this process, less moved by other work on a
    shared machine): validating the inventory and building its tables come with a changed
    inventory only; counting the bookings over the window, rewriting the rows of the hosts
    they sit on and deciding come with every answer."""
    rng = random.Random(11)
    spent = {
        "validate and table the inventory (when changed)": 0.0,
        "count holds": 0.0,
        "rewrite rows": 0.0,
        "decide": 0.0,
    }
    counted: list[float] = []
    for i in range(rounds):
        asked, hold = request(f"spare-q{i}", rng), window(rng)
        t0 = time.process_time()
        prepared = PreparedInventory.of(placement_input(document, asked), None)
        t1 = time.process_time()
        snapshot = apply_reservations(prepared.bare, held, hold, NOW, prepared.positions)
        t2 = time.process_time()
        prepared.table_of(snapshot)
        t3 = time.process_time()
        decide(snapshot, prepared=prepared)  # rewrites the rows again
        t4 = time.process_time()
        for name, took in zip(spent, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            spent[name] += took
        counted.append((t2 - t1) * 1000)
    print(
        "CPU ms per answer: "
        + ", ".join(f"{name} {total * 1000 / rounds:.1f}" for name, total in spent.items())
    )
    line("counting 1,000 bookings over a window alone (CPU)", counted)


def line(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    print(
        f"{label}: p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, "
        f"max {ordered[-1]:.1f} ms over {len(ordered)} answers"
    )


async def main(args: argparse.Namespace) -> None:
    hosts = make_hosts(args.hosts)
    document = {"hosts": [h.model_dump(mode="json") for h in hosts]}
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "inventory.json"
        path.write_text(json.dumps(document))
        source: InventorySource = (
            MemoryInventory(document) if args.from_memory else FileInventory(path)
        )
        activities = PlacementActivities({"site": source})
        held = await booked(activities, args.bookings, random.Random(5))
        print(
            f"{args.hosts} hosts, {len(held)} bookings held on {len({r.host for r in held})} "
            f"hosts, inventory read from {'memory' if args.from_memory else 'a JSON file'}"
        )
        stages(document, held, args.rounds)
        line("a booking over its window (holds)", await timed(activities, held, args.rounds, True))
        line(
            "the same without holds (every reservation at once)",
            await timed(activities, held, args.rounds, False),
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--bookings", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--from-memory", action="store_true")
    asyncio.run(main(parser.parse_args()))
