"""A real, tiny qemu domain created and destroyed through the libvirt playbook variant.

Optional (marker `libvirt`, not in `make test`): `make test-libvirt` installs libvirt and
qemu from Debian, libvirt-python into the venv, extracts community.libvirt, starts libvirtd
and runs this. The domain is software-emulated (`qemu`), diskless and without a NIC, so it
needs neither /dev/kvm nor an image nor a network.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.provisioning import (
    AnsibleProvisioner,
    CreateVmInput,
    DescribeVmInput,
    DestroyVmInput,
    ProvisioningActivities,
    VmSpec,
)
from tests.libvirt.collections import collections_path, installed

pytestmark = pytest.mark.libvirt

REPO = Path(__file__).resolve().parents[2]
URI = "qemu:///system"


def libvirt_or_skip() -> None:
    try:
        import libvirt
    except ImportError:
        libvirt = None
    # Without libvirt-python, `libvirt` can resolve to this test directory (a namespace package).
    if libvirt is None or not hasattr(libvirt, "open"):
        pytest.skip("libvirt-python is not installed: run `make test-libvirt`")
    if not installed(collections_path()):
        pytest.skip(f"community.libvirt is not in {collections_path()}: run `make collections`")
    try:
        libvirt.open(URI).close()
    except libvirt.libvirtError as err:
        pytest.skip(f"libvirtd does not answer at {URI}: {err}")


async def test_a_qemu_domain_is_created_found_and_destroyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    libvirt_or_skip()
    import libvirt

    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(collections_path()))
    provisioner = AnsibleProvisioner(
        playbook_dir=REPO / "playbooks",
        provider="libvirt",
        extravars={
            "libvirt_uri_template": URI,
            "libvirt_domain_type": "qemu",
            "libvirt_interface_type": "none",
            "libvirt_ip_wait_seconds": "0",
            "libvirt_manage_disks": "false",
        },
        artifacts_root=tmp_path,
    )
    activities = ProvisioningActivities(provisioner)
    name = "virtflow-test-tiny"
    spec = VmSpec(name=name, host="localhost", cpu=1, memory_mb=64, vmid=4242)
    try:
        facts = await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec))
        assert (facts.name, facts.host, facts.vmid) == (name, "localhost", 4242)
        conn = libvirt.open(URI)
        try:
            assert conn.lookupByName(name).isActive()
        finally:
            conn.close()
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
