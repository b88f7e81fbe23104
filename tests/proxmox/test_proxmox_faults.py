"""Proxmox answers that are not OK, through the real playbooks and the unmodified
community.proxmox modules against the three-node cluster (fakepve's own faults behind the lab
front): every refused call fails the step at once and is classified (a refusal for good, lost
quorum or a lock transiently), a retry never starts a VM it did not finish configuring, a
destroy is done only once the VM is gone, and a task slower than the playbook's wait is a
transient failure the retry waits out.

A failure is injected on one path (`pve.fail`, PVE's own status line) or is fakepve's own
scenario (a lock, lost quorum, a slow stop); each test undoes it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import CreateVmInput
from hypervisors.proxmox.inventory import ProxmoxInventory
from tests.helpers import assert_eventually
from tests.proxmox.cluster import TEMPLATES, TOKEN_ID, TOKEN_USER, PveCluster
from tests.proxmox.test_proxmox_playbooks import (  # noqa: F401 (fixtures)
    USER_DATA,
    WithUserData,
    activities,
    collections,
    create,
    destroy,
    failed_create,
    foreign_digest,
    nothing_left,
    spec,
    vm_named,
)
from tests.proxmox.test_proxmox_spare import proxmox_site

NO_QUORUM = "cluster not ready - no quorum?"
# Someone else's VM comes out of every test exactly as it went in.
pytestmark = pytest.mark.usefixtures("foreign_digest")


@pytest.fixture
def faults(pve: PveCluster) -> Iterator[Any]:
    """fakepve, with every injected failure, lock and lost quorum undone afterwards."""
    yield pve.pve
    pve.pve.failures.clear()
    pve.pve.regain_quorum()
    pve.pve.time_scale = 0


def configured(vm: Any) -> bool:
    config = vm.config
    return (
        (int(config.get("cores", 0)), int(config.get("memory", 0))) == (2, 2048)
        and config.get("cicustom") == f"user=local:snippets/{vm.name}-user.yaml"
        and "virtflow" in str(config.get("tags", "")).split(";")
    )


async def test_a_refused_configuration_fails_the_create_at_once_for_good(
    pve: PveCluster, faults: Any, tmp_path: Path
) -> None:
    # A token without VM.Config.Network: PVE refuses the config PUT with 403.
    faults.fail(
        "PUT", "/qemu/221/config", 403, "Permission check failed (/vms/221, VM.Config.Network)"
    )
    err = await failed_create(activities(pve, tmp_path), spec("spare-px-21", "pve2", 221))
    assert err.non_retryable, err.message
    assert "403" in err.message and "VM.Config.Network" in err.message, err.message
    # The half-made clone was removed: a retry would clone again.
    nothing_left(pve, "spare-px-21")
    assert not [t for t in faults.tasklog if t["type"] == "qmstart" and t["id"] == "221"]


async def test_a_config_refused_by_lost_quorum_is_transient_and_the_retry_configures_the_vm(
    pve: PveCluster,
    faults: Any,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Quorum is lost between the clone and the configuration, and the removal of the
    # half-made VM is refused as well: the VM stays, named, stopped, unconfigured.
    faults.fail("PUT", "/qemu/222/config", 500, NO_QUORUM, times=1)
    faults.fail("DELETE", "/nodes/pve2/qemu/222", 500, NO_QUORUM, times=1)
    acts = activities(pve, tmp_path)
    err = await failed_create(acts, spec("spare-px-22", "pve2", 222))
    assert not err.non_retryable, err.message
    assert "no quorum" in err.message, err.message
    left = vm_named(pve, "spare-px-22")
    assert left is not None and left.status == "stopped" and not configured(left)
    # It is virtflow's from the clone on (name and description), before any tag: the
    # inventory lists it, so the orphan sweep finds it should no retry come.
    site = proxmox_site(tmp_path_factory.mktemp("site"), pve)
    doc = await ProxmoxInventory(site).load()
    assert {"name": "spare-px-22", "host": "pve2", "group": None} in doc["existing_vms"]

    # The retry finishes the configuration before it starts the VM.
    facts = await create(acts, spec("spare-px-22", "pve2", 222))
    assert (facts.host, facts.vmid) == ("pve2", 222)
    vm = faults.vm(222)
    assert vm.status == "running" and configured(vm), vm.config
    await destroy(acts, "spare-px-22", "pve2")
    nothing_left(pve, "spare-px-22")


async def test_a_snippet_that_cannot_be_written_fails_the_create_at_once(
    pve: PveCluster, faults: Any, tmp_path: Path
) -> None:
    # The snippets directory is not there: the write fails, before any clone.
    acts = activities(pve, tmp_path, proxmox_snippets_dir=str(tmp_path / "no-such-dir"))
    err = await failed_create(acts, spec("spare-px-23", "pve1", 223))
    assert err.non_retryable, err.message
    assert "writing the cloud-init snippet of spare-px-23 on node pve1" in err.message
    nothing_left(pve, "spare-px-23")
    # A snippet storage that is not there (or holds no snippets) is a site mistake, said at once.
    acts = activities(pve, tmp_path, proxmox_snippets_storage="local-lvm")
    err = await failed_create(acts, spec("spare-px-23", "pve1", 223))
    assert err.non_retryable, err.message
    assert "storage 'local-lvm'" in err.message and "snippets" in err.message, err.message
    nothing_left(pve, "spare-px-23")


def stopped_vm(pve: PveCluster, vmid: int, name: str, status: str = "stopped") -> Any:
    """A virtflow VM as a create leaves it, made directly in fakepve (no playbook run)."""
    return pve.pve.add_vm(
        vmid,
        name,
        node="pve3",
        status=status,
        config={
            "cores": 2,
            "memory": 2048,
            "net0": "virtio=52:54:00:00:02:24,bridge=vmbr0",
            "tags": "virtflow",
        },
    )


async def test_a_removal_proxmox_refuses_is_never_reported_done(
    pve: PveCluster, faults: Any, tmp_path: Path
) -> None:
    stopped_vm(pve, 224, "spare-px-24")
    acts = activities(pve, tmp_path)
    # A backup holds the VM's lock: PVE's removal task ends in error.
    faults.snapshot_lock(224, "backup")
    with pytest.raises(ApplicationError) as locked:
        await destroy(acts, "spare-px-24", "pve3")
    assert not locked.value.non_retryable, locked.value.message
    assert "VM is locked (backup)" in locked.value.message
    assert faults.vm(224) is not None
    faults.unlock(224)
    # Quorum lost: PVE refuses the removal.
    faults.fail("DELETE", "/nodes/pve3/qemu/224", 500, NO_QUORUM)
    with pytest.raises(ApplicationError) as no_quorum:
        await destroy(acts, "spare-px-24", "pve3")
    assert not no_quorum.value.non_retryable, no_quorum.value.message
    assert "no quorum" in no_quorum.value.message
    assert faults.vm(224) is not None
    faults.failures.clear()
    await destroy(acts, "spare-px-24", "pve3")
    assert faults.vm(224) is None


async def test_a_stop_slower_than_the_playbooks_wait_is_transient_and_waited_out(
    pve: PveCluster, faults: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vm = stopped_vm(pve, 225, "spare-px-25", status="running")
    # A hard stop of 45 s, over the playbook's wait of 2: held until the test lets it end.
    vm.stop_secs = 45
    stopping = threading.Event()
    pause = faults.pause

    async def held_stop(secs: float) -> None:
        if secs != vm.stop_secs:
            return await pause(secs)
        while not stopping.is_set():
            await asyncio.sleep(0.05)

    monkeypatch.setattr(faults, "pause", held_stop)
    faults.time_scale = 1  # tasks run on their own, as PVE's workers do
    acts = activities(pve, tmp_path, proxmox_timeout="2")
    try:
        with pytest.raises(ApplicationError) as slow:
            await destroy(acts, "spare-px-25", "pve3")
    finally:
        stopping.set()
    assert not slow.value.non_retryable, slow.value.message
    assert "still running" in slow.value.message

    async def stopped() -> None:
        assert faults.vm(225).status == "stopped"

    await assert_eventually(stopped, timeout=30)
    await destroy(acts, "spare-px-25", "pve3")  # the retry: the stop is done, the VM goes
    assert faults.vm(225) is None


async def test_a_clone_slower_than_the_playbooks_wait_is_transient_and_the_retry_waits_it_out(
    pve: PveCluster,
    faults: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The clone's disk copy is held until the test lets it go.
    faults.add_ceph_storage("ceph-pool")
    template = faults.vm(TEMPLATES["pve3"])
    monkeypatch.setitem(template.config, "scsi0", "ceph-pool:base-9003-disk-0,size=4G")
    copying = threading.Event()

    async def held_copy(vm: Any, keys: Any = None) -> None:
        while not copying.is_set():
            await asyncio.sleep(0.05)

    monkeypatch.setattr(faults, "ceph_io", held_copy)
    faults.time_scale = 1  # the clone runs as a task of its own, as PVE's worker does
    try:
        acts = activities(pve, tmp_path, proxmox_timeout="2")
        err = await failed_create(acts, spec("spare-px-26", "pve3", 226))
        assert not err.non_retryable, err.message
        assert "still running" in err.message, err.message
        assert faults.vm(226).lock == "clone"

        # The retry finds the clone in flight on its VM id and waits for it.
        acts = activities(pve, tmp_path, proxmox_timeout="60")
        acts.joiner = WithUserData(USER_DATA)
        asked = len(faults.requests)
        retry = asyncio.create_task(
            ActivityEnvironment().run(
                acts.create_vm, CreateVmInput(spec=spec("spare-px-26", "pve3", 226))
            )
        )

        async def waiting_for_the_clone() -> None:
            assert ("GET", "/api2/json/nodes/pve3/qemu/226/status/current") in [
                (method, path) for method, path, _ in faults.requests[asked:]
            ]
            assert not retry.done()

        await assert_eventually(waiting_for_the_clone, timeout=60)
        copying.set()
        facts = await retry
        assert (facts.host, facts.vmid) == ("pve3", 226)
        vm = faults.vm(226)
        assert vm.status == "running" and configured(vm), vm.config
        await destroy(acts, "spare-px-26", "pve3")
    finally:
        copying.set()
        del faults.storages["ceph-pool"]
    nothing_left(pve, "spare-px-26")


async def test_a_clone_whose_vm_is_not_written_yet_is_waited_for_and_removed(
    pve: PveCluster, faults: Any, tmp_path: Path
) -> None:
    # PVE's clone task takes its locks before it writes the new VM's config: meanwhile the
    # node lists the task as active (under the template's id) and neither the VM's name nor
    # its id finds it. A compensation's destroy comes in that window.
    faults.time_scale = 1  # the task runs on its own, as PVE's worker does
    cloning = threading.Event()

    async def clone() -> None:
        while not cloning.is_set():
            await asyncio.sleep(0.05)
        stopped_vm(pve, 227, "spare-px-27").config["description"] = "virtflow: spare-px-27"

    pve.call(faults.task("pve3", "qmclone", TEMPLATES["pve3"], f"{TOKEN_USER}!{TOKEN_ID}", clone))
    acts = activities(pve, tmp_path)
    asked = len(faults.requests)
    destroying = asyncio.create_task(destroy(acts, "spare-px-27", "pve3", vmid=227))
    try:

        async def waiting_for_the_clone() -> None:
            assert ("GET", "/api2/json/nodes/pve3/tasks") in [
                (method, path) for method, path, _ in faults.requests[asked:]
            ]
            assert not destroying.done()

        await assert_eventually(waiting_for_the_clone, timeout=60)
    finally:
        cloning.set()
    await destroying
    assert faults.vm(227) is None
