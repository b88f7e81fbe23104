"""The pre-deploy gate: replay a namespace's real histories against the code installed here.

A build that changes what a workflow does on replay would fail the workflow tasks of every
spare, release and ledger still running on it. Before a new build takes traffic, `virtflow
replay` fetches the histories of every running virtflow workflow and of those closed within
`--since`, replays each with the Replayer in the worker's own sandbox, and reports any that
diverge (`NondeterminismError`, or any other failure to replay).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer
from temporalio.workflow import NondeterminismError

from .worker import WORKFLOWS, workflow_runner


@dataclass(frozen=True)
class Divergence:
    workflow_id: str
    run_id: str
    workflow_type: str
    nondeterministic: bool
    message: str


@dataclass
class ReplayReport:
    replayed: list[tuple[str, str]] = field(default_factory=list)  # (workflow id, type)
    diverged: list[Divergence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.diverged


def replay_query(task_queue: str, since: timedelta, now: datetime, types: Sequence[str]) -> str:
    """Visibility query: virtflow's workflows on its task queue, running or recently closed."""
    kinds = " OR ".join(f"WorkflowType = '{name}'" for name in types)
    closed_after = (now - since).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"TaskQueue = '{task_queue}' AND ({kinds}) "
        f"AND (ExecutionStatus = 'Running' OR CloseTime > '{closed_after}')"
    )


async def replay_namespace(
    client: Client,
    task_queue: str,
    since: timedelta,
    limit: int,
    workflows: Sequence[type] = WORKFLOWS,
) -> ReplayReport:
    """Replay up to `limit` histories (newest first) against `workflows`; a divergence is
    reported, never raised."""
    names = {_type_name(cls): cls for cls in workflows}
    query = replay_query(task_queue, since, datetime.now(UTC), sorted(names))
    types: dict[str, str] = {}

    async def histories() -> AsyncIterator[WorkflowHistory]:
        async for execution in client.list_workflows(query, limit=limit):
            types[execution.run_id] = execution.workflow_type
            yield await client.get_workflow_handle(
                execution.id, run_id=execution.run_id
            ).fetch_history()

    replayer = Replayer(
        workflows=list(workflows),
        data_converter=client.data_converter,
        workflow_runner=workflow_runner(),
    )
    report = ReplayReport()
    async with replayer.workflow_replay_iterator(histories()) as results:
        async for result in results:
            history = result.history
            kind = types.get(history.run_id, "?")
            report.replayed.append((history.workflow_id, kind))
            if result.replay_failure is not None:
                report.diverged.append(
                    Divergence(
                        workflow_id=history.workflow_id,
                        run_id=history.run_id,
                        workflow_type=kind,
                        nondeterministic=isinstance(result.replay_failure, NondeterminismError),
                        message=str(result.replay_failure),
                    )
                )
    return report


def _type_name(cls: type) -> str:
    definition = getattr(cls, "__temporal_workflow_definition")
    name: str = definition.name
    return name
