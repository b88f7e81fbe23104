"""Holding something for a caller: until it is released, or its time is up.

ScheduleHost holds a reserved host until the caller releases the task or the hold expires
(PrepareSpare's hold of a Ready spare is `held_spare.py`'s, with its health watch).
Deterministic, no state of its own: the worker passes it through the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow


async def hold_until_released(
    released: Callable[[], str | None], seconds: int, expired: str
) -> str:
    """The reason `released()` gives once it gives one, or `expired` after `seconds`.

    A release asked for before the hold begins ends it at once, without starting a timer.
    """
    reason = released()
    if reason is not None:
        return reason
    try:
        await workflow.wait_condition(
            lambda: released() is not None, timeout=timedelta(seconds=seconds)
        )
    except TimeoutError:
        return expired
    reason = released()
    assert reason is not None
    return reason
