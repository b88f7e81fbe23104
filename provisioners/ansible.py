"""The Ansible provisioner: `playbooks/` run by ansible-runner for one hypervisor.

`create_vm.yml`, `destroy_vm.yml` and `describe_vm.yml` include the tasks of
`hypervisors/<hypervisor>/`; the VM facts come from `set_stats`, never from stdout. Request
values reach the playbooks as data, never as templates (`as_data`); a cancel stops the run
without cutting a call that cannot be taken back (`stopping.py`); why a run failed is read in
`ansible_failures.py`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import shutil
import sysconfig
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ansible_runner
from pydantic import BaseModel, Field

from contracts.vm import DestroyVmInput, VmFacts, VmSpec
from hypervisors import plugin_dirs

from .ansible_failures import last_error, run_failure, task_failure
from .contract import Progress, ProvisioningFailed
from .stopping import UNINTERRUPTIBLE_ENV, StopGate, kill_run, run_stoppable
from .task_clock import TaskClock


@functools.cache
def ansible_envvars() -> dict[str, str]:
    """Environment of a playbook run: this interpreter's scripts dir first on PATH
    (ansible-runner needs ansible-playbook there), the hypervisors' own plugins, and none of
    Ansible's console noise."""
    scripts = sysconfig.get_path("scripts")
    return {
        "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")]),
        "ANSIBLE_ACTION_PLUGINS": _plugin_path("action_plugins", "ANSIBLE_ACTION_PLUGINS"),
        "ANSIBLE_LIBRARY": _plugin_path("library", "ANSIBLE_LIBRARY"),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "ANSIBLE_RETRY_FILES_ENABLED": "false",
        "ANSIBLE_NOCOLOR": "true",
        # Over SSH (tasks delegated to a hypervisor host), one connection per task instead of
        # a copy of the module and a second connection to run it.
        "ANSIBLE_PIPELINING": "true",
    }


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
    """Runs `create_vm.yml` / `destroy_vm.yml` / `describe_vm.yml` for one hypervisor."""

    def __init__(
        self,
        playbook_dir: Path,
        hypervisor: str,
        extravars: dict[str, str],
        artifacts_root: Path,
        max_parallel_runs: int = 16,
        inventory: Path | None = None,
    ) -> None:
        self.playbook_dir = playbook_dir.resolve()
        self.hypervisor = hypervisor
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

    async def destroy_vm(self, vm: DestroyVmInput, progress: Progress | None = None) -> None:
        await self._run(
            "destroy_vm.yml", {"vm_name": vm.name, "vm_host": vm.host, "vm_vmid": vm.vmid}, progress
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
                collected["failure"] = task_failure(data)
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
            extravars={
                **self.extravars,
                **as_data(_given(extravars)),
                "hypervisor": self.hypervisor,
            },
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
            stopped = None if runner.status == "successful" else last_error(runner)
        finally:
            gate.close()
            shutil.rmtree(private_dir, ignore_errors=True)
        clock.log(playbook, time.time())
        outcome = _RunOutcome(status=runner.status, rc=runner.rc, **collected)
        if outcome.status == "successful":
            return outcome
        raise run_failure(
            playbook,
            outcome.status,
            outcome.failure,
            stopped,
            unreachable=outcome.unreachable,
        )


def _plugin_path(kind: str, variable: str) -> str:
    """The hypervisors' plugins of `kind`, then whatever the worker's environment names."""
    dirs = [str(d) for d in plugin_dirs(kind)]
    return os.pathsep.join([*dirs, os.environ[variable]] if os.environ.get(variable) else dirs)


def _given(extravars: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in extravars.items() if value is not None}
