"""The `virtflow` command line.

Exit codes: 0 ok, 1 a failed spare or a runtime error (Temporal down, worker died), 2 bad
input (invalid request, unknown spare, bad settings). Errors are one readable line.
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

import typer
from pydantic import ValidationError
from rich.console import Console
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
from api.spare_ops import SpareView, spare_status
from contracts.spare import Phase, ReleaseRequest, SpareRequest
from runtime.logging_setup import configure_logging
from runtime.settings import CONFIG_ENV, Settings, get_settings

from .config import config_app

app = typer.Typer(
    name="virtflow",
    help="Spare-node provisioning on Temporal.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(config_app, name="config")
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
    err_console.print(f"[red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _one_line(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "input"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def settings() -> Settings:
    try:
        return get_settings()
    except ValidationError as err:
        fail(f"bad settings: {_one_line(err)}", EXIT_BAD_INPUT)
    except FileNotFoundError as err:
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


def print_status(view: SpareView, out: Console) -> None:
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    vmid = view.vmid or (view.vm.vmid if view.vm else None)
    table.add_row("spare", view.spare_id)
    table.add_row("phase", f"{view.phase} (workflow {view.workflow_status})")
    table.add_row("cluster / pool", f"{view.cluster} / {view.pool or '-'}")
    table.add_row("host / vmid", f"{view.host or '-'} / {vmid or '-'}")
    if view.vm is not None:
        table.add_row("vm", f"{view.vm.name} ip {view.vm.ip or '-'} mac {view.vm.mac or '-'}")
    if view.waiting_for:
        table.add_row("waiting for", ", ".join(view.waiting_for))
    if view.error:
        table.add_row("error", view.error)
    for step in view.steps:
        table.add_row(f"  {step.at:%H:%M:%S}", f"{step.phase} {step.detail}")
    table.add_row("history", view.ui_url)
    out.print(table)


async def follow_spare(client: Client, config: Settings, spare_id: str, out: Console) -> int:
    """Print each new step until the spare is Ready (0) or can no longer be (1)."""
    shown = 0
    waiting: list[str] = []
    while True:
        view = await spare_status(client, config, spare_id)
        for step in view.steps[shown:]:
            detail = f" - {step.detail}" if step.detail else ""
            out.print(f"  [cyan]{step.phase:<17}[/]{detail}")
        shown = len(view.steps)
        if view.waiting_for and view.waiting_for != waiting:
            out.print(f"  {'':<17}waiting for: {', '.join(view.waiting_for)}")
        waiting = view.waiting_for
        if view.phase == Phase.READY:
            out.print(f"[green]ready[/] on {view.host}")
            return 0
        if view.phase in NOT_READY_END or view.workflow_status != "running":
            out.print(f"[red]{view.phase}[/]: {view.error or view.workflow_status}")
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


@app.command()
def dev(
    ready_delay: Annotated[
        float, typer.Option(help="Seconds the lab kubelet takes to be Ready")
    ] = 5.0,
) -> None:
    """Run Temporal, the lab, the worker, the API and the receiver until Ctrl-C."""
    from .dev import run_dev

    config = settings()
    configure_logging(config)
    raise typer.Exit(asyncio.run(run_dev(config, console, ready_delay)))


@app.command()
def demo() -> None:
    """Provision and release one spare end to end on a fresh lab, then exit."""
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
        client = await _client(config)
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

    config = settings()
    configure_logging(config)
    uvicorn.run(create_app(config), host=config.api_host, port=config.api_port, log_config=None)


@app.command()
def receiver() -> None:
    """Serve the reference webhook receiver with VIRTFLOW_RECEIVER_SECRETS."""
    import uvicorn

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
    uvicorn.run(receiver_app, host=config.api_host, port=config.receiver_port, log_config=None)


async def _client(config: Settings) -> Client:
    from api.temporal_client import ClientProvider, connect_factory

    return await ClientProvider(connect_factory(config)).get()


@app.command()
def prepare(
    file: Annotated[Path | None, typer.Option("--file", "-f", help="SpareRequest JSON")] = None,
    cluster: Annotated[str | None, typer.Option(help="Cluster the spare joins")] = None,
    request_id: Annotated[str | None, typer.Option(help="Idempotency key")] = None,
    cpu: Annotated[int | None, typer.Option(help="vCPUs")] = None,
    memory_mb: Annotated[int | None, typer.Option(help="Memory in MiB")] = None,
    gpu: Annotated[int | None, typer.Option(help="GPUs")] = None,
    pool: Annotated[str | None, typer.Option(help="Host pool")] = None,
    inventory: Annotated[str | None, typer.Option(help="Configured inventory name")] = None,
    receiver: Annotated[
        list[str] | None, typer.Option("--receiver", help="Configured receiver (repeatable)")
    ] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Start and return")] = False,
) -> None:
    """Start a spare through Temporal and follow it until Ready (exit 0) or failure (exit 1)."""
    from api.spare_ops import start_spare

    body: dict[str, Any] = read_json(file) if file else {}
    options = {
        "cluster": cluster,
        "request_id": request_id,
        "cpu": cpu,
        "memory_mb": memory_mb,
        "gpu": gpu,
        "pool": pool,
        "inventory": inventory,
        "receivers": receiver or None,
    }
    body.update({k: v for k, v in options.items() if v is not None})
    try:
        request = SpareRequest.model_validate(body)
    except ValidationError as err:
        fail(f"bad request: {_one_line(err)}", EXIT_BAD_INPUT)
    config = settings()

    async def go() -> int:
        client = await _client(config)
        accepted = await start_spare(client, config, request)
        console.print(f"spare [bold]{accepted.spare_id}[/] started: {accepted.ui_url}")
        if no_wait:
            return 0
        return await follow_spare(client, config, accepted.spare_id, console)

    raise typer.Exit(run(go()))


@app.command()
def status(
    spare_id: Annotated[str, typer.Argument(help="Spare (workflow) id")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON")] = False,
) -> None:
    """Show a spare's phase, host, VM and what it waits for."""
    from api.spare_ops import spare_status

    config = settings()

    async def go() -> None:
        view = await spare_status(await _client(config), config, spare_id)
        if as_json:
            console.print_json(view.model_dump_json())
        else:
            print_status(view, console)

    run(go())


@app.command()
def release(
    spare_id: Annotated[str, typer.Argument(help="Spare (workflow) id")],
    reason: Annotated[str, typer.Option(help="Why, recorded in history")] = "released by CLI",
) -> None:
    """Release a spare: drain, delete the Node, destroy the VM, free the capacity."""
    from api.spare_ops import release_spare

    config = settings()

    async def go() -> None:
        result = await release_spare(await _client(config), spare_id, ReleaseRequest(reason=reason))
        console.print(f"spare {spare_id}: release accepted (phase was {result.phase})")

    run(go())


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
    from api.temporal_client import ClientProvider, connect_factory

    data = read_json(request_file)
    if inventory is not None:
        data["inventory"] = inventory
    try:
        body = ExplainBody.model_validate(data)
    except ValidationError as err:
        fail(f"bad request: {_one_line(err)}", EXIT_BAD_INPUT)
    config = settings()
    result = run(run_explain(config, body, ClientProvider(connect_factory(config))))
    if as_json:
        console.print_json(result.model_dump_json())
    else:
        console.print(result.table, highlight=False, markup=False)
    raise typer.Exit(0 if result.decision.get("host") else EXIT_FAILED)


@app.command("list")
def list_spares(
    cluster: Annotated[str | None, typer.Option(help="Only this cluster")] = None,
    pool: Annotated[str | None, typer.Option(help="Only this pool ('any': no pool asked)")] = None,
    phase: Annotated[Phase | None, typer.Option(help="Only spares in this phase")] = None,
    host: Annotated[str | None, typer.Option(help="Only spares on this host")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="At most this many")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON")] = False,
) -> None:
    """List spares, newest first, through Temporal visibility (search attributes)."""
    from api.spare_list import SpareFilter, list_spares

    try:
        spare_filter = SpareFilter(cluster=cluster, pool=pool, phase=phase, host=host)
    except ValidationError as err:
        fail(f"bad filter: {_one_line(err)}", EXIT_BAD_INPUT)
    config = settings()

    async def go() -> None:
        page = await list_spares(await _client(config), config, spare_filter, page_size=limit)
        if as_json:
            console.print_json(page.model_dump_json())
            return
        table = Table("spare", "cluster", "pool", "host", "phase", "workflow", "started")
        for spare in page.spares:
            started = f"{spare.started_at:%Y-%m-%d %H:%M:%S}" if spare.started_at else "-"
            table.add_row(
                spare.spare_id,
                spare.cluster or "-",
                spare.pool or "-",
                spare.host or "-",
                spare.phase or "-",
                spare.workflow_status,
                started,
            )
        console.print(table)
        more = " (more: raise --limit)" if page.next_page_token else ""
        console.print(f"{len(page.spares)} spare(s){more}", highlight=False)

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
        table = Table("host", "pool", "rack", "free cpu", "free mem MiB", "free gpu", "vms")
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
