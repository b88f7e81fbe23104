"""A workflow whose every task fails (a plain exception is a task failure, retried, not a
workflow failure): what makes the SDK serve its task-failure series in the metrics test."""

from __future__ import annotations

from temporalio import workflow


@workflow.defn(name="FailingTask")
class FailingTask:
    @workflow.run
    async def run(self) -> None:
        raise RuntimeError("this workflow task fails on purpose")
