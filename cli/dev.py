"""`virtflow dev`: the whole stack on the embedded lab, in one process, in the foreground.

The Temporal dev server runs as a child process; everything else (lab Kubernetes API and
hypervisor, the worker, the HTTP API, the reference receiver) shares one asyncio loop, so
Ctrl-C stops it all in order and leaves nothing behind. `virtflow demo` reuses `lab_stack`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import random
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, fields
from pathlib import Path

from pydantic import SecretStr
from rich.console import Console
from temporalio.client import Client

from api.app import create_app
from api.errors import TemporalUnavailable
from api.temporal_client import connect_factory
from api.workers import why_no_worker
from contracts.common import SEARCH_ATTRIBUTES
from lab.stack import LAB_CLUSTER, SECOND_CLUSTER, LabStack, cluster_kubeconfig
from runtime.clusters import ClusterConfig
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings
from runtime.temporal_binaries import (
    DEV_SERVER_DYNAMIC_CONFIG,
    DEV_SERVER_SQLITE_PRAGMAS,
    temporal_cli,
)
from webhooks.bounded import BodyDeadline
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import generate_secret
from worker.worker import run_worker

LAB_RECEIVER = "upgradectrl"
SERVER_START_TIMEOUT_SECONDS = 60.0
START_ATTEMPTS = 3
SERVER_STOP_TIMEOUT_SECONDS = 10.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class LabPorts:
    temporal: int = 7233
    temporal_ui: int = 8233
    hypervisor: int = 8091
    kube: int = 8092
    api: int = 8080
    receiver: int = 8090
    gitlab: int = 8093
    # The second lab cluster's Kubernetes API (8094 is the codec server's).
    kube_b: int = 8095

    def items(self) -> list[tuple[str, int]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


class _RandomPortTaken(Exception):
    """A port the dev server chose for itself was taken before it bound it."""


class PortBusy(Exception):
    def __init__(self, name: str, port: int) -> None:
        super().__init__(f"port {port} ({name.replace('_', ' ')}) is already in use")
        self.name = name
        self.port = port


# Below the kernel's ephemeral range, which outgoing connections draw from: a port chosen
# there can be taken by any client socket between choosing it and binding it.
_FREE_PORTS_FLOOR = 10_000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_floor() -> int:
    try:
        return int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def free_ports() -> LabPorts:
    """Free ports for the demo and tests, which must not clash with a running dev: random ones
    below the ephemeral range, each seen free, so only another explicit bind can race them."""
    chosen: list[int] = []
    ceiling = _ephemeral_floor()
    if ceiling - _FREE_PORTS_FLOOR < 1_000:  # an unusual range: take any port, as the kernel would
        ceiling = 65_536
    candidates = random.sample(range(_FREE_PORTS_FLOOR, ceiling), 200)
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        chosen.append(port)
        if len(chosen) == len(fields(LabPorts)):
            return LabPorts(*chosen)
    raise OSError(f"fewer than {len(fields(LabPorts))} free ports below {ceiling}")


def check_ports(ports: LabPorts) -> None:
    """Fail early, naming the port, rather than half-way through start-up."""
    for name, port in ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # As the servers themselves do: connections of a previous run in TIME_WAIT are no
            # obstacle, a live listener is.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError as err:
                raise PortBusy(name, port) from err


def receiver_secret(state_dir: Path) -> str:
    """The lab receiver's signing secret: made once, kept (0600) so restarts verify old events."""
    path = state_dir / "receiver.secret"
    if path.is_file():
        return path.read_text().strip()
    secret = generate_secret()
    path.touch(mode=0o600)
    path.write_text(secret + "\n")
    return secret


def lab_settings(base: Settings, ports: LabPorts, state_dir: Path, secret: str) -> Settings:
    """The base settings, rewired to the lab's seams; other choices (tokens, policy) stay."""
    hypervisor_url = f"http://127.0.0.1:{ports.hypervisor}"
    receiver = ReceiverConfig(
        url=f"http://127.0.0.1:{ports.receiver}/webhooks", secrets=[SecretStr(secret)]
    )
    return base.model_copy(
        update={
            "temporal_address": f"127.0.0.1:{ports.temporal}",
            "temporal_ui_url": f"http://localhost:{ports.temporal_ui}",
            "state_dir": state_dir,
            "inventories": {**base.inventories, "default": f"{hypervisor_url}/inventory"},
            "kubeconfig": None,
            "join_api_server": None,
            "join_api_server_ca": None,
            "clusters": {**base.clusters, **lab_clusters(state_dir)},
            "ansible_extravars": {**base.ansible_extravars, "lab_hypervisor_url": hypervisor_url},
            "hypervisor_api_url": hypervisor_url,
            "receivers": {**base.receivers, LAB_RECEIVER: receiver},
            "receiver_secrets": [SecretStr(secret)],
            "api_port": ports.api,
            "receiver_port": ports.receiver,
            # Ctrl-C ends the lab as well: a playbook still running has nothing to finish on.
            "graceful_shutdown_seconds": min(base.graceful_shutdown_seconds, 5),
            # A lab spare is Ready in seconds: a booking's lead stays under a minute.
            "booking_lead_default_seconds": min(base.booking_lead_default_seconds, 45),
            "booking_lead_floor_seconds": min(base.booking_lead_floor_seconds, 10),
            "booking_lead_margin_seconds": min(base.booking_lead_margin_seconds, 15),
            # ... and a window minutes long hears `spare.window_ending` a minute before its end.
            "booking_window_ending_seconds": min(base.booking_window_ending_seconds, 60),
        }
    )


def lab_clusters(state_dir: Path) -> dict[str, ClusterConfig]:
    """The lab's two clusters, each on the kubeconfig the lab writes for it."""
    return {
        name: ClusterConfig(kubeconfig=cluster_kubeconfig(state_dir, name))
        for name in (LAB_CLUSTER, SECOND_CLUSTER)
    }


def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, a child hook so the server ends even if we are killed with SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved before fork, not in the child

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return hook


class TemporalDevServer:
    """`temporal server start-dev` as a child process with a SQLite file."""

    def __init__(self, ports: LabPorts, state_dir: Path) -> None:
        self.ports = ports
        self.db_path = state_dir / "temporal.db"
        self.log_path = state_dir / "temporal.log"
        self._proc: asyncio.subprocess.Process | None = None

    def command(self) -> list[str]:
        args = [
            str(temporal_cli()),
            "server",
            "start-dev",
            "--db-filename",
            str(self.db_path),
            "--ui-port",
            str(self.ports.temporal_ui),
            "--port",
            str(self.ports.temporal),
        ]
        for key in SEARCH_ATTRIBUTES:
            args += ["--search-attribute", f"{key.name}=Keyword"]
        args += DEV_SERVER_SQLITE_PRAGMAS
        args += DEV_SERVER_DYNAMIC_CONFIG
        return [*args, "--log-level", "warn"]

    async def start(self, settings: Settings) -> Client:
        """Start the server and return a client once it answers."""
        for attempt in range(1, START_ATTEMPTS + 1):
            with contextlib.suppress(_RandomPortTaken):
                return await self._start_once(settings, last_attempt=attempt == START_ATTEMPTS)
        raise AssertionError("unreachable: the last attempt raises")

    async def _start_once(self, settings: Settings, *, last_attempt: bool) -> Client:
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            # Own session: Ctrl-C reaches us only, and we stop the server after the worker.
            self._proc = await asyncio.create_subprocess_exec(
                *self.command(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
        connect = connect_factory(settings)
        async with asyncio.timeout(SERVER_START_TIMEOUT_SECONDS):
            while True:
                if self._proc.returncode is not None:
                    # The server picks its HTTP, metrics and internal ports itself, between
                    # choosing and binding one another process may take it: start again.
                    with self.log_path.open("rb") as log:
                        log.seek(log_start)
                        taken = b"address already in use" in log.read()
                    if taken and not last_attempt:
                        raise _RandomPortTaken
                    raise RuntimeError(
                        f"the Temporal dev server exited with {self._proc.returncode}; "
                        f"see {self.log_path}"
                    )
                with contextlib.suppress(RuntimeError):
                    return await connect()
                await asyncio.sleep(0.2)

    async def stop(self) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), SERVER_STOP_TIMEOUT_SECONDS)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@dataclass
class RunningStack:
    settings: Settings
    client: Client
    api_url: str
    receiver_url: str
    worker: asyncio.Task[None]


async def _stop_worker(stop: asyncio.Event, task: asyncio.Task[None]) -> None:
    stop.set()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@contextlib.asynccontextmanager
async def lab_stack(
    base: Settings, ports: LabPorts, state_dir: Path, ready_delay: float
) -> AsyncIterator[RunningStack]:
    """Start everything; on exit stop it in reverse order (API first, Temporal last)."""
    check_ports(ports)
    state_dir.mkdir(parents=True, exist_ok=True)
    secret = receiver_secret(state_dir)
    settings = lab_settings(base, ports, state_dir, secret)
    async with contextlib.AsyncExitStack() as stack:
        server = TemporalDevServer(ports, state_dir)
        stack.push_async_callback(server.stop)
        client = await server.start(settings)

        lab = LabStack(extra_clusters=(SECOND_CLUSTER,))
        stack.push_async_callback(lab.stop)
        await lab.start(
            state_dir=state_dir,
            kube_port=ports.kube,
            hypervisor_port=ports.hypervisor,
            ready_delay=ready_delay,
            gitlab_port=ports.gitlab,
            cluster_ports={SECOND_CLUSTER: ports.kube_b},
        )
        assert lab.gitlab is not None
        settings = settings.model_copy(
            update={
                # The lab GitLab's tokens are made afresh each start.
                "gitlab_url": lab.gitlab.url,
                "gitlab_trigger_token": SecretStr(lab.gitlab.trigger_token),
                "gitlab_api_token": SecretStr(lab.gitlab.api_token),
                "gitlab_user_data_key": SecretStr(lab.gitlab.user_data_key),
            }
        )

        stop = asyncio.Event()
        worker = asyncio.create_task(run_worker(settings, client, stop), name="virtflow-worker")
        stack.push_async_callback(_stop_worker, stop, worker)

        limits = settings.http_limits
        receiver_app = BodyDeadline(
            create_receiver_app([secret], state_dir / "receiver.sqlite"), limits.body_seconds
        )
        receiver_url = await stack.enter_async_context(
            serve_app(receiver_app, port=ports.receiver, **limits.uvicorn_options())
        )

        async def same_client() -> Client:
            return client

        api_app = create_app(settings, client_factory=same_client)
        api_url = await stack.enter_async_context(
            serve_app(api_app, port=ports.api, **limits.uvicorn_options())
        )
        await _worker_polling(client, settings.task_queue, worker)
        yield RunningStack(settings, client, api_url, receiver_url, worker)


async def _worker_polling(client: Client, task_queue: str, worker: asyncio.Task[None]) -> None:
    """Up once the worker polls: before, the API answers a spare's status with 503 (no worker),
    and a demo or a first request right after start-up would meet that."""
    async with asyncio.timeout(SERVER_START_TIMEOUT_SECONDS):
        while await _why_not_polling(client, task_queue) is not None:
            if worker.done():
                worker.result()  # its failure, as it is
                raise RuntimeError("the worker stopped before it polled")
            await asyncio.sleep(0.1)


async def _why_not_polling(client: Client, task_queue: str) -> str | None:
    """A server just started and busy may not answer a describe at once: ask again."""
    try:
        return await why_no_worker(client, task_queue)
    except TemporalUnavailable as err:
        return str(err)


def banner(running: RunningStack, ports: LabPorts) -> str:
    s = running.settings
    body = (
        '{"request_id":"demo-1","cluster":"lab","cpu":2,"memory_mb":4096,'
        f'"receivers":["{LAB_RECEIVER}"]}}'
    )
    return "\n".join(
        [
            "[bold green]virtflow dev is up[/] (Ctrl-C stops everything)",
            f"  Temporal        {s.temporal_address}   UI {s.temporal_ui_url}",
            f"  HTTP API        {running.api_url}   (OpenAPI {running.api_url}/docs)",
            f"  receiver        {running.receiver_url}   (events {running.receiver_url}/events)",
            f"  lab hypervisor  http://127.0.0.1:{ports.hypervisor}   "
            f"GitLab http://127.0.0.1:{ports.gitlab}",
            *(
                f"  cluster {name:<7} kube API https://127.0.0.1:{port}   "
                f"kubectl --kubeconfig {cluster_kubeconfig(s.state_dir, name)} get nodes"
                for name, port in ((LAB_CLUSTER, ports.kube), (SECOND_CLUSTER, ports.kube_b))
            ),
            f"  provisioner     {s.provisioner}",
            f"  state           {s.state_dir}",
            "",
            "Ask for a spare over HTTP (cluster lab, or lab-b):",
            f"  curl -X POST {running.api_url}/v1/spares "
            f"-H 'content-type: application/json' -d '{body}'",
            "or from the Temporal CLI:",
            f"  temporal workflow start --type PrepareSpare --task-queue {s.task_queue} "
            f"--workflow-id spare-lab-demo-2 --address {s.temporal_address} "
            '--input \'{"request_id":"demo-2","cluster":"lab","cpu":2,"memory_mb":4096}\'',
            f"Then: curl {running.api_url}/v1/spares/spare-lab-demo-1",
        ]
    )


def on_signals(handler: Callable[[], object]) -> None:
    """Call `handler` on Ctrl-C or SIGTERM instead of dying with children left behind."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, handler)


async def run_dev(settings: Settings, console: Console, ready_delay: float = 5.0) -> int:
    """Run until Ctrl-C (0) or until the worker dies (1)."""
    ports = LabPorts()
    try:
        check_ports(ports)
    except PortBusy as err:
        console.print(f"[red]error:[/] {err}; stop what uses it (another `virtflow dev`?)")
        return 1
    stop = asyncio.Event()
    main = asyncio.current_task()
    started = False

    def on_signal() -> None:
        # While starting there is nothing to wait on: cancel, and the exit stack unwinds.
        if started:
            stop.set()
        elif main is not None:
            main.cancel()

    on_signals(on_signal)
    try:
        async with lab_stack(settings, ports, settings.state_dir, ready_delay) as running:
            started = True
            console.print(banner(running, ports), soft_wrap=True)
            waiter = asyncio.create_task(stop.wait())
            await asyncio.wait({waiter, running.worker}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if running.worker.done() and not stop.is_set():
                reason = running.worker.exception()
                console.print(f"[red]error:[/] the worker stopped: {reason or 'no reason given'}")
                return 1
            console.print("stopping...")
    except asyncio.CancelledError:
        console.print("stopped during start-up")
        return 1
    except PortBusy as err:
        console.print(f"[red]error:[/] {err}")
        return 1
    return 0


async def run_lab(state_dir: Path, host: str, kube_name: str, console: Console) -> int:
    """Only the lab (hypervisor, Kubernetes API and kubelet), on `host`, until SIGTERM: the
    compose stack's stand-in site, next to a worker of its own."""
    ports = LabPorts()
    stop = asyncio.Event()
    on_signals(stop.set)
    lab = LabStack()
    await lab.start(
        state_dir=state_dir,
        kube_port=ports.kube,
        hypervisor_port=ports.hypervisor,
        gitlab_port=ports.gitlab,
        host=host,
        kube_advertised_host=kube_name,
    )
    try:
        console.print(
            f"lab hypervisor on {host}:{ports.hypervisor}, Kubernetes API {lab.kube_url} "
            f"(kubeconfig {lab.kubeconfig})"
        )
        await stop.wait()
    finally:
        await lab.stop()
    return 0
