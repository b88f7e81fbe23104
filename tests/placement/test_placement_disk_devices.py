"""Disk and devices: the host and request fields, the ledger's reservations and the
empty-inventory check (PLACEMENT.md, Disk and devices)."""

from __future__ import annotations

from typing import Any

import pytest
from factories import host, placement_input, request
from pydantic import ValidationError

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
