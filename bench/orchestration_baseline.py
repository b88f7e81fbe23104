"""The engine alone: a minimal workflow that runs N trivial activities one after another.

The orchestration benchmark runs it on the same server and worker as PrepareSpare, with the
same number of activities a spare runs, so the ratio of the two is what virtflow adds.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

MINIMAL_WORKFLOW = "BenchMinimal"


@activity.defn(name="bench_trivial")
async def trivial(step: int) -> int:
    return step


@workflow.defn(name=MINIMAL_WORKFLOW)
class MinimalWorkflow:
    @workflow.run
    async def run(self, steps: int) -> int:
        for step in range(steps):
            await workflow.execute_activity(
                trivial, step, start_to_close_timeout=timedelta(seconds=60)
            )
        return steps
