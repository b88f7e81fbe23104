"""Stopping a provisioning call safely: never halfway through what cannot be taken back.

A cancelled activity must not end while a call that creates or starts a VM is still on its
way: the compensation would look, find nothing, and the VM would appear after it. These are
the pieces the provisioners use for that: a blocking run in a thread that stops when told
(`run_stoppable`), a gate a playbook task holds around such a call (`StopGate`), the kill of
every process of one playbook run (`kill_run`), and an await that outlives a cancel
(`finish_first`, `until_done`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import psutil

T = TypeVar("T")

# The environment variable naming a run's marker file: a task whose effect cannot be taken back
# once sent (a libvirt define or start: libvirtd carries it out even if its client dies) holds
# a lock on it while it runs (StopGate), and every process of the run carries it, so a cancel
# finds them all (`kill_run`).
UNINTERRUPTIBLE_ENV = "VIRTFLOW_UNINTERRUPTIBLE"


async def run_stoppable(
    run: Callable[[], Any], cancelled: threading.Event, executor: ThreadPoolExecutor | None = None
) -> Any:
    """Run a blocking ansible-runner call in a thread. If the caller is cancelled, set
    `cancelled` (the runner's cancel callback), wait until the runner has stopped and reaped
    ansible-playbook, then let the cancellation go on."""
    future = asyncio.get_running_loop().run_in_executor(executor, run)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancelled.set()
        await until_done(future)
        raise


class StopGate:
    """Decides, against a task inside a call that must finish, when a run may be killed.

    A task (virtflow_libvirt_domain, in hypervisors/libvirt/action_plugins) holds an exclusive
    lock on `marker` for the whole of such a call. `may_stop` takes the lock without waiting: if the
    task holds it, not yet; else it writes STOPPED into the file and keeps the lock until the
    run is over (`close`). Ansible runs each task in a worker process of its own session, which
    the runner's kill of ansible-playbook's process group does not reach: a worker about to
    make the call waits for the lock, then reads STOPPED and makes none. (Checking a process id
    instead left a gap: the kill decided just before the task began its call, and the worker
    went on after the kill.) `kill_run` now stops those workers too; the lock stays as the
    guard for a worker it could not find. A task killed meanwhile releases its lock with its
    process."""

    STOPPED = "stopped"

    def __init__(self, marker: Path) -> None:
        self.marker = marker
        self._held: Any = None

    def may_stop(self) -> bool:
        if self._held is not None:
            return True
        gate = self.marker.open("a+")
        try:
            fcntl.flock(gate, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            gate.close()
            return False
        gate.truncate(0)
        gate.write(self.STOPPED)
        gate.flush()
        self._held = gate
        return True

    def close(self) -> None:
        if self._held is not None:
            self._held.close()  # releases the lock
            self._held = None


def kill_run(marker: Path) -> int:
    """Kill every process of one playbook run: ansible-playbook, its task workers and what
    they started; the number killed.

    The runner's own kill reaches ansible-playbook's process group only, and Ansible runs each
    task in a worker that calls setsid: a worker outlived the kill and carried its task (a
    Proxmox clone's POST, a disk made over SSH) to its end after the activity had ended and the
    compensation had looked. The run's processes are this process's descendants (setsid does
    not change parentage) whose environment names the run's marker, so runs side by side keep
    theirs. Each is stopped first, then listed again until no new one appears (a stopped
    process forks no more; one killed at once could leave a child just forked to init), then
    all are killed."""
    tag = str(marker)
    frozen: dict[int, psutil.Process] = {}
    while found := [p for p in _descendants() if p.pid not in frozen and _carries(p, tag)]:
        for proc in found:
            with contextlib.suppress(psutil.Error):
                proc.suspend()
            frozen[proc.pid] = proc
    for proc in frozen.values():
        with contextlib.suppress(psutil.Error):
            proc.kill()
    return len(frozen)


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def _carries(proc: psutil.Process, tag: str) -> bool:
    try:
        return proc.environ().get(UNINTERRUPTIBLE_ENV) == tag
    except psutil.Error:  # gone, a zombie, or not ours to read
        return False


async def finish_first(call: Awaitable[T]) -> T:
    """Await a call whose effect cannot be taken back once sent (the POST that creates a VM).
    If the caller is cancelled meanwhile, the call still finishes before the cancellation
    goes on: cut short, its effect could land after compensation has undone the step."""
    task = asyncio.ensure_future(call)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await until_done(task)
        raise


async def until_done(work: asyncio.Future[Any]) -> None:
    """Wait until `work` has ended, however often this task is cancelled meanwhile.

    The SDK cancels an activity's task each time it is told to (the workflow's request, a
    heartbeat that fails to record, the worker's shutdown), with no guard against a second
    time, and a second cancel must not cut short the wait for a call whose effect cannot be
    taken back: the activity would end, the compensation would start, and the call would land
    after it."""
    while not work.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({work})
    if not work.cancelled():
        work.exception()  # retrieved, so asyncio does not log it: the caller reports the cancel
