"""`virtflow replay`: the deploy gate that replays running and recent histories against the
code installed here (worker/replay.py)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from api.errors import TemporalUnavailable

from .common import command_client, console, fail, settings

# `virtflow replay`'s verdicts: a deploy pipeline tells "B would break a running spare" (1)
# from "the gate could not run" (2), which says nothing about B.
REPLAY_ALL = 0


REPLAY_DIVERGED = 1


REPLAY_COULD_NOT_RUN = 2


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
        client = await command_client(config)
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
