"""A provisioner that runs the VM pipeline of a GitLab project (`deploy/gitlab/.gitlab-ci.yml`).

Each call triggers a pipeline with the VM parameters as string variables
(`VIRTFLOW_ACTION=create|destroy|describe`, `VM_NAME`, `VM_HOST`, ...; docs/GITLAB.md), polls
it until a final status, reporting `pipeline <id> <status> <web_url>` as progress, and reads
the VM facts from the job artifact `vm.json`. Idempotent by VM name because the pipeline is:
its playbook returns the existing VM of that name, and the template's `resource_group` per VM
name runs the pipelines of one VM one after another, so a retry never races a pipeline still
running. Cancelling cancels the pipeline (also one whose trigger was in flight) and waits
(bounded) until GitLab confirms, so the compensation's destroy pipeline comes after it.

The user data carries the VM's bootstrap token, which must never reach GitLab (its variables,
job logs and artifacts are readable by anyone who may read the project's pipelines). It goes
out sealed: `VM_USER_DATA_SEALED` is a Fernet token (AES-CBC + HMAC-SHA256, timestamped) under
a key only the worker and the project's runners hold, over the user data and the VM's name, so
the job opens it for that VM only and only while it is fresh (`deploy/gitlab/vm_extravars.py`).

python-gitlab is synchronous: every call runs on this provisioner's own threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import gitlab
import requests
from cryptography.fernet import Fernet
from pydantic import SecretStr, ValidationError

from contracts.vm import DestroyVmInput, VmFacts, VmSpec

from .contract import TRANSIENT_MARKER, Progress, ProvisioningFailed

log = logging.getLogger(__name__)
T = TypeVar("T")

FACTS_ARTIFACT = "vm.json"
FINAL_STATUSES = {"success", "failed", "canceled", "skipped"}
# GitLab's job failure reasons that say nothing about the VM: the runner or GitLab broke.
TRANSIENT_FAILURE_REASONS = {
    "runner_system_failure",
    "stuck_or_timeout_failure",
    "api_failure",
    "scheduler_failure",
    "data_integrity_failure",
}
TRACE_TAIL_LINES = 12
SEALED_USER_DATA = "VM_USER_DATA_SEALED"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|section_(start|end):\d+:\S+\r?")


def trace_tail(trace: bytes, lines: int = TRACE_TAIL_LINES) -> str:
    """The last non-blank lines of a job trace, without colours and section markers."""
    text = _ANSI.sub("", trace.decode(errors="replace"))
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])[-2000:]


def seal_user_data(key: SecretStr, vm_name: str, user_data: str) -> str:
    """The user data as only the runners can read it, for this VM only (see the docstring)."""
    plain = json.dumps({"vm_name": vm_name, "user_data": user_data}).encode()
    return Fernet(key.get_secret_value().encode()).encrypt(plain).decode()


def pipeline_variables(
    action: str,
    spec: VmSpec | None = None,
    user_data_key: SecretStr | None = None,
    **names: str | None,
) -> dict[str, str]:
    """The trigger variables: strings only, absent values left out, user data sealed."""
    values: dict[str, Any] = {"VIRTFLOW_ACTION": action, **{k.upper(): v for k, v in names.items()}}
    if spec is not None:
        # One variable per field of the spec: `VM_<FIELD>`, the labels and taints as JSON.
        fields = spec.model_dump(exclude={"user_data"})
        fields["labels"] = json.dumps(spec.labels, sort_keys=True)
        fields["taints"] = json.dumps(fields["taints"])
        values |= {f"VM_{name.upper()}": value for name, value in fields.items()}
        if spec.user_data is not None:
            if user_data_key is None:
                raise ProvisioningFailed(
                    "the VM's user data carries a join token, which is never sent to GitLab in "
                    "the clear: set gitlab_user_data_key (docs/GITLAB.md)",
                    transient=False,
                )
            values[SEALED_USER_DATA] = seal_user_data(user_data_key, spec.name, spec.user_data)
    return {key: str(value) for key, value in values.items() if value is not None}


class GitLabProvisioner:
    """Creates, destroys and describes VMs through one project's VM pipeline."""

    def __init__(
        self,
        url: str,
        project: str,
        ref: str,
        trigger_token: SecretStr,
        api_token: SecretStr,
        poll_seconds: float = 5.0,
        cancel_confirm_seconds: float = 60.0,
        http_timeout: float = 30.0,
        user_data_key: SecretStr | None = None,
    ) -> None:
        self.project_id = project
        self._user_data_key = user_data_key
        self.ref = ref
        self.poll_seconds = poll_seconds
        self.cancel_confirm_seconds = cancel_confirm_seconds
        self._trigger_token = trigger_token
        # The engine retries, not python-gitlab: a 5xx comes back at once as a transient error
        # (python-gitlab still honours a 429's Retry-After by itself, a few times).
        self._gl = gitlab.Gitlab(
            url,
            private_token=api_token.get_secret_value(),
            timeout=http_timeout,
            retry_transient_errors=False,
        )
        self._project = self._gl.projects.get(project, lazy=True)
        self._executor = ThreadPoolExecutor(8, thread_name_prefix="gitlab")

    # ----- the Provisioner protocol -----

    async def create_vm(self, spec: VmSpec, progress: Progress | None = None) -> VmFacts:
        variables = pipeline_variables("create", spec, self._user_data_key)
        job = await self._run_pipeline(variables, progress)
        facts = await self._facts(job)
        if facts is None:
            raise ProvisioningFailed(
                f"job {job.name} reported no VM in {FACTS_ARTIFACT}", transient=False
            )
        return facts

    async def destroy_vm(self, vm: DestroyVmInput, progress: Progress | None = None) -> None:
        vmid = None if vm.vmid is None else str(vm.vmid)
        variables = pipeline_variables("destroy", vm_name=vm.name, vm_host=vm.host, vm_vmid=vmid)
        await self._run_pipeline(variables, progress)

    async def describe_vm(self, name: str, progress: Progress | None = None) -> VmFacts | None:
        job = await self._run_pipeline(pipeline_variables("describe", vm_name=name), progress)
        return await self._facts(job)

    # ----- one pipeline -----

    async def _run_pipeline(self, variables: dict[str, str], progress: Progress | None) -> Any:
        """Trigger, poll to a final status, and return the job that succeeded."""
        action = variables["VIRTFLOW_ACTION"]
        trigger = asyncio.ensure_future(
            self._call(
                f"trigger the {action} pipeline",
                self._project.trigger_pipeline,
                self.ref,
                self._trigger_token.get_secret_value(),
                variables=variables,
            )
        )
        try:
            pipeline = await asyncio.shield(trigger)
        except asyncio.CancelledError:
            # A trigger GitLab received starts a pipeline whoever waits for the answer.
            with contextlib.suppress(ProvisioningFailed):
                await self._cancel((await trigger).id)
            raise
        pipeline_id, web_url = pipeline.id, pipeline.web_url
        status = ""
        try:
            while True:
                current = await self._call(
                    f"read pipeline {pipeline_id}", self._project.pipelines.get, pipeline_id
                )
                if current.status != status:
                    status = current.status
                    if progress is not None:
                        progress(f"pipeline {pipeline_id} {status} {web_url}")
                if status in FINAL_STATUSES:
                    break
                await asyncio.sleep(self.poll_seconds)
        except asyncio.CancelledError:
            await self._cancel(pipeline_id)
            raise
        jobs = await self._call(
            f"list the jobs of pipeline {pipeline_id}",
            self._project.pipelines.get(pipeline_id, lazy=True).jobs.list,
            get_all=True,
        )
        if status == "success":
            done = [job for job in jobs if job.status == "success"]
            if not done:
                raise ProvisioningFailed(
                    f"pipeline {pipeline_id} succeeded without a job ({web_url})", transient=False
                )
            return done[-1]
        if status == "failed":
            raise await self._failure(pipeline_id, web_url, jobs)
        # Canceled by someone in GitLab, or skipped by the project's rules: a person decides.
        raise ProvisioningFailed(
            f"pipeline {pipeline_id} was {status} ({web_url})", transient=False
        )

    async def _failure(self, pipeline_id: int, web_url: str, jobs: list[Any]) -> ProvisioningFailed:
        failed = [job for job in jobs if job.status == "failed"]
        if not failed:
            return ProvisioningFailed(f"pipeline {pipeline_id} failed ({web_url})", transient=False)
        job = failed[0]
        reason = getattr(job, "failure_reason", None) or "failed"
        trace = await self._call(
            f"read the trace of job {job.id}", self._project.jobs.get(job.id, lazy=True).trace
        )
        tail = trace_tail(trace)
        # The playbooks mark what may heal (hypervisor unreachable) as the ansible path does.
        transient = reason in TRANSIENT_FAILURE_REASONS or TRANSIENT_MARKER in tail
        message = f"pipeline {pipeline_id} failed: job {job.name} ({reason}), {web_url}\n{tail}"
        return ProvisioningFailed(message, transient=transient)

    async def _facts(self, job: Any) -> VmFacts | None:
        raw = await self._call(
            f"read {FACTS_ARTIFACT} of job {job.id}",
            self._project.jobs.get(job.id, lazy=True).artifact,
            FACTS_ARTIFACT,
        )
        try:
            data = json.loads(raw)
            return None if data is None else VmFacts.model_validate(data)
        except (ValueError, ValidationError) as err:
            raise ProvisioningFailed(
                f"{FACTS_ARTIFACT} of job {job.name} is not VM facts: {err}", transient=False
            ) from err

    async def _cancel(self, pipeline_id: int) -> None:
        """Cancel the pipeline and wait, bounded, until GitLab says it has stopped."""
        with contextlib.suppress(ProvisioningFailed), contextlib.suppress(TimeoutError):
            await self._call(
                f"cancel pipeline {pipeline_id}",
                self._project.pipelines.get(pipeline_id, lazy=True).cancel,
            )
            async with asyncio.timeout(self.cancel_confirm_seconds):
                while True:
                    current = await self._call(
                        f"read pipeline {pipeline_id}", self._project.pipelines.get, pipeline_id
                    )
                    if current.status in FINAL_STATUSES:
                        log.info("pipeline %s is %s after cancel", pipeline_id, current.status)
                        return
                    await asyncio.sleep(min(self.poll_seconds, 1.0))
        log.warning("pipeline %s: GitLab did not confirm the cancel", pipeline_id)

    async def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run one python-gitlab call on a thread; map its errors to retry decisions."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))
        except requests.RequestException as err:
            # The type only: a transport error's text can carry the URL.
            raise ProvisioningFailed(
                f"{what}: GitLab unreachable ({type(err).__name__})", transient=True
            ) from err
        except gitlab.GitlabError as err:
            code = err.response_code
            transient = code is None or code >= 500 or code in (408, 429)
            raise ProvisioningFailed(
                f"{what}: GitLab answered {code}: {err.error_message}", transient=transient
            ) from err
