"""Activities that change the world, awaited so that a cancel never races them.

Compensation undoes what a step did. If it starts while the cancelled step is still running,
it undoes too early: the destroy runs, then the still-running playbook defines the VM, and
nothing is left to remove it. So a step with side effects is started with
`STOP_FIRST` (the engine then reports the activity cancelled only once it has stopped, not
when the cancel is asked for), and awaited with `until_stopped`, which on a cancel waits for
that stop before the cancel goes on to compensation. Its activity must heartbeat (that is
how a cancel reaches it) and stop its own work (a subprocess, a pipeline) before it ends.

Plain deterministic code with no state: passed through the sandbox (worker/worker.py).
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from temporalio import workflow

T = TypeVar("T")

STOP_FIRST = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED


async def until_stopped(handle: workflow.ActivityHandle[T]) -> T:
    """The activity's result; on a cancel, cancel the activity, wait until it has stopped
    (cancelled, finished or failed), then raise the cancel.

    An activity that finished despite the cancel still did its work: the cancel goes on all
    the same, and compensation removes what it made.
    """
    try:
        return await asyncio.shield(handle)
    except asyncio.CancelledError:
        handle.cancel()
        while not handle.done():
            try:
                await asyncio.shield(handle)
            except (asyncio.CancelledError, Exception):
                # A repeated cancel waits too; how the activity ended no longer matters.
                continue
        raise
