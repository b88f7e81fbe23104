"""The libvirt variant's wait for a domain's IP address (`facts.yml`, `virsh domifaddr`): a
libvirt that went away during the wait fails it as transient, so the engine tries the create
again; a domain libvirt does not know fails it for good, in virsh's words.

Only `virsh` is needed: a socket nobody listens on stands for a libvirtd that went away, and
virsh's own `test:///default` driver for a libvirt that answers. About 5 s (one retry delay).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml

from contracts.vm import VmSpec
from provisioners.ansible import AnsibleProvisioner
from provisioners.contract import ProvisioningFailed

FACTS = Path(__file__).resolve().parents[2] / "hypervisors" / "libvirt" / "facts.yml"
KNOWN_XML = (
    "<domain><devices><interface><mac address='52:54:00:12:34:56'/></interface></devices></domain>"
)


def facts_only(playbook_dir: Path) -> Path:
    """A create_vm.yml that only reads the facts of a domain just defined, as create does."""
    playbook_dir.mkdir()
    play = {
        "name": "Read the facts of a domain just defined",
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {
                "name": "Read the domain's facts",
                "ansible.builtin.import_tasks": str(FACTS),
                "vars": {
                    "libvirt_host": "{{ vm_host }}",
                    "libvirt_ip_wait": 1,
                    "libvirt_known_xml": KNOWN_XML,
                },
            },
            {"ansible.builtin.set_stats": {"data": {"vm": "{{ vm_facts }}"}, "per_host": False}},
        ],
    }
    (playbook_dir / "create_vm.yml").write_text(yaml.safe_dump([play]))
    return playbook_dir


async def failed_wait(playbook_dir: Path, artifacts: Path, uri: str) -> ProvisioningFailed:
    provisioner = AnsibleProvisioner(
        playbook_dir=playbook_dir,
        hypervisor="libvirt",
        extravars={"libvirt_uri_template": uri},
        artifacts_root=artifacts,
    )
    spec = VmSpec(name="spare-ip-wait", host="kvm-01", cpu=1, memory_mb=64)
    with pytest.raises(ProvisioningFailed) as failed:
        await provisioner.create_vm(spec)
    return failed.value


@pytest.mark.skipif(shutil.which("virsh") is None, reason="virsh is missing (make libvirt)")
async def test_libvirt_gone_during_the_ip_wait_is_transient_an_unknown_domain_is_not(
    tmp_path: Path,
) -> None:
    playbooks = facts_only(tmp_path / "playbooks")
    gone, unknown = await asyncio.gather(
        failed_wait(playbooks, tmp_path / "a", f"qemu+unix:///system?socket={tmp_path}/gone.sock"),
        failed_wait(playbooks, tmp_path / "b", "test:///default"),
    )
    assert gone.transient, gone.message
    assert gone.message.startswith("libvirt on kvm-01: virsh domifaddr spare-ip-wait:")
    assert "failed to connect to the hypervisor" in gone.message
    assert not unknown.transient, unknown.message
    assert "failed to get domain 'spare-ip-wait'" in unknown.message
