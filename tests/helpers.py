"""Small test helpers shared by the suites."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def assert_eventually(
    check: Callable[[], Awaitable[T]],
    timeout: float = 20.0,
    interval: float = 0.1,
) -> T:
    """Retry `check` until it stops raising AssertionError, or fail with its last error."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(interval)
