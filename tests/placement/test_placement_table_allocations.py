"""A table with some hosts' allocations changed is the table built from those hosts: the
columns, and every decision over it, the same; and the table it was made from answers as it
did before (what one caches for its allocations stays its own)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
from factories import host, placement_input, request

from placement.engine import Engine
from placement.holds import Hold
from placement.models import Host, PlacementInput
from placement.reservations import Reservation, apply_reservations
from placement.table import HostTable

NOW = datetime(2026, 12, 1, tzinfo=UTC)
COLUMNS = ("cpu_allocated", "memory_allocated", "gpu_allocated", "disk_allocated", "vm_count")


def inventory(rng: random.Random) -> list[Host]:
    hosts = []
    for i in range(40):
        fields: dict[str, object] = {
            "cpu_allocated": rng.choice([0, 4, 16, 28]),
            "gpu_capacity": rng.choice([0, 0, 2]),
            "disk_gb_capacity": 500,
            "vm_count": rng.randint(0, 3),
        }
        if i % 7 == 0:
            fields["devices_capacity"] = {"nvidia.com/a100": 2}
        if i % 5 == 0:
            fields["vm_quota"] = 4
        hosts.append(host(f"h{i:02d}", **fields))
    return hosts


def bookings(rng: random.Random, hosts: list[Host], count: int) -> list[Reservation]:
    held = []
    for k in range(count):
        start = NOW + timedelta(hours=rng.randint(0, 48))
        hold = Hold(start=start, end=start + timedelta(hours=rng.randint(1, 12)))
        shape = request(
            name=f"spare-{k}",
            cpu=rng.choice([2, 4, 8]),
            memory_mb=4096,
            gpu=rng.choice([0, 0, 1]),
            disk_gb=rng.choice([0, 50]),
            devices={"nvidia.com/a100": 1} if k % 9 == 0 else {},
        )
        on = rng.choice(hosts).name
        held.append(Reservation.of(shape, on, None, shape.name, hold=hold))
    return held


def test_changed_allocations_make_the_table_built_from_the_changed_hosts() -> None:
    rng = random.Random(3)
    hosts = inventory(rng)
    bare = placement_input(hosts)
    table = HostTable.build(bare.hosts)
    asked = [request(name=f"ask-{k}", cpu=c, gpu=g) for k, (c, g) in
             enumerate([(4, 0), (16, 0), (2, 1), (28, 0), (8, 1)])]  # fmt: skip
    engine = Engine(bare.policy)
    before = [engine.decide(table, r).to_json() for r in asked]
    rounds = 0
    for _ in range(40):
        held = bookings(rng, hosts, rng.randint(1, 40))
        start = NOW + timedelta(hours=rng.randint(0, 40))
        over = Hold(start=start, end=start + timedelta(hours=rng.randint(1, 24)))
        snapshot: PlacementInput = apply_reservations(bare, held, over, NOW)
        changed = [h for h, kept in zip(snapshot.hosts, bare.hosts, strict=True) if h is not kept]
        if not changed:
            continue
        rounds += 1
        patched = table.with_allocations(changed)
        built = HostTable.build(snapshot.hosts)
        for column in COLUMNS:
            assert np.array_equal(getattr(patched, column), getattr(built, column)), column
        assert patched.device_allocated.keys() == built.device_allocated.keys()
        for name, counts in built.device_allocated.items():
            assert np.array_equal(patched.device_allocated[name], counts), name
        assert [h.model_dump() for h in patched.hosts] == [h.model_dump() for h in built.hosts]
        for r in asked:
            args = (r, snapshot.existing_vms, snapshot.used_vmids)
            assert (
                engine.decide(patched, *args).to_json()
                == Engine(bare.policy).decide(built, *args).to_json()
            )
        assert patched.quota_full.tolist() == built.quota_full.tolist()
    assert rounds >= 20
    assert [engine.decide(table, r).to_json() for r in asked] == before


def test_a_host_that_gains_its_first_device_gets_the_column() -> None:
    hosts = [host("h1", devices_capacity={"example.com/nic": 1}), host("h2")]
    table = HostTable.build(hosts)
    assert table.device_allocated == {}
    taken = hosts[0].model_copy(update={"devices_allocated": {"example.com/nic": 1}})
    patched = table.with_allocations([taken])
    assert patched.device_allocated["example.com/nic"].tolist() == [1, 0]
    assert table.device_allocated == {}
    assert patched.device_short("example.com/nic", 1).tolist() == [True, True]
    assert table.device_short("example.com/nic", 1).tolist() == [False, True]
