"""A request field that looks like Ansible templating reaches the lab as data, never as code.

Runs the real create playbook through ansible-runner against a started lab hypervisor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from contracts.vm import VmSpec
from lab.hypervisor import LabHypervisor
from provisioners.ansible import AnsibleProvisioner

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def hypervisor() -> AsyncIterator[LabHypervisor]:
    hv = LabHypervisor([{"name": "bm-1", "cpu_capacity": 8, "memory_mb_capacity": 16384}])
    await hv.start()
    yield hv
    await hv.stop()


async def test_templating_in_a_label_and_group_is_stored_literally(
    hypervisor: LabHypervisor, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    payload = f"{{{{ lookup('pipe', 'touch {marker}') }}}}"
    provisioner = AnsibleProvisioner(
        playbook_dir=REPO / "playbooks",
        hypervisor="lab",
        extravars={"lab_hypervisor_url": hypervisor.url},
        artifacts_root=tmp_path / "ansible",
    )
    spec = VmSpec(
        name="spare-lab-inject",
        host="bm-1",
        cpu=1,
        memory_mb=512,
        anti_affinity_group=payload,
        labels={"virtflow.io/note": payload},
        user_data=payload,
    )
    await provisioner.create_vm(spec)

    assert not marker.exists()
    vm = hypervisor.vms["spare-lab-inject"]
    assert vm.labels == {"virtflow.io/note": payload}
    assert vm.anti_affinity_group == payload
    assert vm.user_data == payload
