"""Disk and devices: the host and request fields, the ledger's reservations and the
empty-inventory check (PLACEMENT.md, Disk and devices)."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, rejection, request
from pydantic import ValidationError

from placement.engine import place
from placement.explain import render_explanation
from placement.fit import empty_inventory_decision
from placement.models import Host, ResourceWeights, VmRequest
from placement.reservations import Reservation, apply_reservations

FPGA = "xilinx.com/u250"
NIC = "nvidia.com/bluefield3"


def test_absent_disk_and_devices_mean_none() -> None:
    h = Host.model_validate({"name": "h1", "cpu_capacity": 8, "memory_mb_capacity": 1024})
    assert (h.disk_gb_capacity, h.disk_gb_allocated, h.disk_allocation_ratio) == (0, 0, 1.0)
    assert h.devices_capacity == {} and h.devices_allocated == {}
    r = VmRequest.model_validate({"name": "vm", "cpu": 1, "memory_mb": 1})
    assert (r.disk_gb, r.devices) == (0, {})


def test_null_devices_are_none() -> None:
    assert host(devices_capacity=None).devices_capacity == {}
    assert request(devices=None).devices == {}


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("gpu", "needs a domain prefix"),
        ("fpga", "needs a domain prefix"),
        ("kubernetes.io/fpga", "reserved"),
        ("Xilinx.com/u250", "DNS subdomain"),
        ("xilinx.com/", "must not be empty"),
    ],
)
def test_a_device_name_is_an_extended_resource_name(name: str, problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        request(devices={name: 1})
    with pytest.raises(ValidationError, match=problem):
        host(devices_capacity={name: 1})


@pytest.mark.parametrize(
    "fields",
    [{"disk_gb": -1}, {"devices": {FPGA: -1}}, {"devices": {FPGA: 65}}],
)
def test_a_request_cannot_ask_for_negative_or_huge_amounts(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        request(**fields)


def test_disk_weight_defaults_to_zero_and_alone_is_enough() -> None:
    assert ResourceWeights().disk_gb == 0
    assert ResourceWeights(cpu=0, memory_mb=0, disk_gb=1).disk_gb == 1
    with pytest.raises(ValidationError, match="at least one resource weight"):
        ResourceWeights(cpu=0, memory_mb=0, disk_gb=0)


def test_a_reservation_counts_its_disk_and_devices_on_its_host() -> None:
    h1 = host("h1", disk_gb_allocated=10, devices_capacity={FPGA: 2}, devices_allocated={FPGA: 1})
    inp = placement_input([h1])
    shape = {"cpu": 1, "memory_mb": 1, "disk_gb": 40, "devices": {FPGA: 1, NIC: 1}}
    reserved = Reservation(spare_id="s", vm_name="vm-a", host="h1", **shape)
    out = apply_reservations(inp, [reserved]).hosts[0]
    assert out.disk_gb_allocated == 50
    assert out.devices_allocated == {FPGA: 2, NIC: 1}
    assert inp.hosts[0].devices_allocated == {FPGA: 1}  # the input is not changed


def test_a_reservation_keeps_the_requests_disk_and_devices() -> None:
    req = request(disk_gb=100, devices={FPGA: 1})
    reserved = Reservation.of(req, "h1", None, "spare-1")
    assert (reserved.disk_gb, reserved.devices) == (100, {FPGA: 1})


def test_an_emptied_inventory_frees_disk_and_devices() -> None:
    full = host("h1", disk_gb_capacity=100, disk_gb_allocated=100)
    full = full.model_copy(update={"devices_capacity": {FPGA: 1}, "devices_allocated": {FPGA: 1}})
    inp = placement_input([full], request(disk_gb=50, devices={FPGA: 1}))
    assert empty_inventory_decision(inp).host == "h1"


FILTER: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
    ("an exact disk fit passes", {"disk_gb_capacity": 100, "disk_gb_allocated": 60},
     {"disk_gb": 40}, None),
    ("one GB too many fails", {"disk_gb_capacity": 100, "disk_gb_allocated": 61},
     {"disk_gb": 40}, "insufficient_disk"),
    ("a host that tracks no disk cannot take a disk", {}, {"disk_gb": 1}, "insufficient_disk"),
    ("a request without disk ignores a full store", {"disk_gb_capacity": 10,
     "disk_gb_allocated": 50}, {}, None),
    ("thin provisioning overcommits disk", {"disk_gb_capacity": 100, "disk_gb_allocated": 150,
     "disk_allocation_ratio": 2.0}, {"disk_gb": 50}, None),
    ("the effective disk is floored", {"disk_gb_capacity": 3, "disk_allocation_ratio": 1.5},
     {"disk_gb": 5}, "insufficient_disk"),
    ("GPU is reported before disk", {}, {"gpu": 1, "disk_gb": 1}, "insufficient_gpu"),
    ("an exact device fit passes", {"devices_capacity": {FPGA: 2},
     "devices_allocated": {FPGA: 1}}, {"devices": {FPGA: 1}}, None),
    ("a device in use fails", {"devices_capacity": {FPGA: 2}, "devices_allocated": {FPGA: 2}},
     {"devices": {FPGA: 1}}, "insufficient_device"),
    ("a device the host lacks fails", {"devices_capacity": {NIC: 4}}, {"devices": {FPGA: 1}},
     "insufficient_device"),
    ("a count of 0 asks for nothing", {}, {"devices": {FPGA: 0}}, None),
    ("every device asked for must fit", {"devices_capacity": {FPGA: 1, NIC: 1}},
     {"devices": {FPGA: 1, NIC: 2}}, "insufficient_device"),
    ("devices are never overcommitted", {"cpu_allocation_ratio": 4.0,
     "devices_capacity": {FPGA: 1}}, {"devices": {FPGA: 2}}, "insufficient_device"),
    ("disk is reported before a device", {}, {"disk_gb": 1, "devices": {FPGA: 1}},
     "insufficient_disk"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("host_fields", "request_fields", "expected"),
    [c[1:] for c in FILTER],
    ids=[c[0] for c in FILTER],
)
def test_filter(
    host_fields: dict[str, Any], request_fields: dict[str, Any], expected: str | None
) -> None:
    assert rejection(host(**host_fields), request(**request_fields)) == expected


def test_a_host_short_of_a_device_in_a_group_conflict_reports_the_device() -> None:
    # Both filters run before anti_affinity_conflict (filter 15).
    h = host("h1")
    req = request(devices={FPGA: 1}, anti_affinity_group="g")
    assert rejection(h, req, existing_vms=[{"name": "a", "host": "h1", "group": "g"}]) == (
        "insufficient_device"
    )
    assert rejection(host("h1", disk_gb_capacity=1), request(disk_gb=2, anti_affinity_group="g"),
                     existing_vms=[{"name": "a", "host": "h1", "group": "g"}]) == (
        "insufficient_disk"
    )  # fmt: skip


def test_devices_on_other_hosts_do_not_help() -> None:
    hosts = [host("a", devices_capacity={FPGA: 1}), host("b"), host("c", devices_capacity={NIC: 1})]
    decision = decide(placement_input(hosts, request(devices={FPGA: 1})))
    assert decision.host == "a"
    assert decision.rejected == {"b": "insufficient_device", "c": "insufficient_device"}


def test_explain_names_the_short_device_and_the_disk_numbers() -> None:
    hosts = [
        host("a", devices_capacity={FPGA: 1, NIC: 2}, devices_allocated={FPGA: 1}),
        host("b", devices_capacity={FPGA: 2, NIC: 1}),
        host("c", disk_gb_capacity=30, disk_gb_allocated=10),
    ]
    inp = placement_input(hosts, request(disk_gb=25, devices={FPGA: 1, NIC: 2}))
    lines = render_explanation(inp, place(inp)).splitlines()
    assert lines[0] == "request vm-1: cpu 4, memory_mb 8192, disk_gb 25, " + (
        "nvidia.com/bluefield3 2, xilinx.com/u250 1"
    )
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[2:-1]}
    assert rows == {
        "a": "insufficient_disk (needs 25 of 0)",
        "b": "insufficient_disk (needs 25 of 0)",
        "c": "insufficient_disk (needs 35 of 30)",
    }
    roomy = {"disk_gb_capacity": 100}
    inp = placement_input(
        [h.model_copy(update=roomy) for h in hosts[:2]], request(devices={FPGA: 1, NIC: 2})
    )
    decision = place(inp)
    assert decision.rejected["a"] == "insufficient_device"  # the keyword stays
    rows = dict(
        line.split(None, 1) for line in render_explanation(inp, place(inp)).splitlines()[2:-1]
    )
    assert rows == {
        "a": "insufficient_device: xilinx.com/u250 (needs 2 of 1)",
        "b": "insufficient_device: nvidia.com/bluefield3 (needs 2 of 1)",
    }


def _scores(policy: dict[str, Any]) -> dict[str, dict[str, int]]:
    # Both hosts: cpu 16, memory 32 GiB, 4 CPU and 8 GiB requested (25 %); disk differs.
    shape = {"cpu_capacity": 16, "memory_mb_capacity": 32768}
    hosts = [
        host("roomy", disk_gb_capacity=1000, **shape),
        host("tight", disk_gb_capacity=100, disk_gb_allocated=25, **shape),
    ]
    decision = decide(placement_input(hosts, request(disk_gb=50), policy))
    return decision.scores


def test_disk_weight_zero_leaves_the_scores_as_they_were() -> None:
    scores = _scores({})
    assert scores["roomy"] == scores["tight"]
    assert scores["tight"]["NodeResourcesFit"] == 75
    assert scores["tight"]["NodeResourcesBalancedAllocation"] == 100


def test_a_disk_weight_adds_disk_to_fit_and_balance() -> None:
    scores = _scores({"resource_weights": {"cpu": 1, "memory_mb": 1, "disk_gb": 2}})
    # roomy: disk 1000 - 50 -> 95; (75 + 75 + 2 * 95) // 4 = 85.
    # tight: disk 100 - 75 -> 25; (75 + 75 + 2 * 25) // 4 = 50.
    assert scores["roomy"]["NodeResourcesFit"] == 85
    assert scores["tight"]["NodeResourcesFit"] == 50
    # fractions 0.25, 0.25, 0.75: mean 5/12, std = sqrt(2 * (1/6)^2 + (1/3)^2) / 3) = 0.2357
    assert scores["tight"]["NodeResourcesBalancedAllocation"] == 76
    # 0.25, 0.25, 0.05: std 0.0943 -> 90
    assert scores["roomy"]["NodeResourcesBalancedAllocation"] == 90


def test_a_disk_weight_alone_scores_disk_alone() -> None:
    scores = _scores({"resource_weights": {"cpu": 0, "memory_mb": 0, "disk_gb": 1}})
    assert (scores["roomy"]["NodeResourcesFit"], scores["tight"]["NodeResourcesFit"]) == (95, 25)
