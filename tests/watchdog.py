"""A stuck async test fails, with every task's stack, instead of holding the run forever.

All async tests of a worker share one event loop, and a wait without a bound (a workflow's
result, an Update) can hang the whole run. A timer thread watches each test's call: past
`TEST_TIMEOUT_SECONDS` it records the stack of every task on the loop, cancels the test's own
task, and the failure report carries the stacks, so the cause can be read from the CI output.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections.abc import Generator

import pytest

TEST_TIMEOUT_SECONDS = float(os.environ.get("VIRTFLOW_TEST_TIMEOUT_SECONDS", "300"))
_STACKS = pytest.StashKey[str]()
_loop: asyncio.AbstractEventLoop | None = None


@pytest.fixture(scope="session", autouse=True)
async def _watched_loop() -> None:
    """The loop the async tests run on (one per session), for the watchdog's thread."""
    global _loop
    _loop = asyncio.get_running_loop()


def _awaiting(task: asyncio.Task[object]) -> list[str]:
    """Where a task waits, outermost first: its coroutine and each one it awaits (a suspended
    task's own stack shows only the outermost)."""
    lines: list[str] = []
    coro: object = task.get_coro()
    while coro is not None and len(lines) < 40:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        frame = frame or getattr(coro, "ag_frame", None)
        if frame is not None:
            code = frame.f_code
            lines.append(f"  {code.co_filename}:{frame.f_lineno} in {code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return lines


def _stacks_and_cancel(item: pytest.Item) -> None:
    """Runs on the loop: every task's stack, then the test's own task cancelled."""
    out = io.StringIO()
    tasks = asyncio.all_tasks()
    out.write(f"{item.nodeid} ran past {TEST_TIMEOUT_SECONDS:.0f} s; {len(tasks)} tasks:\n")
    for task in tasks:
        out.write("\n".join([f"--- {task.get_name()}", *_awaiting(task)]) + "\n")
    item.stash[_STACKS] = out.getvalue()
    name = getattr(item, "originalname", item.name)
    for task in tasks:
        if getattr(task.get_coro(), "__name__", None) == name:
            task.cancel(f"ran past {TEST_TIMEOUT_SECONDS:.0f} s")


def _on_timeout(item: pytest.Item) -> None:
    loop = _loop
    if loop is not None and loop.is_running():
        loop.call_soon_threadsafe(_stacks_and_cancel, item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    timer = threading.Timer(TEST_TIMEOUT_SECONDS, _on_timeout, args=(item,))
    timer.daemon = True
    timer.start()
    try:
        return (yield)
    finally:
        timer.cancel()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    stacks = item.stash.get(_STACKS, None)
    if stacks is not None and call.when == "call":
        report.sections.append(("task stacks at the timeout", stacks))
    return report
