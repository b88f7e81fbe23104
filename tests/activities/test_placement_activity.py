"""The placement activity's decision over a snapshot and the ledger's reservations: members of a
group spread by counting the ones reserved before them, `near` finds reserved spares, and an
unknown `near` is its own answer, never a placement that ignores it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.placement import PlacementActivities, decide
from contracts.placement import PlaceVmsInput
from hypervisors.inventory import FileInventory
from placement.holds import Hold
from placement.models import PlacementInput, VmRequest
from placement.reservations import Reservation, apply_reservations
from placement.table import HostTable

ZONE = "topology.kubernetes.io/zone"


def snapshot(
    request: dict[str, Any], existing: list[dict[str, Any]] | None = None
) -> PlacementInput:
    hosts = [
        {
            "name": f"{zone}-{i}",
            "cpu_capacity": capacity,
            "cpu_allocated": used,
            "memory_mb_capacity": 262144,
            "labels": {ZONE: zone},
        }
        for zone, used, capacity in (("a", 0, 64), ("b", 30, 64), ("c", 40, 48))
        for i in range(2)
    ]
    base = {"name": "spare-0", "cpu": 2, "memory_mb": 2048}
    return PlacementInput.model_validate(
        {"hosts": hosts, "existing_vms": existing or [], "request": {**base, **request}}
    )


SPREAD = {"topology_key": ZONE, "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}


def test_members_spread_by_counting_the_ones_reserved_before_them() -> None:
    reservations: list[Reservation] = []
    zones = []
    for i in range(6):
        request = {"name": f"spare-{i}", "anti_affinity_group": "up-1", "topology_spread": [SPREAD]}
        inp = snapshot(request)
        result = decide(apply_reservations(inp, reservations))
        assert result.host is not None, result.summary
        assert result.topology is not None
        zones.append(str(result.topology.domains[ZONE]))
        reservations.append(
            Reservation.of(inp.request, result.host, None, f"s{i}", result.topology)
        )
    # Without the spread every one would go to the empty zone a.
    assert sorted(zones) == ["a", "a", "b", "b", "c", "c"]
    assert reservations[0].topology is not None


def test_near_finds_a_spare_that_is_reserved_but_not_yet_in_the_inventory() -> None:
    first = VmRequest(name="spare-x", cpu=2, memory_mb=2048)
    held = [Reservation.of(first, "c-1", None, "spare-x")]
    near = snapshot({"near": {"node": "spare-x", "topology_key": ZONE}})
    result = decide(apply_reservations(near, held))
    assert result.host == "c-0"
    assert result.topology is not None and result.topology.near is not None
    assert (result.topology.near.host, result.topology.near.domain) == ("c-1", "c")


def test_an_unknown_near_never_fits_and_says_why() -> None:
    result = decide(snapshot({"near": {"node": "worker-9", "topology_key": ZONE}}))
    assert (result.host, result.error, result.never_fits) == (None, "near_unknown", True)
    assert result.summary == "near_unknown: node 'worker-9' is not among the existing VMs"


def test_a_near_domain_too_small_for_the_request_never_fits_and_says_so() -> None:
    existing = [{"name": "worker-1", "host": "c-0"}]
    request = {"cpu": 50, "near": {"vm": "worker-1", "topology_key": ZONE}}
    result = decide(snapshot(request, existing))
    assert result.never_fits
    assert result.summary == (
        "no host in the domain `near` wants could ever hold it "
        "(no host fits: 4 not_near, 2 insufficient_cpu)"
    )


def test_a_reserved_device_is_taken_and_a_device_no_host_has_never_fits() -> None:
    fpga = "xilinx.com/u250"
    inp = snapshot({"devices": {fpga: 1}, "disk_gb": 100})
    hosts = [
        h.model_copy(update={"devices_capacity": {fpga: 1}, "disk_gb_capacity": 500})
        if h.name == "a-0"
        else h
        for h in inp.hosts
    ]
    inp = inp.model_copy(update={"hosts": hosts})
    first = decide(inp)
    assert first.host == "a-0"
    held = [Reservation.of(inp.request, "a-0", None, "s0")]
    second = decide(apply_reservations(inp, held))
    assert (second.host, second.error, second.never_fits) == (None, "no_host_fits", False)
    assert second.reason_counts == {"insufficient_disk": 5, "insufficient_device": 1}
    nic = decide(inp.model_copy(update={"request": inp.request.model_copy(
        update={"devices": {"nvidia.com/bluefield3": 1}})}))  # fmt: skip
    assert (nic.host, nic.never_fits) == (None, True)
    assert nic.summary == (
        "no host of the inventory could ever hold it "
        "(no host fits: 5 insufficient_disk, 1 insufficient_device)"
    )


async def test_a_batch_judges_could_it_ever_fit_on_one_emptied_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reservations change what is allocated, which neither the emptied inventory nor the
    # inventory's table leaves out: a batch builds the two tables once per inventory read
    # (each decision rewrites the rows its reservations change), and decides as one by one.
    document = snapshot({}).model_dump(mode="json", exclude={"request"})
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps(document))
    requests = [VmRequest(name=f"spare-{i}", cpu=30, memory_mb=2048) for i in range(3)]
    builds = []
    real_build = HostTable.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[HostTable], hosts: Any) -> HostTable:
        builds.append(len(hosts))
        return real_build(cls, hosts)

    monkeypatch.setattr(HostTable, "build", classmethod(counting))
    activities = PlacementActivities({"site": FileInventory(path)})
    batch = await activities.place_vms(PlaceVmsInput(inventory="site", requests=requests))
    assert len(builds) == 2  # the inventory's table and the emptied one
    placed: list[Reservation] = []
    for request, result in zip(requests, batch.decisions, strict=True):
        alone = decide(
            apply_reservations(snapshot({}).model_copy(update={"request": request}), placed)
        )
        assert (result.host, result.summary) == (alone.host, alone.summary)
        if alone.host is not None:
            placed.append(Reservation.of(request, alone.host, None, request.name))
    assert [d.host for d in batch.decisions].count(None) == 0


async def test_a_refusal_over_a_hold_names_the_reservations_in_the_way(tmp_path: Path) -> None:
    document = {"hosts": [{"name": "h1", "cpu_capacity": 8, "memory_mb_capacity": 8192}]}
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps(document))
    start = datetime(2026, 12, 1, tzinfo=UTC)
    window = Hold(start=start + timedelta(days=2), end=start + timedelta(days=3))
    booked = Reservation.of(
        VmRequest(name="spare-booked", cpu=6, memory_mb=1024), "h1", None, "spare-booked"
    ).model_copy(update={"hold": window})
    activities = PlacementActivities({"site": FileInventory(path)})
    asked = VmRequest(name="spare-new", cpu=6, memory_mb=1024)

    async def answer(until: timedelta) -> list[tuple[str | None, list[str]]]:
        result = await activities.place_vms(
            PlaceVmsInput(
                inventory="site",
                requests=[asked],
                reservations=[booked],
                holds=[Hold(end=start + until)],
                now=start,
            )
        )
        return [(d.host, d.held_by) for d in result.decisions]

    assert await answer(timedelta(days=2, hours=1)) == [(None, ["spare-booked"])]
    assert await answer(timedelta(days=2)) == [("h1", [])]


async def test_an_unchanged_inventory_is_validated_once_and_a_changed_one_is_seen_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file is read for every answer; only new bytes are parsed, validated and tabled.
    # The change keeps the file's size and comes at once after the last read: no clock and
    # no size can tell it, the content does.
    def inventory(cpu: int) -> str:
        return json.dumps(
            {"hosts": [{"name": "h1", "cpu_capacity": cpu, "memory_mb_capacity": 8192}]}
        )

    path = tmp_path / "inventory.json"
    path.write_text(inventory(16))
    validated = []
    real_validate = PlacementInput.model_validate.__func__  # type: ignore[attr-defined]

    def counting(cls: type[PlacementInput], data: Any, **kwargs: Any) -> PlacementInput:
        validated.append(1)
        return real_validate(cls, data, **kwargs)

    monkeypatch.setattr(PlacementInput, "model_validate", classmethod(counting))
    activities = PlacementActivities({"site": FileInventory(path)})

    async def answer(cpu: int) -> str | None:
        asked = VmRequest(name="spare-new", cpu=cpu, memory_mb=1024)
        result = await activities.place_vms(PlaceVmsInput(inventory="site", requests=[asked]))
        return result.decisions[0].host

    assert [await answer(12), await answer(16), await answer(17)] == ["h1", "h1", None]
    assert len(validated) == 1
    path.write_text(inventory(12))  # same size, same second
    assert await answer(16) is None
    assert await answer(12) == "h1"
    assert len(validated) == 2
    path.write_text("hosts: [")
    with pytest.raises(ApplicationError) as broken:
        await answer(12)
    assert broken.value.type == "InventoryInvalid" and broken.value.non_retryable
