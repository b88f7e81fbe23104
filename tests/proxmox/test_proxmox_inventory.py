"""The Proxmox inventory: proxmoxer against a three-node cluster, as placement reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.exceptions import ApplicationError

from hypervisors.inventory import inventory_source
from hypervisors.proxmox.inventory import ProxmoxInventory
from placement.engine import place
from placement.models import PlacementInput
from tests.proxmox.cluster import GIB, TEMPLATES, TOKEN_ID, TOKEN_USER, PveCluster


def site_file(tmp_path: Path, pve: PveCluster, secret: str | None = None, **extra: Any) -> Path:
    secret_file = tmp_path / "token"
    secret_file.write_text((secret or pve.token_secret) + "\n")
    secret_file.chmod(0o600)
    doc = {
        "api_host": pve.api_host,
        "api_user": TOKEN_USER,
        "api_token_id": TOKEN_ID,
        "api_token_secret_file": str(secret_file),
        "vm_storage": "local-lvm",
        "defaults": {"pool": "general", "cpu_allocation_ratio": 4.0},
        "nodes": [{"name": "pve2", "rack": "r2", "labels": {"topology.kubernetes.io/zone": "b"}}],
        **extra,
    }
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


async def test_nodes_vms_and_ids_come_from_the_api(tmp_path: Path, pve: PveCluster) -> None:
    source = inventory_source(f"proxmox:{site_file(tmp_path, pve)}")
    assert isinstance(source, ProxmoxInventory)
    doc = await source.load()
    hosts = {h["name"]: h for h in doc["hosts"]}
    assert sorted(hosts) == ["pve1", "pve2", "pve3"]
    # pve1 holds someone else's running VM (4 vCPUs, 8 GiB, 32 GiB disk); templates count nothing.
    assert (hosts["pve1"]["cpu_allocated"], hosts["pve1"]["memory_mb_allocated"]) == (4, 8192)
    assert hosts["pve1"]["disk_gb_allocated"] == 32
    # The disk room is what the storage has free (plus what the node's VMs hold), not its size.
    free = pve.pve.storages["local-lvm"]["avail"] // GIB
    assert free < 500
    assert hosts["pve1"]["disk_gb_capacity"] == 32 + free
    assert hosts["pve1"]["vm_count"] == 1
    assert (hosts["pve3"]["cpu_allocated"], hosts["pve3"]["vm_count"]) == (0, 0)
    assert hosts["pve2"]["cpu_capacity"] == 4 and hosts["pve2"]["memory_mb_capacity"] == 8192
    assert hosts["pve2"]["disk_gb_capacity"] == free
    # The site file's facts: defaults, and a node's own over them.
    assert hosts["pve1"]["pool"] == "general" and hosts["pve1"]["cpu_allocation_ratio"] == 4.0
    assert hosts["pve2"]["rack"] == "r2"
    assert hosts["pve2"]["labels"] == {"topology.kubernetes.io/zone": "b"}
    # Every id in use, templates too, and what the cluster would hand out next.
    assert set(doc["used_vmids"]) >= {100, *TEMPLATES.values()}
    assert doc["next_vmid"] == 101
    # Someone else's VM is room taken, not a virtflow VM.
    assert doc["existing_vms"] == []
    PlacementInput.model_validate({**doc, "request": {"name": "x", "cpu": 1, "memory_mb": 512}})


async def test_a_full_storage_leaves_placement_no_disk_room(
    tmp_path: Path, pve: PveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Filled by something other than the nodes' VMs (backups, images, another cluster's disks).
    monkeypatch.setitem(pve.pve.storages["local-lvm"], "avail", 0)
    doc = await ProxmoxInventory(site_file(tmp_path, pve)).load()
    for host in doc["hosts"]:
        assert host["disk_gb_capacity"] == host["disk_gb_allocated"], host
    request = {"name": "x", "cpu": 1, "memory_mb": 512, "disk_gb": 10}
    decision = place(PlacementInput.model_validate({**doc, "request": request}))
    assert decision.host is None, decision


async def test_an_offline_node_is_listed_unschedulable(tmp_path: Path, pve: PveCluster) -> None:
    pve.pve.set_node_offline("pve3")
    try:
        doc = await ProxmoxInventory(site_file(tmp_path, pve)).load()
    finally:
        pve.pve.set_node_offline("pve3", offline=False)
    pve3 = next(h for h in doc["hosts"] if h["name"] == "pve3")
    assert pve3["unschedulable"] is True


async def test_a_refused_token_is_a_configuration_error(tmp_path: Path, pve: PveCluster) -> None:
    source = ProxmoxInventory(site_file(tmp_path, pve, secret="not-the-secret"))
    with pytest.raises(ApplicationError) as caught:
        await source.load()
    assert caught.value.non_retryable
    assert caught.value.type == "InventoryInvalid"
    assert "401" in caught.value.message and "refused the token" in caught.value.message
    assert "not-the-secret" not in caught.value.message


async def test_an_api_that_does_not_answer_may_come_back(tmp_path: Path, pve: PveCluster) -> None:
    site = site_file(tmp_path, pve, api_host="127.0.0.1:1")
    with pytest.raises(ApplicationError) as caught:
        await ProxmoxInventory(site).load()
    assert not caught.value.non_retryable
    assert caught.value.type == "InventoryUnavailable"
