"""The lab hypervisor: an HTTP service that holds simulated VMs on the inventory's hosts.

The lab playbook (`hypervisors/lab/*.yml`) drives it exactly as the libvirt or Proxmox
tasks drive a real hypervisor. It refuses to over-commit a host (effective capacity =
capacity * allocation ratio, floored), so tests can prove that concurrent spares never do.
`GET /inventory` serves the PLACEMENT.md JSON form with the lab VMs counted in.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import json
import logging
import math
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from contracts.vm import VmSpec
from webhooks.serve import EmbeddedServer

log = logging.getLogger(__name__)

# Simulated VMs are records, never reached: their addresses come from the range set aside for
# benchmarks (RFC 2544, 198.18.0.0/15), not from a private range a site may route.
LAB_NETWORK = ipaddress.ip_network("198.18.0.0/16")
FIRST_VMID = 100
RESOURCES = (("cpu", "cpu"), ("memory_mb", "memory_mb"), ("gpu", "gpu"))


class LabVm(VmSpec):
    """A lab VM: the spec it was created from, and what the lab gave it."""

    vmid: int
    ip: str
    mac: str
    created_at: datetime


class LabHypervisorError(Exception):
    """A refused request: an HTTP status and a stable error keyword, with the numbers."""

    def __init__(self, status: int, error: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": error, "message": message, **details}


def load_inventory_file(path: Path) -> dict[str, Any]:
    """Read an inventory in the PLACEMENT.md JSON form from a YAML or JSON file."""
    data = yaml.safe_load(path.read_text())  # YAML is a superset of JSON
    if not isinstance(data, dict) or not isinstance(data.get("hosts"), list):
        raise ValueError(f"{path}: an inventory is a mapping with a 'hosts' list")
    return data


def effective_capacity(host: dict[str, Any], resource: str) -> int:
    capacity = int(host.get(f"{resource}_capacity", 0))
    if resource == "gpu":  # GPUs are never overcommitted
        return capacity
    # An absent ratio means no overcommit here: the lab does not know the placement policy.
    ratio = host.get(f"{resource}_allocation_ratio")
    return math.floor(capacity * float(1.0 if ratio is None else ratio))


def mac_for(name: str) -> str:
    """Deterministic, locally administered (QEMU prefix) MAC address from the VM name."""
    digest = hashlib.sha256(name.encode()).digest()
    return "52:54:00:" + ":".join(f"{b:02x}" for b in digest[:3])


class LabHypervisor:
    def __init__(
        self,
        hosts: list[dict[str, Any]],
        state_file: Path | None = None,
        on_start: Callable[[LabVm], Awaitable[None]] | None = None,
        on_stop: Callable[[str], Awaitable[None]] | None = None,
        *,
        existing_vms: list[dict[str, Any]] | None = None,
        used_vmids: list[int] | None = None,
        next_vmid: int | None = None,
    ) -> None:
        self.hosts = {h["name"]: dict(h) for h in hosts}
        self.state_file = state_file
        self.on_start = on_start
        self.on_stop = on_stop
        self.base_existing_vms = list(existing_vms or [])
        self.base_used_vmids = set(used_vmids or [])
        self.base_next_vmid = max(FIRST_VMID, next_vmid or FIRST_VMID)
        self.create_delay = 0.0
        # Cleared by hold_creates(): answers to creates wait (the VM already recorded) until
        # release_creates(), so a test can act while a playbook is surely in flight.
        self._creates_open = asyncio.Event()
        self._creates_open.set()
        self._failure: tuple[str, bool] | None = None
        # Every create refused for lack of room: tests prove nothing ever tried to over-commit.
        self.overcommit_refusals: list[str] = []
        # Every VM really created (not found by name), in order: a name twice is a duplicate.
        self.created: list[str] = []
        self._vms: dict[str, LabVm] = self._load_state()
        self._server: EmbeddedServer | None = None
        self._closing = asyncio.Event()
        self.url = ""

    @classmethod
    def from_file(cls, path: Path, **kwargs: Any) -> LabHypervisor:
        data = load_inventory_file(path)
        return cls(
            data["hosts"],
            existing_vms=data.get("existing_vms"),
            used_vmids=data.get("used_vmids"),
            next_vmid=data.get("next_vmid"),
            **kwargs,
        )

    # ----- Python API (tests and the dev command) -----

    @property
    def vms(self) -> dict[str, LabVm]:
        return dict(self._vms)

    def fail_next_create(self, message: str, transient: bool = False) -> None:
        """The next `POST /vms` answers 500 (transient) or 422 (permanent) with `message`."""
        self._failure = (message, transient)

    async def create_vm(self, spec: VmSpec | Mapping[str, Any]) -> tuple[LabVm, bool]:
        """Create the VM, or return the existing one of that name; True when created."""
        request = spec if isinstance(spec, VmSpec) else VmSpec.model_validate(spec)
        if self._failure is not None:
            message, transient = self._failure
            self._failure = None
            raise LabHypervisorError(500 if transient else 422, "create_failed", message)
        existing = self._vms.get(request.name)
        if existing is not None:
            return existing, False
        # Check and insert without an await in between: concurrent requests cannot both fit.
        vm = self._admit(request)
        self._vms[vm.name] = vm
        self.created.append(vm.name)
        self._save_state()
        if self.create_delay > 0:
            # Cut short by stop(), so a test's long delay never holds the shutdown.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.create_delay)
        if not self._creates_open.is_set():
            closing = asyncio.ensure_future(self._closing.wait())
            opened = asyncio.ensure_future(self._creates_open.wait())
            await asyncio.wait({closing, opened}, return_when=asyncio.FIRST_COMPLETED)
            closing.cancel()
            opened.cancel()
        if self.on_start is not None and self._vms.get(vm.name) is vm:
            # Destroyed while the answer waited: a deleted VM does not boot.
            await self.on_start(vm)
        return vm, True

    def hold_creates(self) -> None:
        """Answer no create (a new VM is still recorded) until `release_creates`."""
        self._creates_open.clear()

    def release_creates(self) -> None:
        self._creates_open.set()

    async def destroy_vm(self, name: str) -> bool:
        if self._vms.pop(name, None) is None:
            return False
        self._save_state()
        if self.on_stop is not None:
            await self.on_stop(name)
        return True

    def inventory(self) -> dict[str, Any]:
        """The PLACEMENT.md JSON form (no request, no policy) with the lab VMs counted in."""
        # One pass over the VMs, not one per host: the benchmark holds hundreds of them.
        on_host: dict[str, list[LabVm]] = {}
        for vm in self._vms.values():
            on_host.setdefault(vm.host, []).append(vm)
        hosts = []
        for name, base in self.hosts.items():
            host = dict(base)
            vms = on_host.get(name, [])
            for resource, field in RESOURCES:
                used = sum(getattr(vm, field) for vm in vms)
                host[f"{resource}_allocated"] = int(base.get(f"{resource}_allocated", 0)) + used
            host["vm_count"] = int(base.get("vm_count", 0)) + len(vms)
            hosts.append(host)
        existing = self.base_existing_vms + [
            {"name": vm.name, "host": vm.host, "group": vm.anti_affinity_group}
            for vm in self._vms.values()
        ]
        return {
            "hosts": hosts,
            "existing_vms": existing,
            "used_vmids": sorted(self._used_vmids()),
            "next_vmid": self._next_vmid(),
        }

    # ----- admission -----

    def _used_vmids(self) -> set[int]:
        return self.base_used_vmids | {vm.vmid for vm in self._vms.values()}

    def _next_vmid(self) -> int:
        used, vmid = self._used_vmids(), self.base_next_vmid
        while vmid in used:
            vmid += 1
        return vmid

    def _admit(self, request: VmSpec) -> LabVm:
        host = self.hosts.get(request.host)
        if host is None:
            raise LabHypervisorError(404, "unknown_host", f"no host named {request.host!r}")
        allocated = self.inventory()["hosts"]
        current = next(h for h in allocated if h["name"] == request.host)
        for resource, field in RESOURCES:
            requested = getattr(request, field)
            used, capacity = current[f"{resource}_allocated"], effective_capacity(host, resource)
            if requested > 0 and used + requested > capacity:
                self.overcommit_refusals.append(f"{request.name} on {request.host}")
                raise LabHypervisorError(
                    409,
                    f"insufficient_{resource}",
                    f"insufficient_{resource}: host {request.host} has {capacity - used} of "
                    f"{capacity} {resource} free, {requested} requested",
                    requested=requested,
                    used=used,
                    capacity=capacity,
                )
        if request.vmid is not None and request.vmid in self._used_vmids():
            raise LabHypervisorError(
                409, "vmid_in_use", f"vmid_in_use: vmid {request.vmid} is taken", vmid=request.vmid
            )
        fields = request.model_dump(exclude={"vmid"})
        return LabVm(
            **fields,
            vmid=request.vmid if request.vmid is not None else self._next_vmid(),
            ip=self._ip_for(request.name),
            mac=mac_for(request.name),
            created_at=datetime.now(UTC),
        )

    def _ip_for(self, name: str) -> str:
        """Deterministic from the name, probing past addresses already taken."""
        taken = {vm.ip for vm in self._vms.values()}
        size = LAB_NETWORK.num_addresses - 2 * 256  # skip the first and the last /24
        start = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % size
        for step in range(size):
            address = LAB_NETWORK[256 + (start + step) % size]
            if address.packed[-1] not in (0, 255) and str(address) not in taken:
                return str(address)
        raise LabHypervisorError(409, "no_ip_available", f"no_ip_available: {LAB_NETWORK} is full")

    # ----- state file -----

    def _load_state(self) -> dict[str, LabVm]:
        if self.state_file is None or not self.state_file.exists():
            return {}
        raw = json.loads(self.state_file.read_text())
        vms = [LabVm.model_validate(vm) for vm in raw.get("vms", [])]
        return {vm.name: vm for vm in vms}

    def _save_state(self) -> None:
        if self.state_file is None:
            return
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        body = {"vms": [vm.model_dump(mode="json") for vm in self._vms.values()]}
        # Write aside then rename: a crash mid-write never leaves a torn state file.
        fd, tmp = tempfile.mkstemp(dir=self.state_file.parent, prefix=".hypervisor-")
        with os.fdopen(fd, "w") as out:
            json.dump(body, out, indent=2)
        os.replace(tmp, self.state_file)

    # ----- HTTP -----

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/inventory", self._get_inventory, methods=["GET"]),
                Route("/vms", self._list_vms, methods=["GET"]),
                Route("/vms", self._post_vm, methods=["POST"]),
                Route("/vms/{name}", self._get_vm, methods=["GET"]),
                Route("/vms/{name}", self._delete_vm, methods=["DELETE"]),
            ]
        )

    async def _get_inventory(self, request: Request) -> JSONResponse:
        return JSONResponse(self.inventory())

    async def _list_vms(self, request: Request) -> JSONResponse:
        return JSONResponse([vm.model_dump(mode="json") for vm in self._vms.values()])

    async def _get_vm(self, request: Request) -> JSONResponse:
        vm = self._vms.get(request.path_params["name"])
        if vm is None:
            return JSONResponse({"error": "not_found", "message": "no such VM"}, status_code=404)
        return JSONResponse(vm.model_dump(mode="json"))

    async def _post_vm(self, request: Request) -> JSONResponse:
        try:
            spec = VmSpec.model_validate_json(await request.body())
        except ValidationError as err:
            message = f"invalid VM spec: {err.errors(include_url=False)}"
            return JSONResponse({"error": "invalid_spec", "message": message}, status_code=422)
        try:
            vm, created = await self.create_vm(spec)
        except LabHypervisorError as err:
            return JSONResponse(err.body, status_code=err.status)
        return JSONResponse(vm.model_dump(mode="json"), status_code=201 if created else 200)

    async def _delete_vm(self, request: Request) -> JSONResponse:
        return JSONResponse({"deleted": await self.destroy_vm(request.path_params["name"])})

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve in the current loop; VMs from the state file boot again (on_start)."""
        self._closing.clear()
        server = EmbeddedServer(
            self.app(), host, port, name="the lab hypervisor", timeout_graceful_shutdown=2
        )
        self.url = await server.start()
        self._server = server
        if self.on_start is not None:
            for vm in list(self._vms.values()):
                await self.on_start(vm)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._closing.set()
        await self._server.stop()
        self._server = None
