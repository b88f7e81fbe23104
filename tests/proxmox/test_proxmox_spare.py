"""One spare end to end on a Proxmox VE cluster of three nodes (fakepve behind the lab front).

Placement reads the live Proxmox inventory (proxmoxer); the request carries the qemu-scheduler's
annotations as a CAPPX manifest would; the create activity makes a bootstrap token and renders
the site template's user data; the playbook writes it as a snippet, clones the node's template
with the unmodified community.proxmox modules and the API, points cicustom at the snippet and
starts the VM; the lab plays the guest, which runs the snippet's join against the lab
Kubernetes API with the token; `spare.ready` is delivered; release drains, deletes the Node and
destroys the VM. Afterwards no VM, snippet or token of the spare is left, and the VM that was
on the cluster before is exactly as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client

from activities.bootstrap_tokens import NAMESPACE
from contracts.spare import SPARE_LABEL, Phase, ReleaseRequest
from hypervisors.proxmox.inventory import ProxmoxInventory
from placement.models import Taint
from runtime.settings import Settings
from runtime.vm_templates import VmTemplate
from tests.helpers import assert_eventually
from tests.libvirt.collections import collections_path, installed
from tests.libvirt.test_real_spare import LAB_JOIN, ready_or_failed, record_tokens
from tests.proxmox.cluster import TOKEN_ID, TOKEN_USER, PveCluster
from tests.stack import running_stack
from workflows.prepare_spare import PrepareSpare

SPARE_TAINT = Taint(key="virtflow.io/spare", value="true", effect="PreferNoSchedule")


def proxmox_site(tmp_path: Path, pve: PveCluster) -> Path:
    secret = tmp_path / "proxmox-token"
    secret.write_text(pve.token_secret)
    secret.chmod(0o600)
    site = tmp_path / "site.yaml"
    site.write_text(
        yaml.safe_dump(
            {
                "api_host": pve.api_host,
                "api_user": TOKEN_USER,
                "api_token_id": TOKEN_ID,
                "api_token_secret_file": str(secret),
                "vm_storage": "local-lvm",
                "defaults": {"pool": "general", "cpu_allocation_ratio": 4.0},
            }
        )
    )
    return site


async def test_a_spare_on_proxmox_joins_is_ready_and_leaves_nothing_behind(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pve: PveCluster,
) -> None:
    collections = collections_path()
    if not installed(collections):
        pytest.skip(f"community.proxmox is not in {collections}: run `make collections`")
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(collections))
    foreign_digest = pve.pve.vm(100).digest()
    pve.front.stats_delay = 3600  # the cluster list never names the new VM during the test
    site = proxmox_site(tmp_path, pve)

    def configure(settings: Settings) -> Settings:
        inventory = next(iter(settings.inventories))
        return settings.model_copy(
            update={
                "inventories": {inventory: f"proxmox:{site}"},
                "hypervisor": "proxmox",
                "ansible_extravars": pve.extravars(),
                "ansible_inventory": pve.ansible_inventory,
                "vm_templates": {
                    "default": VmTemplate(
                        user_data_file=LAB_JOIN,
                        labels={"node-role.kubernetes.io/spare": ""},
                        taints=[SPARE_TAINT],
                    )
                },
            }
        )

    async with running_stack(client, task_queue, tmp_path, {"hosts": []}, configure) as stack:
        store = stack.lab.kube.store
        tokens = record_tokens(store)
        req = stack.request(
            cpu=2,
            memory_mb=2048,
            pool="general",
            annotations={
                "node.qemu-scheduler/regex": "pve[23]",
                "vmid.qemu-scheduler/range": "300-399",
            },
        )
        spare_id = req.spare_id
        handle = await stack.start(req)
        await ready_or_failed(handle)

        status = await handle.query(PrepareSpare.status)
        assert status.host in ("pve2", "pve3")
        vm = next(v for v in pve.pve.vms if v.name == spare_id)
        assert (vm.node, vm.vmid, vm.status) == (status.host, 300, "running")
        assert vm.config["cicustom"] == f"user=local:snippets/{spare_id}-user.yaml"

        # The guest ran the snippet: it registered its Node with the token, and it is Ready.
        async def guest_done() -> str:
            guest = pve.front.guests.get(300)
            assert guest is not None and guest.finished, guest
            assert guest.returncode == 0, guest.output
            return guest.output

        output = await assert_eventually(guest_done, timeout=60)
        assert f"virtflow-join: Node {spare_id} is Ready" in output
        assert tokens and tokens[0] not in output
        node: Any = store.get("nodes", "", spare_id)
        assert node is not None
        assert node["metadata"]["labels"][SPARE_LABEL] == "true"
        assert SPARE_TAINT.model_dump() in node["spec"]["taints"]
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "virtflow-lab-join"
        assert store.list("secrets", NAMESPACE) == []  # the token is gone once Ready
        assert "spare.ready" in await stack.event_types(spare_id)

        # The live inventory counts the VM as virtflow's on its node.
        doc = await ProxmoxInventory(site).load()
        assert {"name": spare_id, "host": status.host, "group": None} in doc["existing_vms"]

        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
        result = await handle.result()
        assert result.phase == Phase.RELEASED
        assert "spare.released" in await stack.event_types(spare_id)

        assert store.get("nodes", "", spare_id) is None
        assert store.list("secrets", NAMESPACE) == []
        assert all(v.name != spare_id for v in pve.pve.vms)
        assert list(pve.snippets_dir.iterdir()) == []
        assert pve.pve.vm(100).digest() == foreign_digest
