"""The lab GitLab's runner: one pipeline job, run as `deploy/gitlab/.gitlab-ci.yml` runs it.

The job turns the pipeline's variables into extravars with `deploy/gitlab/vm_extravars.py`,
runs `playbooks/<action>_vm.yml` with the real ansible-runner (`vm_facts_path` set, so the
playbook writes `vm.json`), and appends what ansible prints to the job's trace as it goes.
Cancelling the coroutine stops ansible-playbook before it returns. The extravars (the opened
user data among them) leave no file behind once the job ends, as the template's after_script
makes sure: ansible-runner's scratch directory goes with the job.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provisioners.ansible import ansible_envvars
from provisioners.stopping import run_stoppable

REPO_ROOT = Path(__file__).resolve().parents[1]
EXTRAVARS_SCRIPT = REPO_ROOT / "deploy" / "gitlab" / "vm_extravars.py"
ACTIONS = ("create", "destroy", "describe")


class JobFailed(Exception):
    """The job's script exited non-zero; the message is the last thing it printed."""


async def run_job(
    *,
    action: str,
    variables: dict[str, str],
    workdir: Path,
    playbook_dir: Path,
    write: Callable[[str], None],
    runner_environment: dict[str, str] | None = None,
) -> None:
    """Run one job in `workdir` (its artifacts land there); raise JobFailed on failure.
    `runner_environment` is what the runner itself adds to the job's environment."""
    workdir.mkdir(parents=True, exist_ok=True)
    write(f"$ python3 deploy/gitlab/vm_extravars.py > vm_vars.json  # VIRTFLOW_ACTION={action}")
    env = {"PATH": os.environ.get("PATH", ""), **variables, **(runner_environment or {})}
    script = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXTRAVARS_SCRIPT),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await script.communicate()
    if script.returncode != 0:
        write(err.decode().strip())
        raise JobFailed(err.decode().strip() or f"vm_extravars.py exited {script.returncode}")
    extravars = {**json.loads(out), "vm_facts_path": str(workdir / "vm.json")}
    write(f"$ ansible-playbook playbooks/{action}_vm.yml -e @vm_vars.json")
    try:
        status = await _ansible(playbook_dir / f"{action}_vm.yml", extravars, workdir, write)
    finally:
        shutil.rmtree(workdir / "runner", ignore_errors=True)
    if status != "successful":
        raise JobFailed(f"ansible-playbook ended {status}")


async def _ansible(
    playbook: Path, extravars: dict[str, Any], workdir: Path, write: Callable[[str], None]
) -> str:
    import ansible_runner

    cancelled = threading.Event()
    (workdir / "runner").mkdir(exist_ok=True)

    def on_event(event: dict[str, Any]) -> bool:
        text = str(event.get("stdout") or "").strip()
        if text:
            write(text)  # list.append from the runner's thread: atomic
        return True

    run = functools.partial(
        ansible_runner.run,
        private_data_dir=str(workdir / "runner"),
        playbook=str(playbook.resolve()),
        extravars=extravars,
        envvars=ansible_envvars(),
        settings={"pexpect_timeout": 0.5, "suppress_ansible_output": True},
        quiet=True,
        event_handler=on_event,
        cancel_callback=cancelled.is_set,
    )
    runner = await run_stoppable(run, cancelled)
    return str(runner.status)
