"""The libvirt create's two steps (hypervisors/libvirt/action_plugins): the disk and seed made
by one command on the host (virtflow_host_command, its input on stdin) and the domain made by one
call to libvirt (virtflow_libvirt_domain): what the call tells apart, what a retried create
does to a domain that exists, and a disk made without a seed.

No libvirtd: libvirt's own test driver (`test:///<file>`, inside the client library) stands
for the host, with the domain of the file already there; an unreachable libvirt is a socket
that does not exist. Each case is one real playbook run (~2 s).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, VmSpec
from provisioners.ansible import AnsibleProvisioner
from tests.libvirt.conftest import libvirt_module

REPO = Path(__file__).resolve().parents[2]
NAME = "spare-x-r1"
# A host whose libvirt holds NAME already, running, as an earlier attempt of the create left it.
NODE = f"""<node>
  <domain type='test'>
    <name>{NAME}</name>
    <metadata>
      <virtflow:vm xmlns:virtflow='https://virtflow.dev/xmlns/vm/1'>
        <virtflow:vmid>77</virtflow:vmid>
      </virtflow:vm>
    </metadata>
    <memory unit='MiB'>64</memory>
    <vcpu>1</vcpu>
    <os><type arch='x86_64'>hvm</type></os>
    <devices><interface type='user'><mac address='52:54:00:aa:bb:cc'/></interface></devices>
  </domain>
</node>
"""


@pytest.fixture
def create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, libvirt_collections: Path
) -> ProvisioningActivities:
    libvirt_module()  # the module's interpreter is this one: skip where libvirt-python is not
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    (tmp_path / "images").mkdir()
    (tmp_path / "node.xml").write_text(NODE)
    return ProvisioningActivities(
        AnsibleProvisioner(
            playbook_dir=REPO / "playbooks",
            hypervisor="libvirt",
            extravars={
                "libvirt_uri_template": f"test://{tmp_path}/node.xml",
                "libvirt_domain_type": "qemu",
                "libvirt_interface_type": "user",
                "libvirt_ip_wait_seconds": "0",
                "libvirt_image_dir": str(tmp_path / "images"),
            },
            artifacts_root=tmp_path / "runs",
        )
    )


async def failure(create: ProvisioningActivities, spec: VmSpec) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        await ActivityEnvironment().run(create.create_vm, CreateVmInput(spec=spec))
    return raised.value


async def test_a_libvirt_that_does_not_answer_is_worth_another_try(
    create: ProvisioningActivities,
) -> None:
    provisioner = create.provisioner
    assert isinstance(provisioner, AnsibleProvisioner)
    provisioner.extravars["libvirt_uri_template"] = "qemu+unix:///system?socket=/nonexistent/sock"
    err = await failure(create, VmSpec(name="spare-y-r1", host="kvm-07", cpu=1, memory_mb=64))
    assert (err.type, err.non_retryable) == ("ProvisioningTransient", False)
    assert "libvirt on kvm-07" in str(err)
    assert "/nonexistent/sock" in str(err)


async def test_a_domain_libvirt_refuses_fails_for_good_in_libvirts_words(
    create: ProvisioningActivities,
) -> None:
    provisioner = create.provisioner
    assert isinstance(provisioner, AnsibleProvisioner)
    provisioner.extravars["libvirt_uri_template"] = "test:///default"
    provisioner.extravars["libvirt_domain_type"] = "bogus"
    err = await failure(create, VmSpec(name="spare-y-r1", host="localhost", cpu=1, memory_mb=64))
    assert (err.type, err.non_retryable) == ("ProvisioningFailed", True)
    assert "libvirt on localhost" in str(err)
    assert "invalid domain type bogus" in str(err)


async def test_a_retried_create_reports_the_domain_there_and_gives_it_a_fresh_seed(
    create: ProvisioningActivities, tmp_path: Path
) -> None:
    if shutil.which("cloud-localds") is None:
        pytest.skip("cloud-localds is not installed: apt-get install cloud-image-utils")
    # The provisioner itself: the activity takes user data only from the site's template.
    provisioner = create.provisioner
    spec = VmSpec(name=NAME, host="localhost", cpu=1, memory_mb=64, vmid=5)
    seed = tmp_path / "images" / f"{NAME}-seed.iso"
    first = spec.model_copy(update={"user_data": "#cloud-config\n# token-of-attempt-1\n"})
    facts = await provisioner.create_vm(first)
    # The domain that was there, read back: never defined again from the request.
    assert (facts.name, facts.vmid, facts.mac) == (NAME, 77, "52:54:00:aa:bb:cc")
    with seed.open("rb") as opened:  # as the running domain holds it
        assert b"token-of-attempt-1" in seed.read_bytes()
        # A retried create carries a new token (the old one is gone): the seed says so, and
        # the file the domain opened is replaced, not written over.
        again = spec.model_copy(update={"user_data": "#cloud-config\n# token-of-attempt-2\n"})
        assert await provisioner.create_vm(again) == facts
        assert b"token-of-attempt-2" in seed.read_bytes()
        assert b"token-of-attempt-1" in opened.read()
    assert seed.stat().st_mode & 0o077 == 0  # it holds the token: its owner's only
    assert sorted(p.name for p in seed.parent.iterdir()) == [seed.name]


async def test_a_disk_without_a_seed_is_made_from_the_image_and_nothing_waits_for_input(
    create: ProvisioningActivities, tmp_path: Path
) -> None:
    if shutil.which("qemu-img") is None:
        pytest.skip("qemu-img is not installed: apt-get install qemu-utils")
    base = tmp_path / "base.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(base), "16M"], check=True)
    provisioner = create.provisioner
    assert isinstance(provisioner, AnsibleProvisioner)
    provisioner.extravars["libvirt_uri_template"] = "test:///default"
    spec = VmSpec(name="spare-z-r1", host="localhost", cpu=1, memory_mb=64, image=str(base))
    facts = await ActivityEnvironment().run(create.create_vm, CreateVmInput(spec=spec))
    assert facts.name == "spare-z-r1"
    disk = tmp_path / "images" / "spare-z-r1.qcow2"
    info = subprocess.run(["qemu-img", "info", str(disk)], capture_output=True, text=True)
    assert str(base) in info.stdout  # an overlay of the image
    assert sorted(p.name for p in disk.parent.iterdir()) == [disk.name]
