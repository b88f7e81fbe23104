"""The Proxmox playbooks, run by the real ansible-runner with the unmodified community.proxmox
modules against a three-node cluster (fakepve behind the lab front): what they create, what
they leave behind, and how each failure a real cluster produces is classified.

Each playbook run costs about a second per task; one cluster serves the whole session.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, DescribeVmInput, DestroyVmInput, VmFacts, VmSpec
from playbooks import PLAYBOOK_DIR
from provisioners.ansible import AnsibleProvisioner
from tests.helpers import assert_eventually, run_processes
from tests.libvirt.collections import collections_path, installed
from tests.proxmox.cluster import TEMPLATES, PveCluster

USER_DATA = "#cloud-config\nruncmd: [[true]]\n"


@pytest.fixture(autouse=True)
def collections(monkeypatch: pytest.MonkeyPatch) -> None:
    path = collections_path()
    if not installed(path):
        pytest.skip(f"community.proxmox is not in {path}: run `make collections`")
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(path))


def activities(pve: PveCluster, tmp_path: Path, **extravars: str) -> ProvisioningActivities:
    provisioner = AnsibleProvisioner(
        playbook_dir=PLAYBOOK_DIR,
        hypervisor="proxmox",
        extravars=pve.extravars(**extravars),
        artifacts_root=tmp_path / "ansible",
        inventory=pve.ansible_inventory,
    )
    return ProvisioningActivities(provisioner)


def spec(name: str, host: str, vmid: int, **fields: Any) -> VmSpec:
    base: dict[str, Any] = {"name": name, "host": host, "cpu": 2, "memory_mb": 2048, "vmid": vmid}
    return VmSpec.model_validate(base | {"user_data": USER_DATA} | fields)


def expected_mac(name: str) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return "52:54:00:" + ":".join(digest[i : i + 2] for i in (0, 2, 4))


class WithUserData:
    """A create activity whose spec keeps its user data (the site template's job elsewhere)."""

    def __init__(self, user_data: str) -> None:
        self.user_data = user_data

    async def prepare(self, spec: VmSpec) -> VmSpec:
        return spec.model_copy(update={"user_data": self.user_data})


async def create(acts: ProvisioningActivities, vm: VmSpec) -> VmFacts:
    acts.joiner = WithUserData(vm.user_data or USER_DATA)
    return await ActivityEnvironment().run(acts.create_vm, CreateVmInput(spec=vm))


async def failed_create(acts: ProvisioningActivities, vm: VmSpec) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        await create(acts, vm)
    return caught.value


async def destroy(
    acts: ProvisioningActivities, name: str, host: str | None, vmid: int | None = None
) -> None:
    await ActivityEnvironment().run(
        acts.destroy_vm, DestroyVmInput(name=name, host=host, vmid=vmid)
    )


def vm_named(pve: PveCluster, name: str) -> Any:
    return next((vm for vm in pve.pve.vms if vm.name == name), None)


@pytest.fixture
def foreign_digest(pve: PveCluster) -> Iterator[str]:
    """Someone else's VM must come out of every test exactly as it went in."""
    before = pve.pve.vm(100).digest()
    yield before
    assert pve.pve.vm(100).digest() == before
    assert pve.pve.vm(100).status == "running"


def nothing_left(pve: PveCluster, name: str) -> None:
    assert vm_named(pve, name) is None
    assert not (pve.snippets_dir / f"{name}-user.yaml").exists()


async def test_a_vm_is_cloned_on_its_node_configured_started_and_destroyed(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    # No stats pass during the test: the cluster list never names the new VM, as right after
    # a clone on a real cluster. Start, facts and destroy must not need it.
    pve.front.stats_delay = 3600
    acts = activities(pve, tmp_path, proxmox_gpu_mappings=json.dumps({"pve2": ["gpu-a", "gpu-b"]}))
    facts = await create(acts, spec("spare-px-1", "pve2", 201, network="vmbr1", gpu=1))
    assert facts == VmFacts(
        name="spare-px-1", host="pve2", ip=None, mac=expected_mac("spare-px-1"), vmid=201
    )
    vm = pve.pve.vm(201)
    assert (vm.node, vm.status, vm.name) == ("pve2", "running", "spare-px-1")
    config = vm.config
    assert (int(config["cores"]), int(config["memory"])) == (2, 2048)
    # net0 as asked (the clone's random MAC and the template's bridge replaced).
    assert config["net0"].lower() == f"virtio={expected_mac('spare-px-1')},bridge=vmbr1"
    assert config["ipconfig0"] == "ip=dhcp"
    assert config["cicustom"] == "user=local:snippets/spare-px-1-user.yaml"
    assert set(config["tags"].split(";")) == {"virtflow"}
    # A GPU through a PCI resource mapping (a token may not set raw host devices).
    assert config["hostpci0"] == "mapping=gpu-a,pcie=1"
    assert "hostpci1" not in config
    assert config["machine"] == "q35"
    # Cloned from this node's own template, by id.
    clones = [t for t in pve.pve.tasklog if t["type"] == "qmclone" and t["id"] == "9002"]
    assert clones and clones[-1]["node"] == "pve2"
    snippet = pve.snippets_dir / "spare-px-1-user.yaml"
    assert snippet.read_text() == USER_DATA
    assert snippet.stat().st_mode & 0o777 == 0o600

    # A retry (a worker that crashed after the create) finds the same VM.
    assert await create(acts, spec("spare-px-1", "pve2", 201)) == facts
    described = await ActivityEnvironment().run(
        acts.describe_vm, DescribeVmInput(name="spare-px-1")
    )
    assert described == facts

    await destroy(acts, "spare-px-1", "pve2")
    nothing_left(pve, "spare-px-1")
    await destroy(acts, "spare-px-1", "pve2")  # gone already: not an error


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_node_the_inventory_gives_no_connection_is_reached_over_ssh(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    # A node with only its address in the inventory (no ansible_connection), as on a real site:
    # the snippet tasks go over SSH (here to a closed port) and fail as unreachable, never
    # touching this machine's files (the lab's snippets directory stands for the worker's disk).
    # A node missing from the inventory is reached the same way, by its name.
    node = {"ansible_host": "127.0.0.1", "ansible_port": closed_port()}
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(json.dumps({"pve_nodes": {"hosts": {"pve3": node}}}))
    provisioner = AnsibleProvisioner(
        playbook_dir=PLAYBOOK_DIR,
        hypervisor="proxmox",
        extravars=pve.extravars(),
        artifacts_root=tmp_path / "ansible",
        inventory=inventory,
    )
    acts = ProvisioningActivities(provisioner)
    created = await failed_create(acts, spec("spare-px-ssh", "pve3", 207))
    nothing_left(pve, "spare-px-ssh")  # neither the snippet here nor a clone

    snippet = pve.snippets_dir / "spare-px-ssh-user.yaml"
    snippet.write_text(USER_DATA)
    try:
        with pytest.raises(ApplicationError) as caught:
            await destroy(acts, "spare-px-ssh", "pve3")
        assert snippet.exists()
    finally:
        snippet.unlink(missing_ok=True)
    for err, step in ((created, "writing"), (caught.value, "removing")):
        assert not err.non_retryable, err.message  # an unreachable node may come back
        assert f"{step} the cloud-init snippet of spare-px-ssh on node pve3" in err.message
        assert "Failed to connect to the host via ssh" in err.message, err.message


async def test_an_id_holding_someone_elses_vm_fails_the_create_without_touching_it(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    err = await failed_create(activities(pve, tmp_path), spec("spare-px-3", "pve1", 100))
    assert err.non_retryable, err.message
    assert "VM id 100" in err.message and "db-01" in err.message
    nothing_left(pve, "spare-px-3")


async def test_a_clone_task_that_ends_in_error_fails_the_create_with_its_error(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    store = pve.pve.storages["local-lvm"]
    store["avail"], avail = 0, store["avail"]
    try:
        pve.pve.vm(TEMPLATES["pve3"]).config["scsi0"] = "local-lvm:base-9003-disk-0,size=4G"
        store.setdefault("volumes", {})["base-9003-disk-0"] = {"size": 4 * 1024**3, "format": "raw"}
        acts = activities(pve, tmp_path, proxmox_timeout="5")
        err = await failed_create(acts, spec("spare-px-4", "pve3", 204))
    finally:
        store["avail"] = avail
        store["volumes"].pop("base-9003-disk-0", None)
    assert "No space left on device" in err.message, err.message
    nothing_left(pve, "spare-px-4")


async def test_a_locked_template_may_heal(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    template = pve.pve.vm(TEMPLATES["pve1"])
    template.lock = "backup"
    try:
        err = await failed_create(activities(pve, tmp_path), spec("spare-px-5", "pve1", 205))
    finally:
        template.lock = None
    assert not err.non_retryable, err.message
    assert "locked" in err.message
    nothing_left(pve, "spare-px-5")


async def test_an_offline_node_may_come_back(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    pve.pve.set_node_offline("pve3")
    try:
        err = await failed_create(activities(pve, tmp_path), spec("spare-px-6", "pve3", 206))
    finally:
        pve.pve.set_node_offline("pve3", offline=False)
    assert not err.non_retryable, err.message
    assert "595" in err.message or "No route to host" in err.message
    nothing_left(pve, "spare-px-6")


async def test_a_refused_token_fails_for_good(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    acts = activities(pve, tmp_path, proxmox_api_token_secret="not-the-secret")
    err = await failed_create(acts, spec("spare-px-7", "pve1", 207))
    assert err.non_retryable, err.message
    assert "401" in err.message
    assert "not-the-secret" not in err.message
    nothing_left(pve, "spare-px-7")


async def test_a_cancelled_create_stops_and_the_destroy_removes_what_it_made(
    pve: PveCluster, tmp_path: Path, foreign_digest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The clone's disk copy is held until the test lets it go: the create is cancelled, and the
    # destroy starts, while PVE still holds the new VM under its clone lock with its
    # placeholder config, which names no VM yet.
    cluster = pve.pve
    cluster.add_ceph_storage("ceph-pool")
    template = cluster.vm(TEMPLATES["pve3"])
    monkeypatch.setitem(template.config, "scsi0", "ceph-pool:base-9003-disk-0,size=4G")
    copying = threading.Event()

    async def held_copy(vm: Any, keys: Any = None) -> None:
        while not copying.is_set():
            await asyncio.sleep(0.05)

    monkeypatch.setattr(cluster, "ceph_io", held_copy)
    try:
        acts = activities(pve, tmp_path)
        acts.joiner = WithUserData(USER_DATA)
        env = ActivityEnvironment()
        creating = asyncio.create_task(
            env.run(acts.create_vm, CreateVmInput(spec=spec("spare-px-9", "pve3", 209)))
        )

        async def cloning() -> None:
            assert vm_named(pve, "spare-px-9") is not None

        await assert_eventually(cloning, timeout=60)
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await creating

        # The module that waits for the clone task ran in a worker of its own session: the
        # stop reached it too, so nothing of the create goes on beside the destroy.
        async def stopped() -> None:
            assert not run_processes(tmp_path / "ansible")

        await assert_eventually(stopped, timeout=10)
        assert vm_named(pve, "spare-px-9").lock == "clone"
        # What the compensation runs: it finds the VM by the id placement chose, waits for the
        # clone to end, then removes it all.
        asked = len(cluster.requests)
        destroying = asyncio.create_task(destroy(acts, "spare-px-9", "pve3", vmid=209))

        async def waiting_for_the_clone() -> None:
            assert ("GET", "/api2/json/nodes/pve3/qemu/209/config") in [
                (method, path) for method, path, _ in cluster.requests[asked:]
            ]
            assert not destroying.done()

        await assert_eventually(waiting_for_the_clone, timeout=60)
        copying.set()
        await destroying
    finally:
        copying.set()
        del cluster.storages["ceph-pool"]
    nothing_left(pve, "spare-px-9")


async def test_a_node_without_the_template_clones_one_from_shared_storage_with_target(
    pve: PveCluster, tmp_path: Path, foreign_digest: str
) -> None:
    cluster = pve.pve
    cluster.add_ceph_storage("ceph-pool")  # shared: every node reaches its disks
    cluster.add_vm(
        9100,
        "debian-12-shared",
        node="pve1",
        template=True,
        config={
            "template": 1,
            "scsi0": "ceph-pool:base-9100-disk-0,size=4G",
            "net0": "virtio=BC:24:11:00:91:00,bridge=vmbr0",
        },
    )
    try:
        acts = activities(pve, tmp_path)
        facts = await create(acts, spec("spare-px-10", "pve3", 210, image="debian-12-shared"))
        assert (facts.host, facts.vmid) == ("pve3", 210)
        assert pve.pve.vm(210).node == "pve3"
        clone = next(t for t in cluster.tasklog if t["type"] == "qmclone" and t["id"] == "9100")
        assert clone["node"] == "pve1"  # cloned where the template is, onto its target
        await destroy(acts, "spare-px-10", "pve3")
    finally:
        cluster.vms.remove(cluster.vm(9100))
        del cluster.storages["ceph-pool"]
    nothing_left(pve, "spare-px-10")


async def test_a_password_instead_of_a_token_is_a_configuration_error(
    pve: PveCluster, tmp_path: Path
) -> None:
    acts = activities(
        pve, tmp_path, proxmox_api_token_secret="", proxmox_api_password="the-password"
    )
    err = await failed_create(acts, spec("spare-px-11", "pve1", 211))
    assert err.non_retryable, err.message
    assert "token" in err.message and "the-password" not in err.message
    nothing_left(pve, "spare-px-11")
