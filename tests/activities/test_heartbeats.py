"""QuietHeartbeat: nothing reaches the server while an activity is young."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

from temporalio.testing import ActivityEnvironment

from activities.heartbeats import QUIET_SECONDS, QuietHeartbeat


def recording_env() -> tuple[ActivityEnvironment, list[tuple[Any, ...]]]:
    env, beats = ActivityEnvironment(), list[tuple[Any, ...]]()
    env.on_heartbeat = lambda *details: beats.append(details)
    return env, beats


async def test_an_activity_done_within_the_quiet_period_sends_no_heartbeat() -> None:
    env, beats = recording_env()

    async def fast() -> None:
        quiet = QuietHeartbeat()
        flush = asyncio.create_task(quiet.flush_after_quiet())
        quiet.beat("starting")
        quiet.beat("almost done")
        flush.cancel()

    await env.run(fast)
    assert beats == []


async def test_the_latest_held_beat_goes_out_when_the_quiet_period_ends() -> None:
    env, beats = recording_env()
    # A 1.5 s heartbeat timeout shortens the quiet period to a third of it.
    env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=1.5))

    async def slow() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        quiet = QuietHeartbeat()
        quiet.beat("a")
        quiet.beat("b")
        await quiet.flush_after_quiet()
        assert beats == [("b",)]
        quiet.beat("c")  # past the quiet period: sent at once
        assert beats == [("b",), ("c",)]
        return loop.time() - started

    elapsed = await env.run(slow)
    assert 0.5 - 0.05 <= elapsed < QUIET_SECONDS
