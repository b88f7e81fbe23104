"""The placement questions, answered without creating anything: `explain` (where would this
VM go, and why not elsewhere?) and `inventory` (each host's free room and the ledger's
reservations). They read the inventory and the ledger themselves, as the API does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from api.explain import ExplainBody

from .common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    command_client,
    command_connection,
    console,
    fail,
    one_line,
    read_json,
    run,
    settings,
)


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
        fail(f"bad request: {one_line(err)}", EXIT_BAD_INPUT)
    config = settings()
    result = run(run_explain(config, body, command_connection(config)))
    if as_json:
        console.print_json(result.model_dump_json())
    else:
        console.print(result.table, highlight=False, markup=False)
    raise typer.Exit(0 if result.decision.get("host") else EXIT_FAILED)


def inventory(
    name: Annotated[str, typer.Argument(help="Configured inventory")] = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print the view as JSON")] = False,
) -> None:
    """Hosts with their free capacity and the ledger's pending reservations."""
    from api.inventory_view import inventory_view

    config = settings()

    async def go() -> None:
        view = await inventory_view(await command_client(config), config, name)
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
                h.room("cpu"),
                h.room("memory_mb"),
                h.room("gpu"),
                h.room("disk_gb") if h.disk_gb_capacity else "-",
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
