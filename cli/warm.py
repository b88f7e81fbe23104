"""`virtflow warm`: the warm pools, through the API."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from virtflow_client import AuthenticatedClient
from virtflow_client.api.warm_pools import list_warm_pools
from virtflow_client.models import WarmPoolList

from .spare_api import answer

warm_app = typer.Typer(help="Warm pools: spares kept Ready ahead of demand.", no_args_is_help=True)
console = Console()


@warm_app.command("list")
def list_pools(
    as_json: Annotated[bool, typer.Option("--json", help="Print the pools as JSON")] = False,
) -> None:
    """Each warm pool: its size, spares Ready and coming up, claims so far, why it is short."""
    from .common import call_api

    async def go(client: AuthenticatedClient) -> None:
        pools = answer(await list_warm_pools.asyncio_detailed(client=client), WarmPoolList)
        if as_json:
            console.print_json(json.dumps(pools.to_dict()))
            return
        table = Table("pool", "cluster", "shape", "size", "ready", "coming up", "claimed")
        table.add_column("short because", overflow="fold")
        for p in pools.warm_pools:
            gpu = f", {p.gpu} GPU" if p.gpu else ""
            short = p.short_reason if isinstance(p.short_reason, str) else "-"
            table.add_row(
                p.name,
                p.cluster,
                f"{p.cpu} CPU, {p.memory_mb} MiB{gpu}",
                str(p.size),
                str(p.ready),
                str(p.coming_up),
                str(p.claimed),
                short,
            )
        console.print(table)

    call_api(go)
