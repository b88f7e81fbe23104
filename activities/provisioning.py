"""Provisioning activities: create, destroy and describe a VM through a provisioner.

The activities own the Temporal side (heartbeats, cancellation, retry decisions); a
`Provisioner` owns the hypervisor side. `AnsibleProvisioner` runs the playbooks in
`playbooks/` with ansible-runner and reads the VM facts from `set_stats`, never from stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import fcntl
import functools
import logging
import os
import re
import shutil
import sysconfig
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import psutil
from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.vm import VmFacts, VmSpec

from .timeouts import QuietHeartbeat, heartbeat_interval

# A failed task whose message starts with this marker may heal by itself (5xx, connection
# refused): the playbooks use it so the activity can leave the retry to the engine.
TRANSIENT_MARKER = "TRANSIENT:"
# The environment variable naming a run's marker file: a task whose effect cannot be taken back
# once sent (a libvirt define or start: libvirtd carries it out even if its client dies) holds
# a lock on it while it runs (StopGate), and every process of the run carries it, so a cancel
# finds them all (`kill_run`).
UNINTERRUPTIBLE_ENV = "VIRTFLOW_UNINTERRUPTIBLE"
# How often a long-running task is reported again, so a heartbeat timeout only fires when
# the worker is really gone.
HEARTBEAT_EVERY_SECONDS = 5.0

Progress = Callable[[str], None]
T = TypeVar("T")

# Python modules the provider collections import, by the package that provides them.
PYTHON_PACKAGES = {"libvirt": "libvirt-python", "proxmoxer": "proxmoxer", "lxml": "lxml"}
# Messages of problems no retry can heal: the worker's environment or the site settings lack
# something. Each pattern's group names the missing piece.
_MISSING_MODULE = (
    re.compile(r"`?([\w.]+)`? (?:module|library) is not importable"),
    re.compile(r"Failed to import the required Python library \(([\w.-]+)\)"),
    re.compile(r"No module named '([\w.]+)'"),
)
_MISSING_COLLECTION = re.compile(r"couldn't resolve module/action '(\w+\.\w+)\.\w+'")
_UNDEFINED = re.compile(r"'(\w+)' is undefined")

log = logging.getLogger(__name__)


class CreateVmInput(BaseModel):
    spec: VmSpec


class DestroyVmInput(BaseModel):
    name: str
    host: str | None = None
    # The VM id placement chose, where the hypervisor names a VM only once it is made (a
    # Proxmox clone in flight has no name yet): the destroy then finds it by id.
    vmid: int | None = None


class DescribeVmInput(BaseModel):
    name: str


def configuration_problem(message: str) -> str | None:
    """What to install or set, when `message` says the worker or the site lacks something."""
    for pattern in _MISSING_MODULE:
        if found := pattern.search(message):
            module = found.group(1).split(".")[0]
            package = PYTHON_PACKAGES.get(module, module)
            return (
                f"the Python module '{module}' is missing where the playbooks run: "
                f"install it into the worker's environment (pip install {package})"
            )
    if found := _MISSING_COLLECTION.search(message):
        return (
            f"the Ansible collection {found.group(1)} is not installed: install it "
            "(`make collections` extracts it) and point ANSIBLE_COLLECTIONS_PATH at it"
        )
    if found := _UNDEFINED.search(message):
        return f"the playbook variable '{found.group(1)}' is not set: add it to ansible_extravars"
    return None


class ProvisioningFailed(Exception):
    """A provisioning step failed; `transient` says whether trying again may help."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


class Provisioner(Protocol):
    async def create_vm(self, spec: VmSpec, progress: Progress | None = None) -> VmFacts: ...

    async def destroy_vm(
        self,
        name: str,
        host: str | None,
        progress: Progress | None = None,
        *,
        vmid: int | None = None,
    ) -> None: ...

    async def describe_vm(self, name: str, progress: Progress | None = None) -> VmFacts | None: ...


@functools.cache
def ansible_envvars() -> dict[str, str]:
    """Environment of a playbook run: this interpreter's scripts dir first on PATH
    (ansible-runner needs ansible-playbook there) and none of Ansible's console noise."""
    scripts = sysconfig.get_path("scripts")
    return {
        "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")]),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "ANSIBLE_RETRY_FILES_ENABLED": "false",
        "ANSIBLE_NOCOLOR": "true",
        # Over SSH (tasks delegated to a hypervisor host), one connection per task instead of
        # a copy of the module and a second connection to run it.
        "ANSIBLE_PIPELINING": "true",
    }


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

    A task (playbooks/action_plugins/virtflow_libvirt_domain.py) holds an exclusive lock on
    `marker` for the whole of such a call. `may_stop` takes the lock without waiting: if the
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


def as_data(value: Any) -> Any:
    """Mark every string unsafe for Ansible, so `{{ ... }}` from a request is never templated.

    ansible-runner hands extravars over as JSON; Ansible's JSON decoder reads an object
    `{"__ansible_unsafe": s}` as the string `s` tagged unsafe (data, not a template).
    """
    if isinstance(value, str):
        return {"__ansible_unsafe": value}
    if isinstance(value, dict):
        return {key: as_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [as_data(item) for item in value]
    return value


# Ansible's implicit localhost, written out: this machine, the playbook's own interpreter.
_LOCALHOST_INVENTORY = """\
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
"""


class _RunOutcome(BaseModel):
    status: str
    rc: int | None
    stats: dict[str, Any] = Field(default_factory=dict)
    failure: str | None = None
    unreachable: bool = False


class AnsibleProvisioner:
    """Runs `create_vm.yml` / `destroy_vm.yml` / `describe_vm.yml` for one provider."""

    def __init__(
        self,
        playbook_dir: Path,
        provider: str,
        extravars: dict[str, str],
        artifacts_root: Path,
        max_parallel_runs: int = 16,
        inventory: Path | None = None,
    ) -> None:
        self.playbook_dir = playbook_dir.resolve()
        self.provider = provider
        self.extravars = dict(extravars)
        self.artifacts_root = artifacts_root
        # The hosts tasks are delegated to and how to reach them.
        self.inventory = inventory
        # Its own threads: a burst of long playbook runs must not starve the loop's default
        # executor, and this bounds how many ansible-playbook processes run at once.
        self._executor = ThreadPoolExecutor(max_parallel_runs, thread_name_prefix="ansible")

    async def create_vm(self, spec: VmSpec, progress: Progress | None = None) -> VmFacts:
        # One variable per field of the spec, under the same name: `vm_<field>`.
        extravars = {f"vm_{field}": value for field, value in spec.model_dump().items()}
        outcome = await self._run("create_vm.yml", extravars, progress)
        vm = outcome.stats.get("vm")
        if not isinstance(vm, dict):
            raise ProvisioningFailed("create_vm.yml reported no 'vm' in set_stats", transient=False)
        return VmFacts.model_validate(vm)

    async def destroy_vm(
        self,
        name: str,
        host: str | None,
        progress: Progress | None = None,
        *,
        vmid: int | None = None,
    ) -> None:
        await self._run(
            "destroy_vm.yml", {"vm_name": name, "vm_host": host, "vm_vmid": vmid}, progress
        )

    async def describe_vm(self, name: str, progress: Progress | None = None) -> VmFacts | None:
        outcome = await self._run("describe_vm.yml", {"vm_name": name}, progress)
        vm = outcome.stats.get("vm")
        return VmFacts.model_validate(vm) if isinstance(vm, dict) else None

    def _inventories(self, private_dir: Path) -> list[str] | None:
        """The site's inventory after one naming `localhost` as this machine.

        The plays run on `localhost`; Ansible takes the first host of an inventory named
        `localhost`, `127.0.0.1` or `::1` as localhost, so a site inventory reaching a host at
        127.0.0.1 over SSH would otherwise run the whole play there."""
        if self.inventory is None:
            return None  # Ansible's implicit localhost
        local = private_dir / "localhost.yml"
        local.write_text(_LOCALHOST_INVENTORY)
        return [str(local), str(self.inventory)]

    async def _run(
        self, playbook: str, extravars: dict[str, Any], progress: Progress | None
    ) -> _RunOutcome:
        # Imported here: workflows and the API import this module for its models only.
        import ansible_runner

        self.artifacts_root.mkdir(parents=True, exist_ok=True)
        private_dir = Path(tempfile.mkdtemp(prefix="run-", dir=self.artifacts_root))
        loop = asyncio.get_running_loop()
        # Progress runs in the activity's context, where activity.heartbeat works.
        context = contextvars.copy_context()
        cancelled = threading.Event()
        marker = private_dir / "uninterruptible"
        gate = StopGate(marker)

        def stop_now() -> bool:
            # A cancel waits for a libvirt call in flight: killed mid-call, ansible-playbook
            # leaves libvirtd to finish it after the compensation has looked (a define that
            # probes a new qemu takes seconds), and the VM outlives its destroy.
            if not (cancelled.is_set() and gate.may_stop()):
                return False
            kill_run(marker)  # the task workers too, which the runner's kill misses
            return True

        collected: dict[str, Any] = {}
        clock = TaskClock(time.time())

        def on_event(event: dict[str, Any]) -> bool:
            # Runs in the runner's thread: hand task names to the loop, keep the rest here.
            name, data = event.get("event"), event.get("event_data", {})
            clock.record(event)
            if name == "playbook_on_task_start" and progress is not None:
                loop.call_soon_threadsafe(progress, str(data.get("task", "")), context=context)
            elif name == "runner_on_failed" and not data.get("ignore_errors"):
                collected["failure"] = _task_failure(data)
            elif name == "runner_on_unreachable":
                collected["unreachable"] = True
                collected["failure"] = str(data.get("res", {}).get("msg", "host unreachable"))
            elif name == "playbook_on_stats":
                collected["stats"] = data.get("artifact_data") or {}
            return True

        run = functools.partial(
            ansible_runner.run,
            private_data_dir=str(private_dir),
            playbook=str(self.playbook_dir / playbook),
            # Site variables are the operator's and may be templates; the request's are data,
            # and a request's null leaves the site's value alone.
            extravars={**self.extravars, **as_data(_given(extravars)), "provider": self.provider},
            envvars={**ansible_envvars(), UNINTERRUPTIBLE_ENV: str(marker)},
            inventory=self._inventories(private_dir),
            settings={"pexpect_timeout": 0.5, "suppress_ansible_output": True},
            quiet=True,
            event_handler=on_event,
            cancel_callback=stop_now,
        )
        try:
            runner = await run_stoppable(run, cancelled, self._executor)
            # Read before the artifacts go: a run that stopped before any task said why only there.
            stopped = None if runner.status == "successful" else _last_error(runner)
        finally:
            gate.close()
            shutil.rmtree(private_dir, ignore_errors=True)
        clock.log(playbook, time.time())
        outcome = _RunOutcome(status=runner.status, rc=runner.rc, **collected)
        if outcome.status == "successful":
            return outcome
        message = outcome.failure or stopped or f"{playbook} ended with status {outcome.status}"
        if hint := configuration_problem(message):
            # However the playbook labelled it, a missing piece does not appear by waiting.
            raise ProvisioningFailed(f"{hint} ({_first_line(message)})", transient=False)
        if message.startswith(TRANSIENT_MARKER):
            raise ProvisioningFailed(message.removeprefix(TRANSIENT_MARKER).strip(), transient=True)
        # An unreachable host or a run that stopped before any task without saying why (a
        # killed process) may heal; a task that failed with its own message will not.
        transient = outcome.unreachable or (outcome.failure is None and stopped is None)
        raise ProvisioningFailed(message, transient=transient)


class TaskClock:
    """Where a playbook run's time goes: the start of ansible-playbook before its first task,
    each task from its start to the next one's (Ansible's own work between tasks included),
    and the end after the last, read from the events' own timestamps. Logged at debug level,
    one line per run, with the seconds per task in the `playbook_seconds` extra."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.marks: list[tuple[str, float]] = [("(start of ansible-playbook)", started)]

    def record(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name not in ("playbook_on_task_start", "playbook_on_stats") or not event.get("created"):
            return
        task = str(event.get("event_data", {}).get("task", ""))
        label = "(end of the play)" if name == "playbook_on_stats" else task
        stamp = datetime.fromisoformat(event["created"])  # ansible-runner stamps in UTC
        when = (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()
        self.marks.append((label, when))

    def seconds(self, ended: float) -> list[tuple[str, float]]:
        """(task, seconds) in the order they ran; a task that ran twice (a loop of includes)
        appears twice; the last entry is the exit of ansible-playbook after its play."""
        ends = [when for _, when in self.marks[1:]] + [ended]
        return [
            (label, max(end - when, 0.0))
            for (label, when), end in zip(self.marks, ends, strict=True)
        ]

    def log(self, playbook: str, ended: float) -> None:
        if not log.isEnabledFor(logging.DEBUG):
            return
        spent = self.seconds(ended)
        log.debug(
            "%s took %.1f s: %s",
            playbook,
            ended - self.started,
            ", ".join(f"{label} {secs:.1f} s" for label, secs in spent),
            extra={"playbook_seconds": [[label, round(secs, 3)] for label, secs in spent]},
        )


def _task_failure(data: dict[str, Any]) -> str:
    """The failed task's message; for a command, which task and the last line it wrote."""
    res = data.get("res") or {}
    message = str(res.get("msg") or f"task '{data.get('task', '?')}' failed")
    stderr = str(res.get("stderr") or "").strip()
    if stderr:
        message += f" ({data.get('task', 'command')}: {stderr.splitlines()[-1][:300]})"
    return message


def _given(extravars: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in extravars.items() if value is not None}


def _last_error(runner: Any) -> str | None:
    """The ERROR! line ansible-playbook prints when it stops before any task (no event)."""
    try:
        text = runner.stdout.read()
    except (AttributeError, OSError, ValueError):
        return None
    # ansible-core 2.19 writes "[ERROR]: ...", earlier releases "ERROR! ...".
    errors = [line for line in text.splitlines() if line.startswith(("ERROR!", "[ERROR]:"))]
    return errors[-1].split(maxsplit=1)[-1].strip() if errors else None


def _first_line(message: str) -> str:
    return message.removeprefix(TRANSIENT_MARKER).strip().splitlines()[0][:300]


class SpecPreparer(Protocol):
    """Fills a spec in from the site's template (activities/vm_join.py)."""

    async def prepare(self, spec: VmSpec) -> VmSpec: ...


class ProvisioningActivities:
    """The Temporal face of a provisioner: heartbeats, cancellation, retry decisions."""

    def __init__(self, provisioner: Provisioner, joiner: SpecPreparer | None = None) -> None:
        self.provisioner = provisioner
        self.joiner = joiner
        # The creates running in this worker, by VM name (see `_stop_creates`).
        self._creating: dict[str, set[asyncio.Future[VmFacts]]] = {}

    @activity.defn
    async def create_vm(self, input: CreateVmInput) -> VmFacts:
        # A workflow never sends user data; the site's template supplies it (with a token).
        spec = input.spec.model_copy(update={"user_data": None})
        if self.joiner is not None:
            spec = await self.joiner.prepare(spec)
        # Idempotent by name: the playbook answers with the existing VM on a retry.
        work = asyncio.ensure_future(
            self._guarded(lambda progress: self.provisioner.create_vm(spec, progress))
        )
        running = self._creating.setdefault(spec.name, set())
        running.add(work)
        try:
            return await work  # a cancel of the activity cancels the work as well
        finally:
            running.discard(work)
            if not running:
                self._creating.pop(spec.name, None)

    @activity.defn
    async def destroy_vm(self, input: DestroyVmInput) -> None:
        async def destroy(progress: Progress) -> None:
            await self._stop_creates(input.name, progress)
            await self.provisioner.destroy_vm(input.name, input.host, progress, vmid=input.vmid)

        await self._guarded(destroy)

    @activity.defn
    async def describe_vm(self, input: DescribeVmInput) -> VmFacts | None:
        return await self._guarded(
            lambda progress: self.provisioner.describe_vm(input.name, progress)
        )

    async def _stop_creates(self, name: str, progress: Progress) -> None:
        """Stop a create of `name` still running in this worker, and wait until it has.

        Such a create is an attempt the engine has given up on: its heartbeat timed out (a
        busy worker or server) and the workflow's cancel then ended the activity at once,
        without this worker's word, so the compensation's destroy can start while the
        attempt still runs. Left alone, it would go on to define or start the VM after the
        destroy has looked. Stopped, it ends as any cancelled create does: after a call
        that cannot be taken back."""
        running = self._creating.get(name, set())
        if not running:
            return
        log.warning("%s: stopping a create still running in this worker before the destroy", name)
        progress("stopping a create of the same VM still running in this worker")
        for work in running:
            work.cancel()
        await asyncio.wait(set(running))

    async def _guarded(self, call: Callable[[Progress], Any]) -> Any:
        last = {"task": "starting"}
        beats = QuietHeartbeat()

        def progress(task: str) -> None:
            last["task"] = task
            beats.beat({"task": task})

        every = heartbeat_interval(HEARTBEAT_EVERY_SECONDS)
        beat = asyncio.create_task(beats.keep_beating(every, lambda: {"task": last["task"]}))
        try:
            return await call(progress)
        except ProvisioningFailed as err:
            if err.transient:
                # The engine's retry policy decides how often and how long to try again.
                raise ApplicationError(err.message, type="ProvisioningTransient") from err
            raise ApplicationError(
                err.message, type="ProvisioningFailed", non_retryable=True
            ) from err
        finally:
            beat.cancel()
