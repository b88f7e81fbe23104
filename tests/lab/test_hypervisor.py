"""The lab hypervisor over real HTTP on loopback: idempotency, capacity, inventory, state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lab.hypervisor import LabHypervisor, LabHypervisorError, LabVm, load_inventory_file
from placement.models import PlacementInput

REPO = Path(__file__).resolve().parents[2]


def host(name: str, **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "pool": "general",
        "rack": "r1",
        "dedicated": False,
        "cpu_capacity": 8,
        "cpu_allocated": 2,
        "cpu_allocation_ratio": 1.5,  # effective 12 CPUs, 10 free
        "memory_mb_capacity": 65536,
        "memory_mb_allocated": 0,
        "memory_allocation_ratio": 1.0,
        "gpu_capacity": 1,
        "gpu_allocated": 0,
        "labels": {},
        "taints": [],
        "vm_count": 1,
        "vm_quota": None,
        "unschedulable": False,
    }
    return base | overrides


def vm(name: str, host: str = "h1", cpu: int = 2, **extra: Any) -> dict[str, Any]:
    return {"name": name, "host": host, "cpu": cpu, "memory_mb": 1024, **extra}


@pytest.fixture
async def hypervisor() -> AsyncIterator[LabHypervisor]:
    hv = LabHypervisor(
        [host("h1"), host("h2", rack="r2")],
        existing_vms=[{"name": "old-1", "host": "h1", "group": "web"}],
        used_vmids=[100, 101],
    )
    await hv.start()
    yield hv
    await hv.stop()


@pytest.fixture
async def http(hypervisor: LabHypervisor) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=hypervisor.url, timeout=10) as client:
        yield client


async def test_create_is_idempotent_by_name(http: httpx.AsyncClient) -> None:
    first = await http.post("/vms", json=vm("spare-a", labels={"role": "spare"}))
    again = await http.post("/vms", json=vm("spare-a", cpu=4))
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert first.json()["cpu"] == 2
    assert [v["name"] for v in (await http.get("/vms")).json()] == ["spare-a"]


async def test_concurrent_creates_of_one_name_make_one_vm(
    hypervisor: LabHypervisor, http: httpx.AsyncClient
) -> None:
    hypervisor.create_delay = 0.2
    answers = await asyncio.gather(*(http.post("/vms", json=vm("spare-b")) for _ in range(5)))
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 200, 201]
    assert {a.json()["vmid"] for a in answers} == {102}
    assert list(hypervisor.vms) == ["spare-b"]


async def test_vm_gets_deterministic_mac_ip_in_lab_network_and_next_free_vmid(
    http: httpx.AsyncClient,
) -> None:
    a = (await http.post("/vms", json=vm("spare-c"))).json()
    b = (await http.post("/vms", json=vm("spare-d", vmid=500))).json()
    c = (await http.post("/vms", json=vm("spare-e"))).json()
    assert (a["vmid"], b["vmid"], c["vmid"]) == (102, 500, 103)
    assert a["mac"].startswith("52:54:00:") and a["mac"] != b["mac"]
    assert all(v["ip"].startswith("198.18.") for v in (a, b, c))
    assert len({a["ip"], b["ip"], c["ip"]}) == 3
    taken = await http.post("/vms", json=vm("spare-f", vmid=500))
    assert taken.status_code == 409 and taken.json()["error"] == "vmid_in_use"


async def test_create_beyond_effective_capacity_is_refused_with_the_numbers(
    http: httpx.AsyncClient,
) -> None:
    assert (await http.post("/vms", json=vm("fits", cpu=10))).status_code == 201  # exact fit
    refused = await http.post("/vms", json=vm("too-much", cpu=1))
    assert refused.status_code == 409
    body = refused.json()
    assert body["error"] == "insufficient_cpu"
    assert (body["requested"], body["used"], body["capacity"]) == (1, 12, 12)
    assert body["message"].startswith("insufficient_cpu: host h1")
    gpu = await http.post("/vms", json=vm("gpu-vm", host="h2", gpu=2))
    assert gpu.status_code == 409 and gpu.json()["error"] == "insufficient_gpu"


async def test_concurrent_creates_never_over_commit_a_host(
    hypervisor: LabHypervisor, http: httpx.AsyncClient
) -> None:
    hypervisor.create_delay = 0.1
    answers = await asyncio.gather(
        *(http.post("/vms", json=vm(f"race-{i}", cpu=3)) for i in range(6))
    )
    assert sorted(a.status_code for a in answers) == [201, 201, 201, 409, 409, 409]
    inventory = (await http.get("/inventory")).json()
    h1 = next(h for h in inventory["hosts"] if h["name"] == "h1")
    assert h1["cpu_allocated"] == 11  # 2 base + 3 * 3, under the effective 12


async def test_unknown_host_is_404(http: httpx.AsyncClient) -> None:
    answer = await http.post("/vms", json=vm("lost", host="nowhere"))
    assert answer.status_code == 404 and answer.json()["error"] == "unknown_host"


async def test_invalid_spec_is_422(http: httpx.AsyncClient) -> None:
    answer = await http.post("/vms", json={"name": "x", "host": "h1"})
    assert answer.status_code == 422 and answer.json()["error"] == "invalid_spec"


async def test_inventory_counts_lab_vms_on_top_of_the_file(http: httpx.AsyncClient) -> None:
    await http.post("/vms", json=vm("spare-g", cpu=3, gpu=1, anti_affinity_group="spares"))
    inventory = (await http.get("/inventory")).json()
    assert set(inventory) == {"hosts", "existing_vms", "used_vmids", "next_vmid"}
    h1, h2 = inventory["hosts"]
    assert (h1["cpu_allocated"], h1["memory_mb_allocated"], h1["gpu_allocated"]) == (5, 1024, 1)
    assert h1["vm_count"] == 2
    assert (h2["cpu_allocated"], h2["vm_count"]) == (2, 1)
    assert inventory["existing_vms"] == [
        {"name": "old-1", "host": "h1", "group": "web"},
        {"name": "spare-g", "host": "h1", "group": "spares"},
    ]
    assert (inventory["used_vmids"], inventory["next_vmid"]) == ([100, 101, 102], 103)
    request = {"name": "probe", "cpu": 1, "memory_mb": 1}
    PlacementInput.model_validate(inventory | {"request": request})  # the engine accepts it


async def test_get_and_delete_are_idempotent(http: httpx.AsyncClient) -> None:
    await http.post("/vms", json=vm("spare-h"))
    assert (await http.get("/vms/spare-h")).json()["host"] == "h1"
    assert (await http.delete("/vms/spare-h")).json() == {"deleted": True}
    assert (await http.delete("/vms/spare-h")).json() == {"deleted": False}
    assert (await http.get("/vms/spare-h")).status_code == 404


async def test_injected_failures_answer_once_with_the_message(
    hypervisor: LabHypervisor, http: httpx.AsyncClient
) -> None:
    hypervisor.fail_next_create("datastore offline", transient=True)
    transient = await http.post("/vms", json=vm("spare-i"))
    hypervisor.fail_next_create("image not found")
    permanent = await http.post("/vms", json=vm("spare-i"))
    assert (transient.status_code, transient.json()["message"]) == (500, "datastore offline")
    assert (permanent.status_code, permanent.json()["message"]) == (422, "image not found")
    assert hypervisor.vms == {}
    assert (await http.post("/vms", json=vm("spare-i"))).status_code == 201


async def test_callbacks_see_started_and_stopped_vms() -> None:
    started: list[LabVm] = []
    stopped: list[str] = []

    async def on_start(vm: LabVm) -> None:
        started.append(vm)

    async def on_stop(name: str) -> None:
        stopped.append(name)

    # No allocation ratio given: the lab does not overcommit (8 CPUs, 2 used).
    hv = LabHypervisor([host("h1", cpu_allocation_ratio=None)], on_start=on_start, on_stop=on_stop)
    created, _ = await hv.create_vm(vm("spare-j", cpu=6, labels={"pool": "general"}))
    with pytest.raises(LabHypervisorError, match="insufficient_cpu"):
        await hv.create_vm(vm("spare-k", cpu=1))
    await hv.destroy_vm("spare-j")
    await hv.destroy_vm("spare-j")
    assert [(v.name, v.ip, v.labels) for v in started] == [
        ("spare-j", created.ip, {"pool": "general"})
    ]
    assert stopped == ["spare-j"]


async def test_state_survives_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "state" / "hypervisor.json"
    first = LabHypervisor([host("h1")], state_file=state)
    await first.start()
    async with httpx.AsyncClient(base_url=first.url) as http:
        created = (await http.post("/vms", json=vm("spare-k", cpu=4))).json()
    await first.stop()

    booted: list[str] = []

    async def on_start(vm: LabVm) -> None:
        booted.append(vm.name)

    second = LabHypervisor([host("h1")], state_file=state, on_start=on_start)
    await second.start()
    try:
        async with httpx.AsyncClient(base_url=second.url) as http:
            assert (await http.get("/vms/spare-k")).json() == created
            h1 = (await http.get("/inventory")).json()["hosts"][0]
            assert h1["cpu_allocated"] == 6
            refused = await http.post("/vms", json=vm("spare-l", cpu=7))
            assert refused.status_code == 409
    finally:
        await second.stop()
    assert booted == ["spare-k"]


def test_default_lab_site_is_a_valid_inventory() -> None:
    data = load_inventory_file(REPO / "lab" / "inventory.yaml")
    PlacementInput.model_validate(data | {"request": {"name": "probe", "cpu": 1, "memory_mb": 1}})
    hosts = data["hosts"]
    assert len(hosts) == 6 and len({h["name"] for h in hosts}) == 6
    assert {h["pool"] for h in hosts} == {"general", "gpu"}
    assert {h["rack"] for h in hosts} == {"r1", "r2"}
    assert sum(h["dedicated"] for h in hosts) == 1
    assert sum(h["unschedulable"] for h in hosts) == 1
    names = {h["name"] for h in hosts}
    assert all(v["host"] in names for v in data["existing_vms"])
    for h in hosts:
        assert h["cpu_allocated"] <= h["cpu_capacity"] * h["cpu_allocation_ratio"]
        assert h["gpu_allocated"] <= h["gpu_capacity"]
