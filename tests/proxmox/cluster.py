"""A Proxmox VE cluster of three nodes for the tests: fakepve behind the lab's front.

fakepve (AGPL-3.0-or-later, the `test` extra) is a test-time server only: imported here, in the
tests, never by virtflow. It runs with the lab front (lab/pve_front.py: the stats delay and the
guest) on an event loop of their own in a thread, so a test may call the API synchronously. The
front serves https with the lab CA; clients trust it through REQUESTS_CA_BUNDLE.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lab.kube_tls import make_certificates
from lab.pve_front import PveFront

T = TypeVar("T")

NODES = ("pve1", "pve2", "pve3")
TEMPLATE = "debian-12-cloud"
# One template per node, the same name on each (clones are node-local).
TEMPLATES = {"pve1": 9001, "pve2": 9002, "pve3": 9003}
TOKEN_USER = "virtflow@pve"
TOKEN_ID = "virtflow"
# What virtflow's token needs (docs: hypervisors/proxmox/README.md).
PRIVILEGES = (
    "VM.Audit",
    "VM.Allocate",
    "VM.Clone",
    "VM.Config.CDROM",
    "VM.Config.CPU",
    "VM.Config.Cloudinit",
    "VM.Config.Disk",
    "VM.Config.HWType",
    "VM.Config.Memory",
    "VM.Config.Network",
    "VM.Config.Options",
    "VM.PowerMgmt",
    "Datastore.Audit",
    "Datastore.AllocateSpace",
    "Sys.Audit",
    "SDN.Use",
    "Mapping.Use",
)
GIB = 1024**3
LOCAL = {
    "ansible_connection": "local",
    "ansible_python_interpreter": "{{ ansible_playbook_python }}",
}


@dataclass
class PveCluster:
    pve: Any  # fakepve.FakePve
    front: PveFront
    token_secret: str
    ca_file: Path
    snippets_dir: Path
    loop: asyncio.AbstractEventLoop

    ansible_inventory: Path

    @property
    def api_host(self) -> str:
        return self.front.api_host

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run on the cluster's loop (fakepve's state is that loop's)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def extravars(self, **overrides: str) -> dict[str, str]:
        """The Proxmox playbook settings for this cluster."""
        return {
            "proxmox_api_host": self.api_host,
            "proxmox_api_user": TOKEN_USER,
            "proxmox_api_token_id": TOKEN_ID,
            "proxmox_api_token_secret": self.token_secret,
            "proxmox_template": TEMPLATE,
            "proxmox_snippets_storage": "local",
            "proxmox_snippets_dir": str(self.snippets_dir),
            "proxmox_timeout": "30",
            **overrides,
        }


def _seed(pve: Any) -> None:
    for node in NODES:
        pve.add_node(node)
    pve.storages["local"]["content"] = "iso,vztmpl,backup,snippets"
    pve.storages["local-lvm"]["avail"] = 400 * GIB
    pve.storages["local-lvm"]["total"] = 500 * GIB
    for node, vmid in TEMPLATES.items():
        pve.add_vm(
            vmid,
            TEMPLATE,
            node=node,
            template=True,
            config={
                "template": 1,
                "cores": 1,
                "memory": 1024,
                "scsi0": f"local-lvm:base-{vmid}-disk-0,size=4G",
                "ide2": f"local-lvm:vm-{vmid}-cloudinit,media=cdrom",
                "net0": "virtio=BC:24:11:00:90:01,bridge=vmbr0",
                "boot": "order=scsi0",
            },
        )
    # Someone else's VM, there before virtflow: never touched.
    pve.add_vm(
        100,
        "db-01",
        node="pve1",
        status="running",
        config={
            "cores": 4,
            "memory": 8192,
            "net0": "virtio=BC:24:11:00:01:00,bridge=vmbr0",
            "scsi0": "local-lvm:vm-100-disk-0,size=32G",
            "tags": "prod",
        },
    )


class _Thread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="pve", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def start_cluster(state: Path) -> tuple[PveCluster, _Thread]:
    import fakepve
    from fakepve.certs import make_cert

    thread = _Thread()
    pki = state / "fakepve-pki"
    pki.mkdir(parents=True)
    cert, key, _ = make_cert(str(pki), hosts=("127.0.0.1",))
    pve = fakepve.FakePve(user="root@pam", password=secrets.token_hex(16), host="127.0.0.1", port=0)
    pve.time_scale = 0
    secret = secrets.token_hex(16)
    pve.apitokens[f"{TOKEN_USER}!{TOKEN_ID}"] = secret
    pve.grant(TOKEN_USER, "/", *PRIVILEGES)
    _seed(pve)
    snippets = state / "snippets"
    snippets.mkdir()
    front = PveFront(
        upstream="",
        upstream_ca=Path(cert),
        certificates=make_certificates(),
        state_dir=state / "front",
        snippets_dirs={"local": snippets},
    )

    async def up() -> None:
        await pve.start(cert, key)
        front.upstream = pve.url
        await front.start()

    thread.run(up())
    ca = state / "lab-ca.pem"
    ca.write_bytes(front.certificates.ca_pem)
    # The nodes' files are this machine's: the snippet tasks delegated to them run locally.
    inventory = state / "hosts.yaml"
    inventory.write_text(json.dumps({"pve_nodes": {"hosts": {n: LOCAL for n in NODES}}}))
    cluster = PveCluster(pve, front, secret, ca, snippets, thread.loop, inventory)
    return cluster, thread


def stop_cluster(cluster: PveCluster, thread: _Thread) -> None:
    async def down() -> None:
        await cluster.front.stop()
        await cluster.pve.stop()

    try:
        thread.run(down())
    finally:
        thread.stop()
