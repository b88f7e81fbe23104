"""A real, tiny qemu domain created, described, swept and destroyed through the libvirt variant.

Runs against the session's libvirtd (tests/libvirt/conftest.py). The domain is
software-emulated (`qemu`), diskless and without a NIC, so it needs neither /dev/kvm nor an
image nor a network: it shows create, describe, the live inventory, the orphan sweep and
destroy without paying for a boot.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from activities.reconcile import ReconcileActivities
from contracts.reconcile import FindOrphansInput, OrphanSpare
from contracts.vm import CreateVmInput, DescribeVmInput, DestroyVmInput, VmSpec
from hypervisors.libvirt.inventory import LibvirtInventory
from provisioners.ansible import AnsibleProvisioner
from tests.libvirt.conftest import URI

pytestmark = pytest.mark.libvirt

REPO = Path(__file__).resolve().parents[2]


async def test_a_qemu_domain_is_created_found_swept_and_destroyed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    client: Client,
    libvirt_uri: str,
    libvirt_collections: Path,
) -> None:
    import libvirt

    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    provisioner = AnsibleProvisioner(
        playbook_dir=REPO / "playbooks",
        hypervisor="libvirt",
        extravars={
            "libvirt_uri_template": URI,
            "libvirt_domain_type": "qemu",
            "libvirt_interface_type": "none",
            "libvirt_ip_wait_seconds": "0",
            "libvirt_manage_disks": "false",
            "libvirt_hosts": "localhost",
        },
        artifacts_root=tmp_path,
    )
    activities = ProvisioningActivities(provisioner)
    # Named like a spare whose workflow is gone: the orphan sweep must find it.
    name = "spare-orphan-tiny"
    spec = VmSpec(name=name, host="localhost", cpu=1, memory_mb=64, vmid=4242)
    try:
        facts = await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec))
        assert (facts.name, facts.host, facts.vmid) == (name, "localhost", 4242)
        conn = libvirt.open(URI)
        try:
            assert conn.lookupByName(name).isActive()
        finally:
            conn.close()
        # The libvirt inventory reads the same libvirtd: the domain is virtflow's, and counts.
        site = tmp_path / "site.yaml"
        site.write_text(f"hosts: [{{name: localhost, uri: '{URI}', pool: general}}]\n")
        snapshot = await LibvirtInventory(site).load()
        (host,) = snapshot["hosts"]
        assert host["cpu_capacity"] == os.cpu_count()
        assert host["cpu_allocated"] >= 1
        assert host["memory_mb_allocated"] >= 64
        assert {"name": name, "host": "localhost", "group": None} in snapshot["existing_vms"]
        assert 4242 in snapshot["used_vmids"]
        sweep = ReconcileActivities(client, {"site": LibvirtInventory(site)})
        found = await ActivityEnvironment().run(sweep.find_orphans, FindOrphansInput())
        assert (
            OrphanSpare(name=name, host="localhost", inventory="site", has_vm=True, has_node=False)
            in found.orphans
        )
        again = await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec))
        assert again == facts
        described = await ActivityEnvironment().run(
            activities.describe_vm, DescribeVmInput(name=name)
        )
        assert described == facts
    finally:
        await ActivityEnvironment().run(
            activities.destroy_vm, DestroyVmInput(name=name, host="localhost")
        )
    conn = libvirt.open(URI)
    try:
        assert name not in [d.name() for d in conn.listAllDomains()]
    finally:
        conn.close()
