"""The `virtflow` command line.

Exit codes: 0 ok, 1 a failed spare or a runtime error (Temporal down, worker died), 2 bad
input (invalid request, unknown spare, bad settings); `replay` gives its own verdicts (0 all
replay, 1 a divergence, 2 could not run). Errors are one readable line. Operator commands
connect without the worker's Prometheus endpoint, so they run beside a worker in its Pod.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import httpx
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from temporalio.client import Client

from api.errors import (
    InvalidInput,
    InventoryUnavailable,
    SpareConflict,
    SpareNotFound,
    TemporalUnavailable,
)
from api.explain import ExplainBody
from api.temporal_client import ClientProvider, connect_factory
from contracts.spare import Phase, SpareRequest
from placement.errors import field_path
from runtime.logging_setup import configure_logging
from runtime.settings import CONFIG_ENV, Settings, get_settings
from runtime.temporal_profile import TemporalProfileError
from virtflow_client import AuthenticatedClient
from virtflow_client.api.spares import (
    cancel_spare,
    get_spare,
    prepare_spare,
    release_spare,
)
from virtflow_client.api.spares import (
    list_spares as list_spares_op,
)
from virtflow_client.models import (
    CancelAccepted,
    PlacedTopology,
    PrepareAccepted,
    PrepareBody,
    ReleaseRequest,
    SparePage,
    SpareStatus,
    SpareView,
)
from virtflow_client.models import Phase as ApiPhase
from virtflow_client.types import UNSET, Unset

from .config import config_app
from .spare_api import ApiProblem, answer, api_client
from .warm import warm_app

app = typer.Typer(
    name="virtflow",
    help="Spare-node provisioning on Temporal.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(config_app, name="config")
app.add_typer(warm_app, name="warm")
console = Console()
err_console = Console(stderr=True)
log = logging.getLogger("virtflow")
T = TypeVar("T")

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
FOLLOW_POLL_SECONDS = 1.0
# Phases after which a spare never becomes Ready.
NOT_READY_END = {Phase.FAILED, Phase.CANCELLED, Phase.RELEASED, Phase.COMPENSATING}


def fail(message: str, code: int) -> NoReturn:
    # The message may hold any text (a key, a name): printed as it is, never read as markup.
    err_console.print(f"[red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def _one_line(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    where = field_path(first["loc"]) or "input"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def settings() -> Settings:
    try:
        return get_settings()
    except ValidationError as err:
        fail(f"bad settings: {_one_line(err)}", EXIT_BAD_INPUT)
    except (FileNotFoundError, TemporalProfileError) as err:
        fail(str(err), EXIT_BAD_INPUT)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine, mapping the domain's errors to one line and an exit code."""
    try:
        return asyncio.run(coro)
    except TemporalUnavailable as err:
        fail(f"Temporal unavailable: {err}", EXIT_FAILED)
    except InventoryUnavailable as err:
        fail(str(err), EXIT_FAILED)
    except SpareNotFound as err:
        fail(f"no spare '{err}'", EXIT_BAD_INPUT)
    except (SpareConflict, InvalidInput) as err:
        fail(str(err), EXIT_BAD_INPUT)
    except ApiProblem as err:
        # The API's own words and code; its 5xx are outages (exit 1), 4xx the caller's (2).
        fail(f"{err} ({err.code})", EXIT_FAILED if err.status >= 500 else EXIT_BAD_INPUT)
    except httpx.TransportError as err:
        fail(f"the API did not answer ({type(err).__name__}): is `virtflow api` running?", 1)
    except ValidationError as err:
        fail(_one_line(err), EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        # Only this command stops: a spare lives in Temporal, not in this process.
        fail("interrupted (the spare, if started, carries on)", EXIT_FAILED)


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        fail(f"{path}: {err}", EXIT_BAD_INPUT)
    if not isinstance(data, dict):
        fail(f"{path}: expected a JSON object", EXIT_BAD_INPUT)
    return data


def _set(value: T | Unset | None) -> T | None:
    return None if isinstance(value, Unset) else value


def _phase(view: SpareView | SpareStatus) -> str:
    phase = _set(view.phase)
    return phase.value if phase is not None else "validating"


def _topology(placed: PlacedTopology) -> str:
    """The host's domains, and the domain `near` wanted: `zone=z-c; near w-7 wanted zone=z-c`."""
    domains = _set(placed.domains)
    pairs = domains.additional_properties.items() if domains is not None else []
    text = ", ".join(f"{key}={value or '-'}" for key, value in pairs)
    near = _set(placed.near)
    if near is not None:
        who = _set(near.node) or _set(near.vm)
        text += f"; near {who} wanted {near.topology_key}={_set(near.domain) or '-'}"
    return text


def status_table(view: SpareView) -> Table:
    """Phase, host, VM and what the spare waits for: the status command's view."""
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    vm = _set(view.vm)
    vmid = _set(view.vmid) or (_set(vm.vmid) if vm else None)
    table.add_row("spare", view.spare_id)
    table.add_row("phase", f"[bold]{_phase(view)}[/] (workflow {view.workflow_status})")
    table.add_row("cluster / pool", f"{view.cluster} / {_set(view.pool) or '-'}")
    table.add_row("host / vmid", f"{_set(view.host) or '-'} / {vmid or '-'}")
    topology = _set(view.topology)
    if topology is not None:
        table.add_row("topology", _topology(topology))
    if vm is not None:
        table.add_row("vm", f"{vm.name} ip {_set(vm.ip) or '-'} mac {_set(vm.mac) or '-'}")
    waiting = _set(view.waiting_for)
    if waiting:
        table.add_row("waiting for", "[yellow]" + ", ".join(waiting) + "[/]")
    if _set(view.error):
        table.add_row("error", f"[red]{view.error}[/]")
    for step in _set(view.steps) or []:
        table.add_row(f"  {step.at:%H:%M:%S}", f"{step.phase.value} {_set(step.detail) or ''}")
    table.add_row("history", view.ui_url)
    return table


async def get_view(client: AuthenticatedClient, spare_id: str) -> SpareView:
    return answer(await get_spare.asyncio_detailed(spare_id, client=client), SpareView)


def _settled(view: SpareView, until: set[str]) -> bool:
    return _phase(view) in until or view.workflow_status != "running"


async def watch_spare(
    client: AuthenticatedClient, spare_id: str, until: set[str], out: Console
) -> SpareView:
    """A live view of the spare, redrawn as it changes, until its phase is one of `until` or
    its workflow ends."""
    view = await get_view(client, spare_id)
    with Live(status_table(view), console=out, auto_refresh=False, transient=False) as live:
        while not _settled(view, until):
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
            view = await get_view(client, spare_id)
            live.update(status_table(view), refresh=True)
    return view


async def follow_spare(client: AuthenticatedClient, spare_id: str, out: Console) -> int:
    """Print each new step until the spare is Ready (0) or can no longer be (1)."""
    shown = 0
    waiting: list[str] = []
    while True:
        view = await get_view(client, spare_id)
        steps = _set(view.steps) or []
        for step in steps[shown:]:
            detail = f" - {step.detail}" if _set(step.detail) else ""
            out.print(f"  [cyan]{step.phase.value:<17}[/]{detail}")
        shown = len(steps)
        now_waiting = _set(view.waiting_for) or []
        if now_waiting and now_waiting != waiting:
            out.print(f"  {'':<17}waiting for: {', '.join(now_waiting)}")
        waiting = now_waiting
        if _phase(view) == Phase.READY.value:
            out.print(f"[green]ready[/] on {_set(view.host)}")
            return 0
        if _phase(view) in {p.value for p in NOT_READY_END} or view.workflow_status != "running":
            out.print(f"[red]{_phase(view)}[/]: {_set(view.error) or view.workflow_status}")
            return EXIT_FAILED
        await asyncio.sleep(FOLLOW_POLL_SECONDS)


@app.callback()
def main(
    config: Annotated[
        Path | None,
        typer.Option("--config", help="YAML settings file (same as VIRTFLOW_CONFIG)"),
    ] = None,
) -> None:
    if config is not None:
        os.environ[CONFIG_ENV] = str(config)
        get_settings.cache_clear()


def _need_lab() -> None:
    """`dev` and `demo` run the lab, whose parts are the `lab` extra, not the product's."""
    import importlib.util

    missing = [m for m in ("cryptography",) if importlib.util.find_spec(m) is None]
    if missing:
        fail(f"the lab needs {', '.join(missing)}: pip install 'virtflow[lab]'", EXIT_BAD_INPUT)


@app.command()
def dev(
    ready_delay: Annotated[
        float, typer.Option(help="Seconds the lab kubelet takes to be Ready")
    ] = 5.0,
) -> None:
    """Run Temporal, the lab, the worker, the API and the receiver until Ctrl-C."""
    _need_lab()
    from .dev import run_dev

    config = settings()
    configure_logging(config)
    raise typer.Exit(asyncio.run(run_dev(config, console, ready_delay)))


@app.command()
def lab(
    host: Annotated[str, typer.Option(help="Address the lab servers listen on")] = "0.0.0.0",
    kube_name: Annotated[
        str, typer.Option(help="Host name the kubeconfig gives the lab Kubernetes API")
    ] = "kubernetes",
) -> None:
    """Serve only the lab site (hypervisor, Kubernetes API, kubelet) until SIGTERM, writing its
    kubeconfig under state_dir: the stand-in site of docker-compose.yml."""
    _need_lab()
    from .dev import run_lab

    config = settings()
    configure_logging(config)
    raise typer.Exit(asyncio.run(run_lab(config.state_dir, host, kube_name, console)))


@app.command()
def demo() -> None:
    """Provision and release one spare end to end on a fresh lab, then exit."""
    _need_lab()
    from .demo import run_demo

    raise typer.Exit(asyncio.run(run_demo(settings(), console)))


@app.command()
def worker() -> None:
    """Run a worker on the configured Temporal service until SIGINT/SIGTERM."""
    from runtime.telemetry import flush_traces
    from worker.worker import run_worker

    config = settings()
    configure_logging(config)

    async def serve() -> None:
        # The worker's own runtime: it serves Prometheus on metrics_port.
        client = await ClientProvider(connect_factory(config)).get()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        log.info(
            "worker on task queue %s at %s (namespace %s)",
            config.task_queue,
            config.temporal_address,
            config.temporal_namespace,
        )
        await run_worker(config, client, stop)

    try:
        run(serve())
    finally:
        flush_traces(config)


@app.command()
def api() -> None:
    """Serve the HTTP API (OpenAPI at /docs)."""
    import uvicorn

    from api.app import create_app
    from runtime.telemetry import flush_traces

    config = settings()
    configure_logging(config)
    try:
        uvicorn.run(
            create_app(config),
            host=config.api_host,
            port=config.api_port,
            log_config=None,
            **config.http_limits.uvicorn_options(),
        )
    finally:
        # uvicorn returns after SIGTERM: the spans of the last requests still go out.
        flush_traces(config)


@app.command()
def receiver() -> None:
    """Serve the reference webhook receiver with VIRTFLOW_RECEIVER_SECRETS."""
    import uvicorn

    from webhooks.bounded import BodyDeadline
    from webhooks.receiver import create_receiver_app

    config = settings()
    configure_logging(config)
    secrets = [s.get_secret_value() for s in config.receiver_secrets]
    if not secrets:
        fail("set VIRTFLOW_RECEIVER_SECRETS (a JSON list of whsec_ secrets)", EXIT_BAD_INPUT)
    config.state_dir.mkdir(parents=True, exist_ok=True)
    try:
        receiver_app = create_receiver_app(secrets, config.state_dir / "receiver.sqlite")
    except ValueError as err:
        fail(f"bad receiver secret: {err}", EXIT_BAD_INPUT)
    limits = config.http_limits
    uvicorn.run(
        BodyDeadline(receiver_app, limits.body_seconds),
        host=config.api_host,
        port=config.receiver_port,
        log_config=None,
        **limits.uvicorn_options(),
    )


# `virtflow replay`'s verdicts: a deploy pipeline tells "B would break a running spare" (1)
# from "the gate could not run" (2), which says nothing about B.
REPLAY_ALL = 0
REPLAY_DIVERGED = 1
REPLAY_COULD_NOT_RUN = 2


@app.command()
def replay(
    since_hours: Annotated[
        float, typer.Option("--since-hours", min=0, help="Also replay runs closed this recently")
    ] = 24.0,
    limit: Annotated[int, typer.Option(min=1, help="At most this many histories")] = 1000,
) -> None:
    """Replay the namespace's running and recent spares, releases and ledgers against the code
    installed here: exit 0 if all replay, 1 if one diverges (named), 2 if the replay could not
    run (connection, configuration). Binds no port: it runs beside a worker in its Pod."""
    from datetime import timedelta

    from temporalio.service import RPCError

    from worker.replay import replay_namespace

    config = settings()

    async def go() -> bool:
        client = await _client(config)
        report = await replay_namespace(
            client, config.task_queue, timedelta(hours=since_hours), limit
        )
        for d in report.diverged:
            kind = "non-deterministic" if d.nondeterministic else "replay failed"
            console.print(f"[red]{kind}[/] {d.workflow_type} {d.workflow_id} (run {d.run_id})")
            console.print(f"  {d.message}", markup=False)
        verdict = "[green]all replay[/]" if report.ok else f"[red]{len(report.diverged)} diverge[/]"
        console.print(
            f"replayed {len(report.replayed)} histories of {config.temporal_namespace}/"
            f"{config.task_queue} (running, or closed in the last {since_hours:g} h): {verdict}"
        )
        return report.ok

    try:
        ok = asyncio.run(go())
    except TemporalUnavailable as err:
        fail(f"could not replay: Temporal unavailable: {err}", REPLAY_COULD_NOT_RUN)
    except RPCError as err:
        # Refused by the server (unknown namespace, no permission): nothing was judged.
        fail(f"could not replay: {err.status.name}: {err.message}", REPLAY_COULD_NOT_RUN)
    except (OSError, RuntimeError, ValueError) as err:
        # A certificate file that cannot be read, a connection the SDK refuses to make.
        fail(f"could not replay: {err}", REPLAY_COULD_NOT_RUN)
    except KeyboardInterrupt:
        fail("could not replay: interrupted", REPLAY_COULD_NOT_RUN)
    raise typer.Exit(REPLAY_ALL if ok else REPLAY_DIVERGED)


@app.command("codec-server")
def codec_server() -> None:
    """Serve the codec server the web UI and `temporal` CLI call to decode payloads."""
    import uvicorn

    from api.codec_server import create_codec_app
    from runtime.encryption import EncryptionCodec, PayloadKeyError

    config = settings()
    configure_logging(config)
    if not config.payload_keys:
        fail(
            "set payload_keys (files virtflow_payload_keys__<id> in the secrets directory)",
            EXIT_BAD_INPUT,
        )
    try:
        codec = EncryptionCodec(config.payload_keys, config.payload_encryption_key_id)
    except PayloadKeyError as err:
        fail(str(err), EXIT_BAD_INPUT)
    codec_app = create_codec_app(codec, config.codec_server_tokens, config.codec_origins)
    uvicorn.run(codec_app, host=config.api_host, port=config.codec_server_port, log_config=None)


def _command_connection(config: Settings) -> ClientProvider:
    """The connection of an operator command: the worker's settings, none of its servers (the
    process runtime's Prometheus endpoint would bind the `metrics_port` a worker in the same
    Pod already holds)."""
    from runtime.connect import connect
    from runtime.telemetry import command_runtime

    async def factory() -> Client:
        return await connect(config, command_runtime())

    return ClientProvider(factory)


async def _client(config: Settings) -> Client:
    return await _command_connection(config).get()


@app.command()
def prepare(
    file: Annotated[Path | None, typer.Option("--file", "-f", help="SpareRequest JSON")] = None,
    cluster: Annotated[str | None, typer.Option(help="Cluster the spare joins")] = None,
    request_id: Annotated[str | None, typer.Option(help="Idempotency key")] = None,
    cpu: Annotated[int | None, typer.Option(help="vCPUs")] = None,
    memory_mb: Annotated[int | None, typer.Option(help="Memory in MiB")] = None,
    gpu: Annotated[int | None, typer.Option(help="GPUs")] = None,
    disk_gb: Annotated[int | None, typer.Option(help="Disk in GB")] = None,
    device: Annotated[
        list[str] | None,
        typer.Option(help="Device NAME=COUNT, e.g. xilinx.com/u250=1 (repeatable)"),
    ] = None,
    pool: Annotated[str | None, typer.Option(help="Host pool")] = None,
    inventory: Annotated[str | None, typer.Option(help="Configured inventory name")] = None,
    receiver: Annotated[
        list[str] | None, typer.Option("--receiver", help="Configured receiver (repeatable)")
    ] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Start and return")] = False,
) -> None:
    """Ask the API for a spare and follow it until Ready (exit 0) or failure (exit 1)."""
    body: dict[str, Any] = read_json(file) if file else {}
    options = {
        "cluster": cluster,
        "request_id": request_id,
        "cpu": cpu,
        "memory_mb": memory_mb,
        "gpu": gpu,
        "disk_gb": disk_gb,
        "devices": _devices(device) if device else None,
        "pool": pool,
        "inventory": inventory,
        "receivers": receiver or None,
    }
    body.update({k: v for k, v in options.items() if v is not None})
    try:
        SpareRequest.model_validate(
            {k: v for k, v in body.items() if k not in ("count", "partial")}
        )
    except ValidationError as err:
        fail(f"bad request: {_one_line(err)}", EXIT_BAD_INPUT)
    config = settings()

    async def go() -> int:
        client = api_client(config)
        response = await prepare_spare.asyncio_detailed(
            client=client, body=PrepareBody.from_dict(body)
        )
        accepted = answer(response, PrepareAccepted)
        console.print(f"spare [bold]{accepted.spare_id}[/] started: {accepted.ui_url}")
        if no_wait:
            return 0
        return await follow_spare(client, accepted.spare_id, console)

    raise typer.Exit(run(go()))


def _devices(options: list[str]) -> dict[str, int]:
    """`--device NAME=COUNT` options as the request's `devices`; a bad one exits 2."""
    devices: dict[str, int] = {}
    for option in options:
        name, sep, count = option.rpartition("=")
        if not sep or not count.strip().isdigit():
            fail(f"bad --device {option!r}: expected NAME=COUNT", EXIT_BAD_INPUT)
        devices[name.strip()] = devices.get(name.strip(), 0) + int(count)
    return devices


# A watch ends at a phase the spare stays in, or when its workflow ends.
SETTLED = {Phase.READY.value, Phase.RELEASED.value, Phase.FAILED.value, Phase.CANCELLED.value}


@app.command()
def status(
    spare_id: Annotated[str, typer.Argument(help="Spare (workflow) id")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Live view until Ready or ended (Ctrl-C stops)")
    ] = False,
) -> None:
    """Show a spare's phase, host, VM and what it waits for."""
    config = settings()

    async def go() -> None:
        client = api_client(config)
        if watch:
            await watch_spare(client, spare_id, SETTLED, console)
            return
        view = await get_view(client, spare_id)
        if as_json:
            console.print_json(json.dumps(view.to_dict()))
        else:
            console.print(status_table(view))

    run(go())


@app.command()
def release(
    spare_id: Annotated[str, typer.Argument(help="Spare (workflow) id")],
    reason: Annotated[str, typer.Option(help="Why, recorded in history")] = "released by CLI",
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it until released (exit 0) or failed (1)")
    ] = False,
) -> None:
    """Release a Ready spare: drain, delete the Node, destroy the VM, free the capacity."""
    config = settings()

    async def go() -> int:
        client = api_client(config)
        response = await release_spare.asyncio_detailed(
            spare_id, client=client, body=ReleaseRequest(reason=reason)
        )
        result = answer(response, SpareStatus)
        console.print(f"spare {spare_id}: release accepted (phase was {_phase(result)})")
        if not wait:
            return 0
        view = await watch_spare(
            client, spare_id, {Phase.RELEASED.value, Phase.FAILED.value}, console
        )
        return 0 if _phase(view) == Phase.RELEASED.value else EXIT_FAILED

    raise typer.Exit(run(go()))


@app.command()
def cancel(
    spare_id: Annotated[str, typer.Argument(help="Spare (workflow) id")],
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it until it has compensated and ended")
    ] = False,
) -> None:
    """Cancel a spare (the emergency stop): it undoes what it did, then ends. Operator role."""
    config = settings()

    async def go() -> int:
        client = api_client(config)
        answer(await cancel_spare.asyncio_detailed(spare_id, client=client), CancelAccepted)
        console.print(f"spare {spare_id}: cancel requested")
        if not wait:
            return 0
        view = await watch_spare(client, spare_id, set(), console)
        return 0 if view.workflow_status in ("canceled", "cancelled") else EXIT_FAILED

    raise typer.Exit(run(go()))


@app.command()
def explain(
    request_file: Annotated[Path, typer.Argument(help="Placement JSON (PLACEMENT.md)")],
    inventory: Annotated[
        str | None, typer.Option(help="Take hosts from this configured inventory")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON")] = False,
) -> None:
    """Where would this VM go and why not elsewhere? Creates nothing. Exit 1 if nothing fits."""
    from api.explain import explain as run_explain

    data = read_json(request_file)
    if inventory is not None:
        data["inventory"] = inventory
    try:
        body = ExplainBody.model_validate(data)
    except ValidationError as err:
        fail(f"bad request: {_one_line(err)}", EXIT_BAD_INPUT)
    config = settings()
    result = run(run_explain(config, body, _command_connection(config)))
    if as_json:
        console.print_json(result.model_dump_json())
    else:
        console.print(result.table, highlight=False, markup=False)
    raise typer.Exit(0 if result.decision.get("host") else EXIT_FAILED)


MAX_PAGE_SIZE = 500


@app.command("list")
def list_spares(
    cluster: Annotated[str | None, typer.Option(help="Only this cluster")] = None,
    pool: Annotated[str | None, typer.Option(help="Only this pool ('any': no pool asked)")] = None,
    phase: Annotated[Phase | None, typer.Option(help="Only spares in this phase")] = None,
    host: Annotated[str | None, typer.Option(help="Only spares on this host")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many (paged through)")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the spares as JSON")] = False,
) -> None:
    """List spares, newest first (Temporal visibility through the API), page after page."""
    config = settings()

    async def go() -> None:
        client = api_client(config)
        spares: list[Any] = []
        token: str | None = None
        while len(spares) < limit:
            response = await list_spares_op.asyncio_detailed(
                client=client,
                cluster=cluster,
                pool=pool,
                host=host,
                phase=ApiPhase(phase.value) if phase else UNSET,
                page_size=min(limit - len(spares), MAX_PAGE_SIZE),
                page_token=token or UNSET,
            )
            page = answer(response, SparePage)
            spares += page.spares
            token = _set(page.next_page_token)
            if not token:
                break
        if as_json:
            console.print_json(json.dumps([s.to_dict() for s in spares]))
            return
        table = Table("spare", "cluster", "pool", "host", "phase", "workflow", "started")
        for spare in spares:
            started = _set(spare.started_at)
            table.add_row(
                spare.spare_id,
                _set(spare.cluster) or "-",
                _set(spare.pool) or "-",
                _set(spare.host) or "-",
                _set(spare.phase) or "-",
                spare.workflow_status,
                f"{started:%Y-%m-%d %H:%M:%S}" if started else "-",
            )
        console.print(table)
        more = f" (more: raise --limit above {limit})" if token else ""
        console.print(f"{len(spares)} spare(s){more}", highlight=False)

    run(go())


@app.command()
def inventory(
    name: Annotated[str, typer.Argument(help="Configured inventory")] = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print the view as JSON")] = False,
) -> None:
    """Hosts with their free capacity and the ledger's pending reservations."""
    from api.inventory_view import inventory_view

    config = settings()

    async def go() -> None:
        view = await inventory_view(await _client(config), config, name)
        if as_json:
            console.print_json(view.model_dump_json())
            return
        table = Table("host", "pool", "rack", "free cpu", "free mem MiB", "free gpu")
        table.add_column("free disk GB")
        table.add_column("free devices", overflow="fold")
        table.add_column("vms")
        table.add_column("reserved for", overflow="fold")
        for h in view.hosts:
            notes = [] if h.schedulable else ["cordoned"]
            notes += ["dedicated"] if h.dedicated else []
            table.add_row(
                h.name + (f" ({', '.join(notes)})" if notes else ""),
                h.pool or "-",
                h.rack or "-",
                f"{h.cpu_free}/{h.cpu_capacity}",
                f"{h.memory_mb_free}/{h.memory_mb_capacity}",
                f"{h.gpu_free}/{h.gpu_capacity}",
                f"{h.disk_gb_free}/{h.disk_gb_capacity}" if h.disk_gb_capacity else "-",
                ", ".join(f"{d} {free}/{cap}" for d, (free, cap) in h.devices_free.items()) or "-",
                f"{h.vm_count}/{h.vm_quota if h.vm_quota is not None else '-'}",
                ", ".join(h.reserved_for) or "-",
            )
        console.print(table)
        console.print(
            f"inventory {view.inventory}: {len(view.hosts)} host(s), "
            f"{len(view.reservations)} reservation(s) in the ledger",
            highlight=False,
        )

    run(go())


def run_cli() -> NoReturn:
    """The `virtflow` entry point.

    It ends the process without the interpreter's teardown: the Temporal SDK's native runtime
    can crash there (SIGSEGV) after all the work is done, which would turn a success into a
    failure exit code. Everything that must be cleaned up is closed by the commands themselves.
    """
    try:
        app(prog_name="virtflow")
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
