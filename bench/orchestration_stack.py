"""The stack the orchestration benchmark measures, started the way `virtflow dev` starts it.

Its own Temporal dev server (SQLite file, WAL pragmas, `cli/dev.py`'s command line), the
lab (Kubernetes API and kubelet with no Ready delay, a hypervisor with no create delay) on a
site large enough for 800 spares, a second small lab hypervisor whose inventory is tight (for
the ledger's over-commit proof), the reference receiver, the worker in its own process (so its
RSS is its own) and the HTTP API in this process.
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import yaml
from temporalio.client import Client

from api.app import create_app
from cli.dev import TemporalDevServer, free_ports
from lab.hypervisor import LabHypervisor
from lab.stack import LabStack
from runtime.clusters import ClusterConfig
from runtime.settings import Settings
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import generate_secret

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
WORKER_PACKAGES = ("placement", "workflows", "activities", "webhooks", "runtime", "worker")
TASK_QUEUE = "virtflow-bench"
BIG_INVENTORY = "bench"
TIGHT_INVENTORY = "tight"
RECEIVER = "upgradectrl"
WORKER_START_TIMEOUT_SECONDS = 60.0


def host(name: str, cpu: int, memory_mb: int, quota: int, rack: str) -> dict[str, Any]:
    return {
        "name": name,
        "pool": "general",
        "rack": rack,
        "cpu_capacity": cpu,
        "cpu_allocated": 0,
        "cpu_allocation_ratio": 1.0,
        "memory_mb_capacity": memory_mb,
        "memory_mb_allocated": 0,
        "memory_allocation_ratio": 1.0,
        "gpu_capacity": 0,
        "gpu_allocated": 0,
        "vm_count": 0,
        "vm_quota": quota,
    }


def big_site(hosts: int = 100) -> dict[str, Any]:
    """100 hosts of 64 CPU / 256 GiB: room for 3,200 spares of 2 CPU / 2 GiB."""
    return {"hosts": [host(f"bm-{i:03d}", 64, 262144, 100, f"r{i % 8}") for i in range(hosts)]}


def tight_site(hosts: int, spares_each: int) -> dict[str, Any]:
    """Hosts that hold exactly `spares_each` spares of 2 CPU each: more ask than fit."""
    return {
        "hosts": [
            host(f"tight-{i:02d}", 2 * spares_each, 262144, 100, f"r{i % 2}") for i in range(hosts)
        ]
    }


@dataclass
class BenchStack:
    client: Client
    settings: Settings
    api_url: str
    http: httpx.AsyncClient
    lab: LabStack
    tight: LabHypervisor
    tight_doc: dict[str, Any]
    worker: psutil.Process
    server: psutil.Process


def compile_sources() -> None:
    """Byte-compile the worker's modules, as `pip install` does for an installed virtflow.

    The workflow sandbox imports each workflow's module again for every workflow it runs. From
    a source tree under PYTHONDONTWRITEBYTECODE (set on some machines and in the image's
    environment) every such import would compile the source again: a cost that an installed
    worker does not pay, and that would otherwise be charged to both sides of the overhead
    ratio.
    """
    for package in (*WORKER_PACKAGES, "bench"):
        compileall.compile_dir(REPO_DIR / package, quiet=1)


class WorkerProcess:
    """`bench/orchestration_worker.py` as a child process, stopped with SIGTERM."""

    def __init__(self, config_path: Path, log_path: Path) -> None:
        self.config_path = config_path
        self.log_path = log_path
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> int:
        compile_sources()
        env = {**os.environ, "VIRTFLOW_CONFIG": str(self.config_path)}
        with self.log_path.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(BENCH_DIR / "orchestration_worker.py"),
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
            )
        assert self.proc.stdout is not None
        async with asyncio.timeout(WORKER_START_TIMEOUT_SECONDS):
            line = await self.proc.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"the bench worker did not start; see {self.log_path}")
        return self.proc.pid

    async def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def worker_config(settings: Settings, receiver_url: str, secret: str) -> dict[str, Any]:
    """The worker's YAML settings (secrets written out: SecretStr would dump as stars)."""
    return {
        "temporal_address": settings.temporal_address,
        "task_queue": settings.task_queue,
        "state_dir": str(settings.state_dir),
        "inventories": settings.inventories,
        "clusters": {
            name: {"kubeconfig": str(cluster.kubeconfig)}
            for name, cluster in settings.clusters.items()
        },
        "provisioner": settings.provisioner,
        "hypervisor_api_url": settings.hypervisor_api_url,
        "ansible_extravars": settings.ansible_extravars,
        "receivers": {RECEIVER: {"url": f"{receiver_url}/webhooks", "secrets": [secret]}},
    }


def _server_process() -> psutil.Process:
    for child in psutil.Process().children(recursive=True):
        if child.name() == "temporal":
            return child
    raise RuntimeError("the Temporal dev server process was not found")


# Each section's spares belong to a cluster of their own (a section finds its spares by
# cluster), and a spare's cluster must be registered: the bench registers these, all the lab's.
BENCH_CLUSTERS = tuple(f"bench-{i}" for i in range(24))


@contextlib.asynccontextmanager
async def bench_stack(
    state_dir: Path, provisioner: str, tight_hosts: int, tight_each: int
) -> AsyncIterator[BenchStack]:
    state_dir.mkdir(parents=True, exist_ok=True)
    ports = free_ports()
    base = Settings(
        temporal_address=f"127.0.0.1:{ports.temporal}",
        task_queue=TASK_QUEUE,
        state_dir=state_dir,
        provisioner=provisioner,
    )
    secret = generate_secret()
    async with contextlib.AsyncExitStack() as stack:
        server = TemporalDevServer(ports, state_dir)
        stack.push_async_callback(server.stop)
        client = await server.start(base)

        lab = LabStack(inventory_doc=big_site(), ready_delay=0.0)
        stack.push_async_callback(lab.stop)
        await lab.start(state_dir / "lab")
        # The lab rewrites its whole state file per VM: a lab cost, not virtflow's, left out.
        lab.hypervisor.state_file = None
        tight_doc = tight_site(tight_hosts, tight_each)
        tight = LabHypervisor(tight_doc["hosts"])
        stack.push_async_callback(tight.stop)
        await tight.start()

        receiver_app = create_receiver_app([secret], state_dir / "receiver.sqlite")
        receiver_url = await stack.enter_async_context(serve_app(receiver_app))
        settings = base.model_copy(
            update={
                "inventories": {
                    BIG_INVENTORY: f"{lab.hypervisor_url}/inventory",
                    TIGHT_INVENTORY: f"{tight.url}/inventory",
                },
                "kubeconfig": None,
                "clusters": {
                    name: ClusterConfig(kubeconfig=lab.kubeconfig) for name in BENCH_CLUSTERS
                },
                "hypervisor_api_url": lab.hypervisor_url,
                "ansible_extravars": {"lab_hypervisor_url": lab.hypervisor_url},
            }
        )
        config_path = state_dir / "worker.yaml"
        config_path.write_text(yaml.safe_dump(worker_config(settings, receiver_url, secret)))
        worker = WorkerProcess(config_path, state_dir / "worker.log")
        stack.push_async_callback(worker.stop)
        worker_pid = await worker.start()

        async def same_client() -> Client:
            return client

        # Served as `virtflow api` serves it: with its request limits.
        api_url = await stack.enter_async_context(
            serve_app(
                create_app(settings, client_factory=same_client),
                **settings.http_limits.uvicorn_options(),
            )
        )
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=120, limits=limits))
        yield BenchStack(
            client=client,
            settings=settings,
            api_url=api_url,
            http=http,
            lab=lab,
            tight=tight,
            tight_doc=tight_doc,
            worker=psutil.Process(worker_pid),
            server=_server_process(),
        )
