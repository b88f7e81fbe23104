"""A build whose PrepareSpare cannot replay the histories of the real one: it waits on a
timer where the real workflow's first command is an activity. Registered under the real
workflow's name, it stands for a careless change of workflow code."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.spare import PREPARE_SPARE, SpareRequest


@workflow.defn(name=PREPARE_SPARE)
class ChangedPrepareSpare:
    @workflow.run
    async def run(self, request: SpareRequest) -> None:
        await workflow.sleep(timedelta(seconds=1))
