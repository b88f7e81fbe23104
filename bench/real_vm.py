"""What virtflow adds to a real VM's boot: a few spares in a row on the real hypervisor path.

For each spare: the time from `POST /spare/prepare` to the `spare.ready` webhook, beside the
guest's own time from power-on to its Node registering (the kernel's uptime on the join
script's console line) and, after the spare is released, the same domain (its XML, a fresh
overlay disk and a seed with a fresh token) started with plain `virsh create`, timed until
its Node is Ready in the lab API. The difference is virtflow's share: placement from the live
libvirt inventory, the token, the playbook (overlay, seed, define, start), the readiness watch
and the webhook.

    sudo .venv/bin/python bench/real_vm.py [--spares 3] [--ssh]

With `--ssh` virtflow reaches the host as a site does: named `127.0.0.1`, over an sshd on
loopback (tests/libvirt/sshd.py), libvirt with `qemu+ssh://` and the playbook's host tasks
with Ansible's ssh connection. Plain `virsh` stays local either way.

Where virtflow's share goes is printed per spare as well: each activity of the spare's
workflow (from its history: scheduled -> started -> completed, relative to the POST) and each
task of each playbook run (the provisioner's debug line, from ansible-runner's event times).

The share above leans on the guest's own clock, which under TCG on a loaded machine lags the
host's by seconds, more the longer the boot. So each spare also gets virtflow's own seconds,
on the host's clock alone: from the POST to the domain's qemu process starting (its start time
in /proc), and from the lab API storing the Node as Ready to the receiver storing
`spare.ready` (the receiver's own `received_at`); beside them plain `virsh create` to its qemu
process starting. What lies between is the guest's boot and join, the same for both.

Needs what `make test-libvirt` needs (root, libvirt, the guest image, the collections).
Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from statistics import median
from typing import Any

import httpx
import yaml
from lightkube import AsyncClient, KubeConfig
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from activities.bootstrap_tokens import create_token  # noqa: E402
from activities.vm_join import cluster_endpoint  # noqa: E402
from api.app import create_app  # noqa: E402
from cli.dev import TemporalDevServer, free_ports  # noqa: E402
from contracts.warm import (  # noqa: E402
    POOL_QUERY,
    WarmPoolSpec,
    WarmPoolView,
    warm_pool_workflow_id,
)
from lab.guest_image import build  # noqa: E402
from lab.stack import LabStack  # noqa: E402
from runtime.receivers import ReceiverConfig  # noqa: E402
from runtime.settings import Settings  # noqa: E402
from runtime.vm_templates import VmTemplate, render_user_data  # noqa: E402
from tests.libvirt.sshd import HOST, LoopbackSshd, loopback_sshd  # noqa: E402
from webhooks.receiver import create_receiver_app  # noqa: E402
from webhooks.serve import serve_app  # noqa: E402
from webhooks.signing import generate_secret  # noqa: E402
from worker.schedules import apply_warm_pools  # noqa: E402
from worker.worker import running_worker  # noqa: E402

URI = "qemu:///system"
LAB_JOIN = REPO / "lab" / "cloud-init" / "lab-join.yaml.j2"
COLLECTIONS = REPO / ".virtflow" / "collections"
JOINED = re.compile(rb"\[\s*([0-9.]+)\].*virtflow-join: registered Node")
WAIT_SECONDS = 1800.0
WARM_SHAPE = {"cpu": 1, "memory_mb": 512, "pool": "general"}


async def until(check: Any, timeout: float = WAIT_SECONDS, every: float = 0.5) -> Any:
    """Poll `check` (sync or async) until it answers something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(every)
    raise TimeoutError("waited too long")


def qemu_started(name: str) -> float:
    """When the domain's qemu process started (wall clock), from its start time in /proc."""
    pid = Path(f"/run/libvirt/qemu/{name}.pid").read_text().strip()
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    since_boot = ticks / os.sysconf("SC_CLK_TCK")
    return time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)


class NodeClock:
    """When the lab API first stored each Node as Ready (wall clock), from its own watch feed."""

    def __init__(self, lab: LabStack) -> None:
        self.ready: dict[str, float] = {}
        self._sub = lab.kube.store.subscribe("nodes")

    async def run(self) -> None:
        while (event := await self._sub.queue.get()) is not None:
            obj = event.obj
            conditions = obj.get("status", {}).get("conditions", [])
            if any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
                self.ready.setdefault(obj["metadata"]["name"], time.time())


def guest_join_uptime(console: Path) -> float | None:
    found = JOINED.search(console.read_bytes()) if console.exists() else None
    return float(found.group(1)) if found else None


def site_settings(
    base: Settings, state: Path, images: Path, kube_port: int, ssh: LoopbackSshd | None
) -> Settings:
    image = build()
    host, uri = ("localhost", URI) if ssh is None else (HOST, ssh.libvirt_uri_template)
    inventory = None
    if ssh is not None:
        inventory = state / "ansible-inventory.yaml"
        inventory.write_text(yaml.safe_dump(ssh.inventory()))
    site = state / "site.yaml"
    site.write_text(
        yaml.safe_dump(
            {
                "hosts": [
                    {
                        "name": host,
                        "uri": uri.replace("{host}", host),
                        "pool": "general",
                        "rack": "r1",
                        "cpu_allocation_ratio": 4.0,
                    }
                ]
            }
        )
    )
    return base.model_copy(
        update={
            "inventories": {"default": f"libvirt:{site}"},
            "hypervisor": "libvirt",
            "ansible_inventory": inventory,
            "ansible_extravars": {
                "libvirt_uri_template": uri,
                "libvirt_hosts": host,
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
                    api_server=f"https://10.0.2.2:{kube_port}",
                    token_ttl_seconds=int(WAIT_SECONDS),
                )
            },
        }
    )


class PlaybookTimes(logging.Handler):
    """Collects the provisioner's per-task seconds (provisioners/task_clock.py, TaskClock)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.runs: list[tuple[str, list[list[Any]]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        spent = getattr(record, "playbook_seconds", None)
        if spent is not None:
            self.runs.append((record.getMessage().split(" ", 1)[0], spent))

    def attach(self) -> None:
        logger = logging.getLogger("provisioners.task_clock")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self)


def print_playbook(playbook: str, spent: list[list[Any]]) -> None:
    print(f"  {playbook}: {sum(s for _, s in spent):.1f} s", flush=True)
    for label, seconds in spent:
        print(f"    {seconds:5.2f} s  {label}")


async def print_activities(client: Client, workflow_id: str, posted: float) -> None:
    """The spare's activities, each as [scheduled, started, completed] seconds after the POST
    (wall clock: the server and this process share it)."""
    scheduled: dict[int, tuple[str, float]] = {}
    started: dict[int, float] = {}
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        at = event.event_time.ToDatetime().timestamp() - posted
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = (name, at)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = at
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attributes = event.activity_task_completed_event_attributes
            name, at_scheduled = scheduled.get(attributes.scheduled_event_id, ("?", at))
            at_started = started.get(attributes.scheduled_event_id, at)
            print(
                f"    {at_scheduled:6.2f} {at_started:6.2f} {at:6.2f}  {name} "
                f"({at - at_started:.2f} s)"
            )
        elif kind == EventType.EVENT_TYPE_MARKER_RECORDED:
            print(f"    {at:6.2f}                local activity or marker")


async def plain_virsh(
    xml: str, name: str, images: Path, lab: LabStack, kube: AsyncClient
) -> tuple[float, float | None, float]:
    """The same domain started by hand: fresh overlay and seed at its paths, `virsh create`,
    timed until its Node is Ready."""
    image = build()
    endpoint = cluster_endpoint(lab.kubeconfig)
    token = await create_token(kube, name, timedelta(seconds=WAIT_SECONDS))
    user_data = render_user_data(
        "default",
        LAB_JOIN.read_text(),
        {
            "node_name": name,
            "labels": {},
            "taints": [],
            "api_server": f"https://10.0.2.2:{lab.kube.port}",
            "api_server_name": "127.0.0.1",
            "ca_data": endpoint.ca_data,
            "join_token": token,
        },
    )
    disk, seed = images / f"{name}.qcow2", images / f"{name}-seed.iso"
    subprocess.run(
        [
            "qemu-img",
            "create",
            "-q",
            "-f",
            "qcow2",
            "-F",
            "qcow2",
            "-b",
            str(image.root),
            str(disk),
        ],
        check=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "user-data").write_text(user_data)
        (Path(tmp) / "meta-data").write_text(f"instance-id: {name}-plain\nlocal-hostname: {name}\n")
        subprocess.run(
            ["cloud-localds", str(seed), f"{tmp}/user-data", f"{tmp}/meta-data"], check=True
        )
    (images / f"{name}-console.log").unlink(missing_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".xml") as domain_xml:
        domain_xml.write(xml)
        domain_xml.flush()
        started, started_wall = time.monotonic(), time.time()
        subprocess.run(
            ["virsh", "-q", "-c", URI, "create", domain_xml.name],
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def ready() -> bool:
        node = lab.kube.store.get("nodes", "", name)
        conditions = (node or {}).get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    try:
        qemu = qemu_started(name) - started_wall
        await until(ready)
        console = images / f"{name}-console.log"
        return time.monotonic() - started, guest_join_uptime(console), qemu
    finally:
        subprocess.run(
            ["virsh", "-q", "-c", URI, "destroy", name],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with contextlib.suppress(Exception):
            lab.kube.store.delete("nodes", "", name)
        for path in (disk, seed, images / f"{name}-console.log"):
            path.unlink(missing_ok=True)


async def main(spares: int, over_ssh: bool, warm: int = 0) -> None:
    os.environ.setdefault("ANSIBLE_COLLECTIONS_PATH", str(COLLECTIONS))
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    scratch = tempfile.TemporaryDirectory(prefix="virtflow-real-vm-")
    state = Path(scratch.name)
    images = state / "images"
    images.mkdir()
    ports = free_ports()
    secret = generate_secret()
    base = Settings(temporal_address=f"127.0.0.1:{ports.temporal}", state_dir=state)
    rows: list[tuple[float, float, float, float]] = []
    # virtflow's own seconds (before the qemu start, after the Node is Ready) and virsh's.
    own_rows: list[tuple[float, float, float]] = []
    playbooks = PlaybookTimes()
    playbooks.attach()
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(scratch.cleanup)
        server = TemporalDevServer(ports, state)
        stack.push_async_callback(server.stop)
        client = await server.start(base)
        lab = LabStack(inventory_doc={"hosts": []})
        stack.push_async_callback(lab.stop)
        await lab.start(state / "lab")
        receiver_url = await stack.enter_async_context(
            serve_app(create_receiver_app([secret], state / "receiver.sqlite"))
        )
        ssh = stack.enter_context(loopback_sshd(state / "sshd")) if over_ssh else None
        settings = site_settings(base, state, images, lab.kube.port, ssh).model_copy(
            update={
                "kubeconfig": lab.kubeconfig,
                "receivers": {
                    "upgradectrl": ReceiverConfig(url=f"{receiver_url}/webhooks", secrets=[secret])
                },
                # `--warm`: a pool of one real spare of the bench's shape, claimed N times.
                "warm_pools": [WarmPoolSpec(name="real", cluster="lab", size=1, **WARM_SHAPE)]
                if warm
                else [],
            }
        )
        await stack.enter_async_context(running_worker(settings, client))
        await apply_warm_pools(client, settings)

        async def same_client() -> Any:
            return client

        api_url = await stack.enter_async_context(
            serve_app(create_app(settings, client_factory=same_client))
        )
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=60))
        kube = AsyncClient(config=KubeConfig.from_file(lab.kubeconfig))
        stack.push_async_callback(kube.close)
        nodes = NodeClock(lab)
        watching = asyncio.create_task(nodes.run())
        stack.callback(watching.cancel)

        async def events(spare_id: str) -> list[str]:
            answer = await http.get(f"{receiver_url}/events", params={"spare_id": spare_id})
            return [e["type"] for e in answer.json()]

        for i in range(warm):
            # The pool's spare is a real VM: wait until it is warm (boot, join, taint).
            pool = client.get_workflow_handle(warm_pool_workflow_id("real"))

            async def pool_full(pool: Any = pool) -> bool:
                view = await pool.query(POOL_QUERY, result_type=WarmPoolView)
                return view.ready == 1

            await until(pool_full)
            body = {"request_id": f"warm{i}-{os.getpid()}", "cluster": "lab", **WARM_SHAPE}
            started = time.monotonic()
            answer = await http.post(f"{api_url}/v1/spares", json=body)
            answer.raise_for_status()
            spare_id = answer.json()["spare_id"]
            await until(lambda s=spare_id: _has(events, s, "spare.ready"), every=0.01)
            took = answer.json().get("warm")
            print(
                f"warm {i + 1} ({spare_id}): POST -> spare.ready "
                f"{time.monotonic() - started:.3f} s, warm: {took}",
                flush=True,
            )
            answer = await http.post(f"{api_url}/v1/spares/{spare_id}/release", json={})
            answer.raise_for_status()
            await until(lambda s=spare_id: _has(events, s, "spare.released"))
        if warm:
            # Drain the pool so nothing is left defined behind.
            drained = settings.model_copy(
                update={"warm_pools": [settings.warm_pools[0].model_copy(update={"size": 0})]}
            )
            await apply_warm_pools(client, drained)
            pool = client.get_workflow_handle(warm_pool_workflow_id("real"))

            async def pool_empty() -> bool:
                view = await pool.query(POOL_QUERY, result_type=WarmPoolView)
                return not view.spares

            await until(pool_empty)

        for i in range(spares):
            body = {
                "request_id": f"bench{i}-{os.getpid()}",
                "cluster": "lab",
                "cpu": 1,
                "memory_mb": 512,
                "pool": "general",
                "ready_timeout_seconds": 1800,
            }
            started, posted = time.monotonic(), time.time()
            answer = await http.post(f"{api_url}/spare/prepare", json=body)
            if answer.is_error:
                raise SystemExit(f"POST /spare/prepare: {answer.status_code} {answer.text}")
            spare_id = answer.json()["spare_id"]
            await until(lambda s=spare_id: _has(events, s, "spare.ready"))
            to_ready = time.monotonic() - started
            guest = guest_join_uptime(images / f"{spare_id}-console.log")
            before_qemu = qemu_started(spare_id) - posted
            ready_sent = await _received(http, receiver_url, spare_id, "spare.ready")
            after_ready = ready_sent - nodes.ready.pop(spare_id)
            print(f"spare {i + 1} ({spare_id}): spare.ready after {to_ready:.1f} s", flush=True)
            print("  activities, seconds after the POST: scheduled, started, completed")
            await print_activities(client, spare_id, posted)
            for playbook, spent in playbooks.runs:
                print_playbook(playbook, spent)
            playbooks.runs.clear()
            xml = subprocess.run(
                ["virsh", "-c", URI, "dumpxml", spare_id],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            answer = await http.post(f"{api_url}/spare/{spare_id}/release", json={})
            answer.raise_for_status()
            await until(lambda s=spare_id: _has(events, s, "spare.released"))
            for playbook, spent in playbooks.runs:
                print_playbook(playbook, spent)
            playbooks.runs.clear()
            plain, plain_guest, plain_qemu = await plain_virsh(xml, spare_id, images, lab, kube)
            nodes.ready.pop(spare_id, None)
            row = (to_ready, guest or float("nan"), plain, plain_guest or float("nan"))
            rows.append(row)
            own_rows.append((before_qemu, after_ready, plain_qemu))
            print(
                f"spare {i + 1}: virtflow POST -> spare.ready {row[0]:6.1f} s (guest power-on"
                f" -> Node registered {row[1]:6.1f} s, so virtflow adds {row[0] - row[1]:+5.1f}"
                f" s); plain virsh create -> Node Ready {row[2]:6.1f} s (guest {row[3]:6.1f} s,"
                f" so {row[2] - row[3]:+5.1f} s outside the guest)",
                flush=True,
            )
            print(
                f"spare {i + 1}: virtflow's own {before_qemu + after_ready:5.2f} s (POST -> qemu"
                f" started {before_qemu:5.2f} s, Node Ready -> spare.ready stored"
                f" {after_ready:5.2f} s); virsh create -> qemu started {plain_qemu:5.2f} s; own -"
                f" virsh {before_qemu + after_ready - plain_qemu:+5.2f} s;"
                f" load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}",
                flush=True,
            )
    if not rows:
        return
    print(
        f"median of {len(rows)}: POST -> spare.ready {median(r[0] for r in rows):.1f} s, "
        f"virtflow's share {median(r[0] - r[1] for r in rows):+.1f} s; plain virsh -> Ready "
        f"{median(r[2] for r in rows):.1f} s, outside the guest "
        f"{median(r[2] - r[3] for r in rows):+.1f} s"
    )
    print(
        f"median of {len(own_rows)}: virtflow's own {median(b + a for b, a, _ in own_rows):.2f} s"
        f" (before qemu {median(b for b, _, _ in own_rows):.2f} s, after Ready"
        f" {median(a for _, a, _ in own_rows):.2f} s); virsh create -> qemu started"
        f" {median(v for _, _, v in own_rows):.2f} s"
    )


async def _received(http: httpx.AsyncClient, receiver_url: str, spare_id: str, kind: str) -> float:
    """When the receiver stored the event (its own `received_at`, wall clock)."""
    answer = await http.get(f"{receiver_url}/events", params={"spare_id": spare_id})
    return float(next(e["received_at"] for e in answer.json() if e["type"] == kind))


async def _has(events: Any, spare_id: str, kind: str) -> bool:
    return kind in await events(spare_id)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spares", type=int, default=3)
    parser.add_argument("--ssh", action="store_true", help="reach the host over SSH")
    parser.add_argument(
        "--warm", type=int, default=0, help="warm hits first, from a pool of one real spare"
    )
    args = parser.parse_args()
    asyncio.run(main(args.spares, args.ssh, args.warm))
