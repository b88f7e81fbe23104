"""One spare end to end on the real hypervisor path, reached the way a site reaches its
libvirt hosts: over SSH. libvirt, qemu (TCG), the guest image, cloud-init, qemu's user-mode
network, a bootstrap token.

The host is named `127.0.0.1` and reached through the session's sshd (tests/libvirt/sshd.py):
libvirt with `qemu+ssh://root@{host}/system`, the playbook's tasks delegated to the host with
Ansible's ssh connection (the worker's `ansible_inventory`). Placement reads the live libvirt
inventory over SSH; the create activity makes a bootstrap token and renders the site
template's user data; the playbook builds the overlay disk and the NoCloud seed on the host
and boots the domain; cloud-init runs the lab's join script, which registers the Node with the
lab API over 10.0.2.2 using the token and reports it Ready; virtflow applies the spare's labels
and the template's taint and deletes the token; `spare.ready` is delivered; release cordons,
drains, deletes the Node and destroys the domain. Afterwards nothing of the spare is left: no
domain, disk, seed, console log, Node or token.

The one real boot of `make test` (a few minutes under TCG on a busy machine): every wait is
for an event (a phase, a webhook), bounded generously.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from temporalio.client import Client, WorkflowHandle

from activities.bootstrap_tokens import NAMESPACE, SECRET_TYPE
from activities.vm_join import cluster_endpoint
from contracts.spare import SPARE_LABEL, Phase, ReleaseRequest
from lab.guest_image import GuestImage
from lab.kube_store import KubeStore
from placement.models import Taint
from runtime.settings import Settings
from runtime.vm_templates import VmTemplate
from tests.conftest import SECRET_SCAN
from tests.helpers import assert_eventually
from tests.libvirt.sshd import HOST, LoopbackSshd
from tests.stack import running_stack
from workflows.prepare_spare import PrepareSpare

pytestmark = [pytest.mark.libvirt, pytest.mark.slow]

LAB_JOIN = Path(__file__).resolve().parents[2] / "lab" / "cloud-init" / "lab-join.yaml.j2"
# A TCG boot takes about a minute on an idle machine and several on a busy one.
BOOT_WITHIN_SECONDS = 1500
SPARE_TAINT = Taint(key="virtflow.io/spare", value="true", effect="PreferNoSchedule")


def site_file(tmp_path: Path, uri_template: str) -> Path:
    site = tmp_path / "site.yaml"
    site.write_text(
        yaml.safe_dump(
            {
                "uri_template": uri_template,
                "hosts": [
                    {
                        "name": HOST,
                        "pool": "general",
                        "rack": "r1",
                        "cpu_allocation_ratio": 4.0,
                    }
                ],
            }
        )
    )
    return site


def real_site(
    settings: Settings,
    tmp_path: Path,
    ssh: LoopbackSshd,
    image: GuestImage,
    images: Path,
    port: int | None,
) -> Settings:
    """The worker's settings for a site of one libvirt host (this machine, over SSH)."""
    inventory = next(iter(settings.inventories))
    hosts = tmp_path / "ansible-inventory.yaml"
    hosts.write_text(yaml.safe_dump(ssh.inventory()))
    return settings.model_copy(
        update={
            "inventories": {inventory: f"libvirt:{site_file(tmp_path, ssh.libvirt_uri_template)}"},
            "hypervisor": "libvirt",
            "ansible_inventory": hosts,
            "ansible_extravars": {
                "libvirt_uri_template": ssh.libvirt_uri_template,
                "libvirt_hosts": HOST,
                "libvirt_domain_type": "qemu",
                "libvirt_interface_type": "user",
                "libvirt_ip_wait_seconds": "0",
                "libvirt_image_dir": str(images),
                "libvirt_kernel": str(image.kernel),
                "libvirt_initrd": str(image.initrd),
                "libvirt_cmdline": image.cmdline,
                "libvirt_console_log": "true",
            },
            "vm_templates": {
                "default": VmTemplate(
                    image=str(image.root),
                    user_data_file=LAB_JOIN,
                    api_server=f"https://10.0.2.2:{port}",
                    labels={"node-role.kubernetes.io/spare": ""},
                    taints=[SPARE_TAINT],
                    token_ttl_seconds=BOOT_WITHIN_SECONDS + 600,
                )
            },
        }
    )


def record_tokens(store: KubeStore) -> list[str]:
    """Every bootstrap token the run makes, also added to the session's secret scan."""
    tokens: list[str] = []
    create = store.create

    def recording(resource: str, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        if resource == "secrets" and obj.get("type") == SECRET_TYPE:
            data = obj.get("stringData") or {}
            token = f"{data.get('token-id')}.{data.get('token-secret')}"
            SECRET_SCAN.add(f"bootstrap token {data.get('token-id')}", token)
            tokens.append(token)
        return create(resource, namespace, obj)

    store.create = recording  # type: ignore[method-assign]
    return tokens


def remove_domain(uri: str, name: str) -> None:
    """After a failed run: the VM must not outlive the test (a passing run has removed it)."""
    import libvirt

    conn = libvirt.open(uri)
    try:
        domain = conn.lookupByName(name)
        if domain.isActive():
            domain.destroy()
        domain.undefine()
    except libvirt.libvirtError:
        pass  # no such domain: nothing to remove
    finally:
        conn.close()


async def ready_or_failed(handle: WorkflowHandle[Any, Any]) -> None:
    """Wait for Ready; a spare that failed on the way says why at once."""

    async def settled() -> None:
        status = await handle.query(PrepareSpare.status)
        if status.phase in (Phase.COMPENSATING, Phase.FAILED, Phase.CANCELLED):
            pytest.fail(f"the spare failed: {status.error}")
        assert status.phase == Phase.READY, f"{status.phase}: {status.waiting_for}"

    await assert_eventually(settled, timeout=BOOT_WITHIN_SECONDS + 600, interval=1.0)


async def test_a_real_vm_boots_joins_as_a_ready_node_and_goes_away(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    libvirt_uri: str,
    libvirt_collections: Path,
    guest_image: GuestImage,
    loopback_ssh: LoopbackSshd,
) -> None:
    import libvirt

    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    started = time.monotonic()
    images = tmp_path / "images"
    images.mkdir()

    def configure(settings: Settings) -> Settings:
        # The guest reaches the host's loopback, where the lab API listens, at 10.0.2.2.
        port = urlsplit(cluster_endpoint(settings.kubeconfig).server).port
        return real_site(settings, tmp_path, loopback_ssh, guest_image, images, port)

    async with running_stack(client, task_queue, tmp_path, {"hosts": []}, configure) as stack:
        store = stack.lab.kube.store
        tokens = record_tokens(store)
        req = stack.request(
            cpu=1,
            memory_mb=512,
            pool="general",
            create_timeout_seconds=600,
            ready_timeout_seconds=BOOT_WITHIN_SECONDS,
        )
        spare_id = req.spare_id
        request.addfinalizer(lambda: remove_domain(libvirt_uri, spare_id))
        handle = await stack.start(req)
        await ready_or_failed(handle)
        ready_after = time.monotonic() - started

        status = await handle.query(PrepareSpare.status)
        assert status.host == HOST
        # Both went over SSH to the host: libvirt (its helper on the far side) and Ansible
        # (the disk and seed of this spare, one shell command on the host).
        calls = loopback_ssh.calls()
        assert any("virt-ssh-helper" in call for call in calls), calls
        assert any(
            HOST in call and f"libvirt-prepare {images} {spare_id} " in call for call in calls
        ), calls
        node = store.get("nodes", "", spare_id)
        assert node is not None
        labels = node["metadata"]["labels"]
        assert labels[SPARE_LABEL] == "true"
        assert labels["virtflow.io/spare-id"] == spare_id
        assert "node-role.kubernetes.io/spare" in labels
        assert SPARE_TAINT.model_dump() in node["spec"]["taints"]
        # Registered by the guest itself: its kernel, its address on qemu's user network.
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "virtflow-lab-join"
        assert {"type": "InternalIP", "address": "10.0.2.15"} in node["status"]["addresses"]
        # The token was used and is gone once the Node is Ready.
        assert len(tokens) == 1
        assert store.list("secrets", NAMESPACE) == []
        console = (images / f"{spare_id}-console.log").read_text(errors="replace")
        assert f"virtflow-join: Node {spare_id} is Ready" in console
        assert tokens[0] not in console
        assert "spare.ready" in await stack.event_types(spare_id)
        # The live inventory sees the running domain as virtflow's.
        conn = libvirt.open(libvirt_uri)
        try:
            assert conn.lookupByName(spare_id).isActive()
        finally:
            conn.close()

        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
        result = await handle.result()
        assert result.phase == Phase.RELEASED
        assert "spare.released" in await stack.event_types(spare_id)

        assert store.get("nodes", "", spare_id) is None
        assert store.list("secrets", NAMESPACE) == []
        conn = libvirt.open(libvirt_uri)
        try:
            assert spare_id not in [d.name() for d in conn.listAllDomains()]
        finally:
            conn.close()
        assert sorted(p.name for p in images.iterdir()) == []
    print(
        f"\nreal spare: Ready {ready_after:.0f} s after the request, "
        f"released {time.monotonic() - started:.0f} s after it"
    )
