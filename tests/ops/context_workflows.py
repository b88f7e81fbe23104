"""A parent and a child workflow whose commands carry payloads of each kind the worker's
serialization-context lookups tell apart (tests/ops/test_sandbox_runner.py). A module of its
own: the sandbox imports a workflow's module again, and the test module imports the worker."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

ECHO = "sandbox_context_echo"


@activity.defn(name=ECHO)
async def echo(text: str) -> str:
    return text


@workflow.defn(name="SandboxContextChild")
class ContextChild:
    @workflow.run
    async def run(self, text: str) -> str:
        return text + "!"


@workflow.defn(name="SandboxContextParent")
class ContextParent:
    @workflow.run
    async def run(self, text: str) -> str:
        timeout = timedelta(seconds=30)
        text = await workflow.execute_activity(echo, text, start_to_close_timeout=timeout)
        text = await workflow.execute_local_activity(echo, text, start_to_close_timeout=timeout)
        return await workflow.execute_child_workflow(
            ContextChild.run, text, id=f"{workflow.info().workflow_id}-child"
        )
