"""What the Temporal dev server charges for what a spare does besides running activities.

Run: .venv/bin/python bench/engine_costs.py [--workflows 150] [--rounds 3]

Three workflows of 14 trivial activities each, on the dev server `make dev` runs (SQLite file,
the same pragmas and search attributes), with the worker in this process:
- plain: the activities only, as the orchestration benchmark's baseline;
- upserts: the same plus 5 search-attribute upserts (a spare's phases);
- child: 9 activities, then a child workflow running the other 5 (a spare's release).
It prints the server's CPU per workflow for each. The server gets slower as its database
grows, so each round runs the three in a different order and the cost of an upsert or a
child is the difference from `plain` averaged over the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path
from statistics import mean

import psutil
from temporalio import activity, workflow
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contracts.common import PHASE, SEARCH_ATTRIBUTES
from runtime.temporal_binaries import (
    DEV_SERVER_DYNAMIC_CONFIG,
    DEV_SERVER_SQLITE_PRAGMAS,
    temporal_cli,
)

STEPS = 14
UPSERT_AT = frozenset({1, 4, 7, 10, 13})
CHILD_STEPS = 5
TASK_QUEUE = "engine-costs"


@activity.defn
async def step(n: int) -> int:
    return n


async def run_steps(count: int, upsert_at: frozenset[int] = frozenset()) -> None:
    for n in range(count):
        if n in upsert_at:
            workflow.upsert_search_attributes([PHASE.value_set(f"phase-{n}")])
        await workflow.execute_activity(step, n, start_to_close_timeout=timedelta(seconds=60))


@workflow.defn
class Plain:
    @workflow.run
    async def run(self) -> None:
        await run_steps(STEPS)


@workflow.defn
class Upserts:
    @workflow.run
    async def run(self) -> None:
        await run_steps(STEPS, UPSERT_AT)


@workflow.defn
class Child:
    @workflow.run
    async def run(self) -> None:
        await run_steps(CHILD_STEPS)


@workflow.defn
class WithChild:
    @workflow.run
    async def run(self) -> None:
        await run_steps(STEPS - CHILD_STEPS)
        await workflow.execute_child_workflow(Child.run, id=f"{workflow.info().workflow_id}-c")


KINDS = {"plain": Plain, "upserts": Upserts, "child": WithChild}
ORDERS = [("plain", "upserts", "child"), ("child", "upserts", "plain")]


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


async def burst(env: WorkflowEnvironment, server: psutil.Process, kind: str, n: int) -> float:
    """Server CPU milliseconds per workflow for `n` concurrent workflows of one kind."""
    before = _cpu(server)
    handles = await asyncio.gather(
        *(
            env.client.start_workflow(
                KINDS[kind].__name__, id=f"{kind}-{uuid.uuid4().hex[:10]}", task_queue=TASK_QUEUE
            )
            for _ in range(n)
        )
    )
    await asyncio.gather(*(h.result() for h in handles))
    return 1000 * (_cpu(server) - before) / n


async def main(workflows: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--db-filename", f"{tmp}/temporal.db", *DEV_SERVER_SQLITE_PRAGMAS]
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(temporal_cli()),
            search_attributes=list(SEARCH_ATTRIBUTES),
            dev_server_extra_args=[*args, *DEV_SERVER_DYNAMIC_CONFIG, "--log-level", "error"],
        )
        async with env:
            server = next(
                p for p in psutil.Process().children(recursive=True) if "temporal" in p.name()
            )
            seen: dict[str, list[float]] = {kind: [] for kind in KINDS}
            async with Worker(
                env.client,
                task_queue=TASK_QUEUE,
                workflows=[*KINDS.values(), Child],
                activities=[step],
                # Only the server's CPU is measured; the sandbox would only slow the run.
                workflow_runner=UnsandboxedWorkflowRunner(),
            ):
                await burst(env, server, "plain", 20)  # warm-up
                for r in range(rounds):
                    for kind in ORDERS[r % len(ORDERS)]:
                        ms = await burst(env, server, kind, workflows)
                        seen[kind].append(ms)
                        print(json.dumps({"round": r + 1, "kind": kind, "server_ms": round(ms, 1)}))
    plain = mean(seen["plain"])
    upsert = (mean(seen["upserts"]) - plain) / len(UPSERT_AT)
    child = mean(seen["child"]) - plain
    print(json.dumps({"server_ms_per_workflow": round(plain, 1)}))
    print(json.dumps({"server_ms_per_upsert": round(upsert, 2)}))
    print(json.dumps({"server_ms_per_child_workflow": round(child, 1)}))
    print(
        f"\nserver CPU: {plain:.1f} ms per workflow of {STEPS} activities; "
        f"{upsert:.2f} ms per search-attribute upsert; "
        f"{child:.1f} ms for moving {CHILD_STEPS} of them into a child workflow"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workflows", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=4)
    opts = parser.parse_args()
    asyncio.run(main(opts.workflows, opts.rounds))
