"""Before a spare closes, its notifier waits for every delivery: a delivery cancelled because
its receiver answered 410 Gone is no failure, even one cancelled before it ever ran (then its
own handler never saw the cancellation); any other failure still comes out."""

from __future__ import annotations

import asyncio

import pytest

from workflows.notifier import Notifier


async def _never_reached() -> None:
    raise AssertionError("a cancelled delivery ran")


async def _broken() -> None:
    raise RuntimeError("not a cancellation")


async def test_a_delivery_cancelled_before_it_ran_does_not_fail_the_spare() -> None:
    notifier = Notifier("spare-lab-r1", "lab", None)
    delivered = asyncio.create_task(asyncio.sleep(0))
    cancelled = asyncio.create_task(_never_reached())
    cancelled.cancel()  # as _disable does, before the task's first step
    notifier._pending.extend([delivered, cancelled])

    await notifier.drain()

    assert delivered.done() and cancelled.cancelled()
    assert notifier._pending == []


async def test_a_delivery_that_failed_otherwise_still_fails_the_drain() -> None:
    notifier = Notifier("spare-lab-r1", "lab", None)
    notifier._pending.append(asyncio.create_task(_broken()))

    with pytest.raises(RuntimeError, match="not a cancellation"):
        await notifier.drain()
