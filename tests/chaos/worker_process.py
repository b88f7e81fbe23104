"""`virtflow worker` as a child process, so a test can kill it the way a host crash would."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import sysconfig
from pathlib import Path

import psutil
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.client import Client

from runtime.settings import Settings
from tests.helpers import assert_eventually, describe_queue

VIRTFLOW = Path(sysconfig.get_path("scripts")) / "virtflow"
STOP_TIMEOUT_SECONDS = 10.0


def worker_env(settings: Settings, temporal_address: str, task_queue: str) -> dict[str, str]:
    """The environment of a worker configured only through VIRTFLOW_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTFLOW_")}
    receivers = {
        name: {
            **config.model_dump(mode="json"),
            "secrets": [s.get_secret_value() for s in config.secrets],
        }
        for name, config in settings.receivers.items()
    }
    env.update(
        {
            "VIRTFLOW_TEMPORAL_ADDRESS": temporal_address,
            "VIRTFLOW_TASK_QUEUE": task_queue,
            "VIRTFLOW_STATE_DIR": str(settings.state_dir),
            "VIRTFLOW_INVENTORIES": json.dumps(settings.inventories),
            "VIRTFLOW_KUBECONFIG": str(settings.kubeconfig),
            "VIRTFLOW_ANSIBLE_EXTRAVARS": json.dumps(settings.ansible_extravars),
            "VIRTFLOW_GRACEFUL_SHUTDOWN_SECONDS": str(settings.graceful_shutdown_seconds),
            "VIRTFLOW_RECEIVERS": json.dumps(receivers),
            "PATH": os.pathsep.join([str(VIRTFLOW.parent), os.environ.get("PATH", "")]),
        }
    )
    return env


class WorkerProcess:
    """One `virtflow worker` process; a kill takes its playbook runs down with it."""

    def __init__(
        self,
        client: Client,
        task_queue: str,
        env: dict[str, str],
        log: Path,
        module: str | None = None,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.env = env
        self.log = log
        # A test's own entry point (`python -m <module> worker`) instead of `virtflow`.
        self.module = module
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    async def start(self) -> WorkerProcess:
        """Start, and return once the worker polls both its workflow and activity queues."""
        command = [sys.executable, "-m", self.module] if self.module else [str(VIRTFLOW)]
        with self.log.open("ab") as out:
            self._proc = await asyncio.create_subprocess_exec(
                *command,
                "worker",
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
            )
        await assert_eventually(self._polling, timeout=60, interval=0.2)
        return self

    async def _polling(self) -> None:
        assert self._proc is not None
        if self._proc.returncode is not None:
            raise RuntimeError(f"the worker exited with {self._proc.returncode}: see {self.log}")
        for kind in (
            TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        ):
            answer = await describe_queue(self.client, self.task_queue, kind)
            identities = [p.identity for p in answer.pollers]
            assert any(i.startswith(f"{self.pid}@") for i in identities), identities

    @property
    def returncode(self) -> int | None:
        assert self._proc is not None
        return self._proc.returncode

    def signal(self, signum: int) -> None:
        """Only to the worker, as a container runtime (or tini) signals PID 1's child."""
        assert self._proc is not None
        self._proc.send_signal(signum)

    async def wait(self) -> int:
        assert self._proc is not None
        return await self._proc.wait()

    async def kill(self) -> None:
        """SIGKILL the worker and every process under it, as a host crash would.

        ansible-runner starts ansible-playbook in a session of its own, so the tree is
        listed first and killed process by process."""
        assert self._proc is not None
        with contextlib.suppress(psutil.NoSuchProcess):
            root = psutil.Process(self._proc.pid)
            tree = [root, *root.children(recursive=True)]
            for proc in tree:
                with contextlib.suppress(psutil.NoSuchProcess):
                    proc.kill()
            await asyncio.to_thread(psutil.wait_procs, tree[1:], timeout=STOP_TIMEOUT_SECONDS)
        await self._proc.wait()

    async def stop(self) -> None:
        """SIGTERM (in-flight tasks finish), then a kill if it does not end in time."""
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_SECONDS)
        await self.kill()
