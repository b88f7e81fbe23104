"""An inventory read from a Proxmox VE cluster's API: its nodes, their room, the VMs on them.

Settings name it `proxmox:/path/to/site.yaml`. The API (proxmoxer, with an API token) gives
each node's CPUs and memory (`/cluster/resources?type=node`), the VMs on it read live from
`/nodes/{node}/qemu` (the cluster list takes a stats pass, up to 10 s, to name a new VM), the
VM ids in use and the next free one (`/cluster/nextid`), and with `vm_storage` the storage that
holds VM disks. The site file adds what the API cannot know:

    api_host: pve.example.com:8006        # the API, as the playbooks' proxmox_api_host
    api_user: virtflow@pve
    api_token_id: virtflow
    api_token_secret_file: /etc/virtflow/proxmox-token   # never the secret itself
    verify_ssl: true                      # REQUESTS_CA_BUNDLE names a private CA
    vm_storage: local-lvm                 # where VM disks go: the nodes' disk capacity
    defaults: {pool: general, cpu_allocation_ratio: 4.0}
    nodes:                                # optional: nodes not listed get the defaults
      - {name: pve1, rack: r1, labels: {topology.kubernetes.io/zone: a}}

Every non-template VM counts against its node, running or not (a stopped VM starts again with
its size, as CAPMOX counts). A VM is virtflow's when it carries the tag `virtflow`; its tag
`virtflow-group.<group>` is its anti-affinity group. The tags come with the configuration, so a
VM named as a spare without them (a create stopped between the clone and the configuration) is
virtflow's when the description the clone gave it says so (`virtflow: <name>`, read from its
config). A node's disk room is what `vm_storage` has free plus what its VMs' disks hold, so
placement sees a full storage as full. A node that is offline is listed
unschedulable. Proxmox has no node tags: labels come from the site file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from contracts.spare import SPARE_ID_PREFIX
from hypervisors.site import HostFacts, SiteHost, inventory_invalid, read_site

SCHEME = "proxmox:"
VIRTFLOW_TAG = "virtflow"
GROUP_TAG_PREFIX = "virtflow-group."
# The description the create's clone gives a VM (vars/settings.yml: proxmox_description).
DESCRIPTION_PREFIX = "virtflow: "
MIB = 1024**2
GIB = 1024**3
T = TypeVar("T")


class ProxmoxSite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    api_host: str = Field(min_length=1)
    api_user: str = Field(min_length=1)
    api_token_id: str = Field(min_length=1)
    api_token_secret_file: Path
    verify_ssl: bool = True
    vm_storage: str | None = None
    timeout_seconds: float = Field(default=10.0, gt=0)
    defaults: HostFacts = Field(default_factory=HostFacts)
    nodes: list[SiteHost] = Field(default_factory=list)

    def facts(self, node: str) -> dict[str, Any]:
        """The site's facts of a node: its own entry over the defaults."""
        facts = self.defaults.model_dump(exclude_unset=True)
        for entry in self.nodes:
            if entry.name == node:
                facts.update(entry.model_dump(exclude_unset=True, exclude={"name"}))
        return facts


def _tags(value: Any) -> list[str]:
    return [t for t in str(value or "").replace(",", ";").split(";") if t]


def _group(tags: list[str]) -> str | None:
    return next(
        (t.removeprefix(GROUP_TAG_PREFIX) for t in tags if t.startswith(GROUP_TAG_PREFIX)), None
    )


class ProxmoxInventory:
    """The placement JSON form of a Proxmox cluster, read live on every load."""

    def __init__(self, site_file: Path) -> None:
        self.site_file = site_file
        self.where = f"{SCHEME}{site_file}"

    async def load(self) -> dict[str, Any]:
        site = read_site(self.site_file, ProxmoxSite, self.where)
        return await asyncio.to_thread(self._read, site)

    def _api(self, site: ProxmoxSite) -> Any:
        try:
            from proxmoxer import ProxmoxAPI
        except ImportError:
            raise ApplicationError(
                "inventory proxmox: the Python module 'proxmoxer' is missing: install it into "
                "the worker's environment (pip install proxmoxer)",
                type=Failure.INVENTORY_MISCONFIGURED,
                non_retryable=True,
            ) from None
        try:
            secret = site.api_token_secret_file.read_text().strip()
        except OSError as err:
            raise inventory_invalid(
                self.where, f"api_token_secret_file: {err.strerror or err}"
            ) from None
        # proxmoxer takes the port from "host:port" itself (8006 when there is none).
        return ProxmoxAPI(
            site.api_host,
            user=site.api_user,
            token_name=site.api_token_id,
            token_value=secret,
            verify_ssl=site.verify_ssl,
            timeout=site.timeout_seconds,
        )

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """One API call; refused credentials will not heal, anything else may."""
        from proxmoxer import AuthenticationError, ResourceException

        try:
            return call()
        except ResourceException as err:
            if err.status_code in (401, 403):
                raise inventory_invalid(
                    self.where, f"{what}: the API refused the token: {err}"
                ) from None
            raise ApplicationError(
                f"inventory {self.where}: {what}: {err}", type=Failure.INVENTORY_UNAVAILABLE
            ) from None
        except AuthenticationError as err:
            raise inventory_invalid(self.where, f"{what}: {err}") from None
        except Exception as err:  # requests' connection errors and timeouts
            raise ApplicationError(
                f"inventory {self.where}: {what}: the API does not answer: {err}",
                type=Failure.INVENTORY_UNAVAILABLE,
            ) from None

    def _read(self, site: ProxmoxSite) -> dict[str, Any]:
        api = self._api(site)
        nodes = self._call("GET /cluster/resources", lambda: api.cluster.resources.get(type="node"))
        vms = self._call("GET /cluster/resources", lambda: api.cluster.resources.get(type="vm"))
        next_vmid = int(self._call("GET /cluster/nextid", lambda: api.cluster.nextid.get()))
        hosts: list[dict[str, Any]] = []
        existing: list[dict[str, Any]] = []
        for node in sorted(nodes, key=lambda n: str(n["node"])):
            host, ours = self._node(api, site, node)
            hosts.append(host)
            existing += ours
        return {
            "hosts": hosts,
            "existing_vms": existing,
            "used_vmids": sorted({int(vm["vmid"]) for vm in vms}),
            "next_vmid": next_vmid,
        }

    def _node(
        self, api: Any, site: ProxmoxSite, node: dict[str, Any]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """One node in the placement form, and virtflow's VMs on it."""
        name = str(node["node"])
        host: dict[str, Any] = {
            "name": name,
            "cpu_capacity": int(node.get("maxcpu") or 0),
            "memory_mb_capacity": int(node.get("maxmem") or 0) // MIB,
            **site.facts(name),
        }
        if node.get("status") != "online":
            # Nothing can be created there until it is back: say so, do not guess its load.
            host["unschedulable"] = True
            return host, []
        # Live on the node: the cluster list names a new VM only after a stats pass.
        listed = self._call(f"GET /nodes/{name}/qemu", lambda: api.nodes(name).qemu.get())
        guests = [vm for vm in listed if not vm.get("template")]
        host["cpu_allocated"] = sum(int(vm.get("cpus") or 0) for vm in guests)
        host["memory_mb_allocated"] = sum(int(vm.get("maxmem") or 0) for vm in guests) // MIB
        host["vm_count"] = len(guests)
        if site.vm_storage is not None and "disk_gb_capacity" not in host:
            storage = self._storage(api, name, site.vm_storage)
            allocated = sum(int(vm.get("maxdisk") or 0) for vm in guests)
            # Free room, not the total: whatever else fills the storage (other nodes' disks on a
            # shared one, backups, images) leaves placement only what is free.
            host["disk_gb_capacity"] = (allocated + int(storage.get("avail") or 0)) // GIB
            host["disk_gb_allocated"] = allocated // GIB
        ours = []
        for vm in guests:
            tags = _tags(vm.get("tags"))
            if VIRTFLOW_TAG in tags or self._cloned_by_virtflow(api, name, vm):
                groups = [
                    t.removeprefix(GROUP_TAG_PREFIX) for t in tags if t.startswith(GROUP_TAG_PREFIX)
                ]
                ours.append(
                    {
                        "name": str(vm.get("name", "")),
                        "host": name,
                        "group": next(iter(groups), None),
                    }
                )
        return host, ours

    def _cloned_by_virtflow(self, api: Any, node: str, vm: dict[str, Any]) -> bool:
        """An untagged VM named as a spare whose clone described it as virtflow's."""
        vm_name = str(vm.get("name", ""))
        if not vm_name.startswith(SPARE_ID_PREFIX):
            return False
        vmid = int(vm["vmid"])
        config = self._call(
            f"GET /nodes/{node}/qemu/{vmid}/config",
            lambda: api.nodes(node).qemu(vmid).config.get(),
        )
        description = str(config.get("description") or "")
        return description.strip() == f"{DESCRIPTION_PREFIX}{vm_name}"

    def _storage(self, api: Any, node: str, storage: str) -> dict[str, Any]:
        listed = self._call(f"GET /nodes/{node}/storage", lambda: api.nodes(node).storage.get())
        for entry in listed:
            if entry.get("storage") == storage:
                return dict(entry)
        raise inventory_invalid(self.where, f"vm_storage: node {node} has no storage '{storage}'")
