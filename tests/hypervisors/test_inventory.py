"""Inventory sources: a file (YAML or JSON) and HTTP (the lab hypervisor's /inventory)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError

from hypervisors.inventory import FileInventory, HttpInventory, inventory_source, read_inventory
from lab.hypervisor import LabHypervisor

REPO = Path(__file__).resolve().parents[2]
HOST = {"name": "h1", "cpu_capacity": 8, "memory_mb_capacity": 1024, "gpu_capacity": 0}


@pytest.fixture
async def hypervisor() -> AsyncIterator[LabHypervisor]:
    hv = LabHypervisor([HOST])
    await hv.start()
    yield hv
    await hv.stop()


async def test_file_inventory_reads_yaml_and_json(tmp_path: Path) -> None:
    as_json = tmp_path / "site.json"
    as_json.write_text(json.dumps({"hosts": [HOST], "next_vmid": 300}))
    assert await FileInventory(as_json).load() == {"hosts": [HOST], "next_vmid": 300}
    lab = await FileInventory(REPO / "lab" / "inventory.yaml").load()
    assert len(lab["hosts"]) == 6


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "file not found"),
        ("hosts: [unclosed", "not valid YAML or JSON"),
        ("- just a list", "expected a mapping, got list"),
        ("hosts: {h1: {}}", "expected a 'hosts' list"),
    ],
)
async def test_a_broken_file_fails_without_retry_and_says_why(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "site.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ApplicationError) as caught:
        await FileInventory(path).load()
    assert caught.value.type == "InventoryInvalid" and caught.value.non_retryable
    assert caught.value.message.startswith(f"inventory {path}: {reason}")


async def test_http_inventory_reads_the_lab_hypervisor(hypervisor: LabHypervisor) -> None:
    await hypervisor.create_vm({"name": "vm-1", "host": "h1", "cpu": 2, "memory_mb": 256})
    snapshot = await read_inventory(f"{hypervisor.url}/inventory")
    assert snapshot["hosts"][0]["cpu_allocated"] == 2
    assert snapshot["existing_vms"] == [{"name": "vm-1", "host": "h1", "group": None}]


async def test_http_errors_are_retryable(hypervisor: LabHypervisor) -> None:
    with pytest.raises(ApplicationError) as not_found:
        await read_inventory(f"{hypervisor.url}/no-such-path")
    assert not_found.value.type == "InventoryUnavailable" and not not_found.value.non_retryable
    assert "HTTP 404" in not_found.value.message

    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/inventory"
    with pytest.raises(ApplicationError) as refused:
        await read_inventory(closed)
    assert refused.value.type == "InventoryUnavailable" and not refused.value.non_retryable
    assert "cannot connect" in refused.value.message


def test_inventory_source_chooses_by_prefix(tmp_path: Path) -> None:
    assert isinstance(inventory_source("http://127.0.0.1:8091/inventory"), HttpInventory)
    assert isinstance(inventory_source("https://inventory.example/site"), HttpInventory)
    source = inventory_source(str(tmp_path / "site.yaml"))
    assert isinstance(source, FileInventory) and source.path == tmp_path / "site.yaml"


async def test_a_file_read_again_is_parsed_only_when_its_bytes_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "site.json"
    path.write_text(json.dumps({"hosts": [HOST]}))
    source = FileInventory(path)
    first = await source.read_if_changed(None)
    assert first is not None and first.version is not None
    assert await source.read_if_changed(first.version) is None
    # Rewritten at once with the same size: the bytes tell, not the file's times.
    path.write_text(json.dumps({"hosts": [{**HOST, "cpu_capacity": 9}]}))
    second = await source.read_if_changed(first.version)
    assert second is not None and second.document["hosts"][0]["cpu_capacity"] == 9
    # Once its status has settled, an unchanged file is not even read.
    monkeypatch.setattr("hypervisors.inventory.SETTLED_SECONDS", 0.0)
    assert await source.read_if_changed(second.version) is None
    reads: list[Path] = []
    real_read = Path.read_bytes

    def counted(p: Path) -> bytes:
        reads.append(p)
        return real_read(p)

    monkeypatch.setattr(Path, "read_bytes", counted)
    assert await source.read_if_changed(second.version) is None
    assert reads == []
    path.write_text(json.dumps({"hosts": [HOST, {**HOST, "name": "h2"}]}))
    third = await source.read_if_changed(second.version)
    assert third is not None and len(third.document["hosts"]) == 2 and reads == [path]


async def test_an_http_inventory_is_parsed_only_when_its_body_changed(
    hypervisor: LabHypervisor,
) -> None:
    source = HttpInventory(f"{hypervisor.url}/inventory")
    first = await source.read_if_changed(None)
    assert first is not None and first.version is not None
    assert await source.read_if_changed(first.version) is None
    await hypervisor.create_vm({"name": "vm-1", "host": "h1", "cpu": 2, "memory_mb": 256})
    second = await source.read_if_changed(first.version)
    assert second is not None and second.document["hosts"][0]["cpu_allocated"] == 2
