"""The lab GitLab: a loopback server for the GitLab v4 pipeline API, driven by python-gitlab.

It holds one project (id 1, path `virtflow/vm-pipelines`, ref `main`) whose pipeline is
`deploy/gitlab/.gitlab-ci.yml`: a trigger starts one job named `<action>_vm` that runs the
playbook through `lab/gitlab_runner.py`. Statuses move created -> pending -> running ->
success | failed | canceled; jobs of the same VM_NAME wait for each other
(`waiting_for_resource`), as the template's `resource_group` makes GitLab do. Endpoints,
fields and error codes are GitLab's: trigger (201; 400 missing token, ref or string
variables; 404 wrong token or project; 400 unknown ref), pipeline, its variables, jobs,
trace, artifact, cancel (200 whatever the state).

Its runner holds `user_data_key` in its own environment, as a site's runners do, never among
the project's variables: the job opens the sealed user data with it (docs/GITLAB.md).

Fault hooks for tests: `fail_next_pipeline`, `hold_pipelines` / `release_pipelines`,
`fail_next_requests` (answer 5xx), `cancel` (what a person does in the UI).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import secrets
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from cryptography.fernet import Fernet
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from webhooks.serve import EmbeddedServer

from .gitlab_runner import ACTIONS, JobFailed, run_job

PROJECT_ID = 1
PROJECT_PATH = "virtflow/vm-pipelines"
REFS = ("main",)
FINAL = {"success", "failed", "canceled", "skipped"}
API = "/api/v4/projects/{project:path}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _error(status: int, message: Any, key: str = "message") -> JSONResponse:
    return JSONResponse({key: message}, status_code=status)


@dataclass
class LabJob:
    id: int
    name: str
    workdir: Path
    status: str = "created"
    trace: list[str] = field(default_factory=list)
    failure_reason: str | None = None
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None


@dataclass
class LabPipeline:
    id: int
    ref: str
    variables: dict[str, str]
    job: LabJob
    status: str = "created"
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    task: asyncio.Task[None] | None = None

    def move(self, status: str) -> None:
        self.status = status
        self.updated_at = _now()
        if status == "running" and self.started_at is None:
            self.started_at = self.updated_at
        if status in FINAL:
            self.finished_at = self.updated_at


class LabGitLab:
    def __init__(
        self,
        playbook_dir: Path,
        project_variables: dict[str, str],
        workdir: Path | None = None,
        trigger_token: str | None = None,
        api_token: str | None = None,
    ) -> None:
        self.playbook_dir = playbook_dir
        self.project_variables = dict(project_variables)
        self.trigger_token = trigger_token or f"glptt-{secrets.token_hex(20)}"
        self.api_token = api_token or f"glpat-{secrets.token_urlsafe(20)}"
        # The runner's own secret: in the job's environment, nowhere GitLab stores or serves.
        self.user_data_key = Fernet.generate_key().decode()
        self._own_workdir = workdir is None
        # Absolute: the playbook writes vm.json from its own working directory.
        self.workdir = (workdir or Path(tempfile.mkdtemp(prefix="lab-gitlab-"))).resolve()
        self.pipelines: dict[int, LabPipeline] = {}
        self._jobs: dict[int, LabPipeline] = {}
        self._resources: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._fail_next: str | None = None
        self._release = asyncio.Event()
        self._release.set()
        self._failing_requests: list[int] = []
        self._background: set[asyncio.Task[None]] = set()
        self._server: EmbeddedServer | None = None
        self.url = ""

    # ----- fault hooks and the Python API (tests, dev) -----

    def fail_next_pipeline(self, message: str) -> None:
        """The next pipeline's job fails with `message` in its trace, without running."""
        self._fail_next = message

    def hold_pipelines(self) -> None:
        """Pipelines that start from now on stay `running` until `release_pipelines`."""
        self._release.clear()

    def release_pipelines(self) -> None:
        self._release.set()

    def fail_next_requests(self, status: int = 503, count: int = 1) -> None:
        """The next `count` API requests answer `status` (a GitLab under maintenance)."""
        self._failing_requests += [status] * count

    async def cancel(self, pipeline_id: int) -> None:
        """Cancel as GitLab does: running jobs stop, the pipeline ends `canceled`."""
        pipeline = self.pipelines[pipeline_id]
        if pipeline.status in FINAL or pipeline.task is None:
            return
        pipeline.move("canceling")
        pipeline.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({pipeline.task})

    async def wait(self, pipeline_id: int) -> LabPipeline:
        """Until the pipeline has a final status."""
        pipeline = self.pipelines[pipeline_id]
        if pipeline.task is not None:
            await asyncio.wait({pipeline.task})
        return pipeline

    # ----- running a pipeline -----

    def trigger(self, ref: str, variables: dict[str, str]) -> LabPipeline:
        pipeline_id = len(self.pipelines) + 1
        job_id = 1000 + pipeline_id
        action = variables.get("VIRTFLOW_ACTION", "")
        job = LabJob(job_id, f"{action}_vm", self.workdir / f"job-{job_id}")
        pipeline = LabPipeline(pipeline_id, ref, dict(variables), job)
        self.pipelines[pipeline_id] = pipeline
        self._jobs[job_id] = pipeline
        pipeline.task = asyncio.create_task(self._run(pipeline), name=f"lab-pipeline-{pipeline_id}")
        return pipeline

    async def _run(self, pipeline: LabPipeline) -> None:
        job = pipeline.job
        action = pipeline.variables.get("VIRTFLOW_ACTION", "")
        try:
            if action not in ACTIONS:
                # The template's workflow rules create no job: GitLab skips the pipeline.
                pipeline.move("skipped")
                job.status = "skipped"
                return
            lock = self._resources[pipeline.variables.get("VM_NAME", "")]
            if lock.locked():
                pipeline.move("waiting_for_resource")
                job.status = "waiting_for_resource"
            async with lock:
                pipeline.move("pending")
                job.status = "pending"
                await asyncio.sleep(0)
                pipeline.move("running")
                job.status, job.started_at = "running", _now()
                job.trace.append(f"Running job {job.id} ({job.name}) for pipeline {pipeline.id}")
                await self._release.wait()
                await self._run_job(pipeline)
        except asyncio.CancelledError:
            job.trace.append("ERROR: Job failed: canceled")
            job.status, job.finished_at = "canceled", _now()
            pipeline.move("canceled")
            # Swallowed on purpose: the pipeline task ends normally, canceled is its result.

    async def _run_job(self, pipeline: LabPipeline) -> None:
        job = pipeline.job
        failure = self._fail_next
        self._fail_next = None
        try:
            if failure is not None:
                job.trace.append(failure)
                raise JobFailed(failure)
            await run_job(
                action=pipeline.variables["VIRTFLOW_ACTION"],
                variables={**self.project_variables, **pipeline.variables},
                runner_environment={"VIRTFLOW_USER_DATA_KEY": self.user_data_key},
                workdir=job.workdir,
                playbook_dir=self.playbook_dir,
                write=job.trace.append,
            )
        except JobFailed:
            self._job_failed(pipeline, "script_failure", "ERROR: Job failed: exit code 1")
            return
        except Exception as err:  # the runner itself broke, as a GitLab runner can
            self._job_failed(pipeline, "runner_system_failure", f"ERROR: {err!r}")
            return
        job.trace.append("Job succeeded")
        job.status, job.finished_at = "success", _now()
        pipeline.move("success")

    def _job_failed(self, pipeline: LabPipeline, reason: str, line: str) -> None:
        job = pipeline.job
        job.trace.append(line)
        job.status, job.failure_reason, job.finished_at = "failed", reason, _now()
        pipeline.move("failed")

    # ----- wire format -----

    def web_url(self, pipeline: LabPipeline) -> str:
        return f"{self.url}/{PROJECT_PATH}/-/pipelines/{pipeline.id}"

    def _sha(self, ref: str) -> str:
        return hashlib.sha1(ref.encode()).hexdigest()

    def pipeline_json(self, pipeline: LabPipeline) -> dict[str, Any]:
        return {
            "id": pipeline.id,
            "iid": pipeline.id,
            "project_id": PROJECT_ID,
            "sha": self._sha(pipeline.ref),
            "ref": pipeline.ref,
            "status": pipeline.status,
            "source": "trigger",
            "created_at": pipeline.created_at,
            "updated_at": pipeline.updated_at,
            "started_at": pipeline.started_at,
            "finished_at": pipeline.finished_at,
            "committed_at": None,
            "web_url": self.web_url(pipeline),
            "before_sha": "0" * 40,
            "tag": False,
            "yaml_errors": None,
            "user": {"id": 1, "username": "virtflow-bot", "name": "virtflow bot"},
            "duration": None,
            "queued_duration": None,
            "coverage": None,
            "detailed_status": {"text": pipeline.status, "label": pipeline.status},
        }

    def job_json(self, pipeline: LabPipeline) -> dict[str, Any]:
        job = pipeline.job
        artifact = job.workdir / "vm.json"
        body: dict[str, Any] = {
            "id": job.id,
            "name": job.name,
            "stage": "vm",
            "status": job.status,
            "ref": pipeline.ref,
            "tag": False,
            "coverage": None,
            "allow_failure": False,
            "created_at": job.created_at,
            "started_at": job.started_at,
            "finished_at": job.finished_at,
            "duration": None,
            "queued_duration": None,
            "user": {"id": 1, "username": "virtflow-bot"},
            "pipeline": {
                "id": pipeline.id,
                "project_id": PROJECT_ID,
                "ref": pipeline.ref,
                "sha": self._sha(pipeline.ref),
                "status": pipeline.status,
            },
            "web_url": f"{self.url}/{PROJECT_PATH}/-/jobs/{job.id}",
            "artifacts": [],
            "tag_list": [],
            "runner": None,
        }
        if job.status == "success" and artifact.is_file():
            body["artifacts"] = [
                {
                    "file_type": "archive",
                    "size": artifact.stat().st_size,
                    "filename": "artifacts.zip",
                }
            ]
        if job.failure_reason is not None:
            body["failure_reason"] = job.failure_reason
        return body

    # ----- HTTP -----

    def app(self) -> FastAPI:
        app = FastAPI(title="lab GitLab", openapi_url=None, docs_url=None, redoc_url=None)

        @app.middleware("http")
        async def faults(request: Request, call_next: Any) -> Response:
            if self._failing_requests:
                status = self._failing_requests.pop(0)
                return _error(status, f"{status} lab GitLab is failing on purpose")
            response: Response = await call_next(request)
            return response

        app.add_api_route(f"{API}/trigger/pipeline", self._trigger, methods=["POST"])
        app.add_api_route(f"{API}/pipelines/{{pipeline_id:int}}", self._get_pipeline)
        app.add_api_route(f"{API}/pipelines/{{pipeline_id:int}}/jobs", self._get_jobs)
        app.add_api_route(f"{API}/pipelines/{{pipeline_id:int}}/variables", self._get_variables)
        app.add_api_route(
            f"{API}/pipelines/{{pipeline_id:int}}/cancel", self._cancel, methods=["POST"]
        )
        app.add_api_route(f"{API}/jobs/{{job_id:int}}/trace", self._trace)
        app.add_api_route(f"{API}/jobs/{{job_id:int}}/artifacts/{{path:path}}", self._artifact)
        return app

    def _project_ok(self, project: str) -> bool:
        return project in (str(PROJECT_ID), PROJECT_PATH)

    def _authorised(self, request: Request) -> bool:
        token = request.headers.get("private-token") or request.headers.get("job-token")
        bearer = request.headers.get("authorization", "")
        if token is None and bearer.lower().startswith("bearer "):
            token = bearer[7:]
        return token is not None and secrets.compare_digest(token, self.api_token)

    async def _trigger(self, request: Request, project: str) -> JSONResponse:
        body = await _trigger_body(request)
        if body is None:
            return _error(400, "variables needs to be a map of key-valued strings", "error")
        token, ref, variables = body.get("token"), body.get("ref"), body.get("variables", {})
        if not token:
            return _error(400, "token is missing", "error")
        if not ref:
            return _error(400, "ref is missing", "error")
        if not isinstance(variables, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
        ):
            return _error(400, "variables needs to be a map of key-valued strings", "error")
        if not self._project_ok(project) or not secrets.compare_digest(
            str(token), self.trigger_token
        ):
            return _error(404, "404 Not Found")
        if ref not in REFS:
            return _error(400, {"base": ["Reference not found"]})
        pipeline = self.trigger(str(ref), variables)
        return JSONResponse(self.pipeline_json(pipeline), status_code=201)

    def _find(self, request: Request, project: str, pipeline_id: int) -> LabPipeline | Response:
        if not self._authorised(request):
            return _error(401, "401 Unauthorized")
        if not self._project_ok(project):
            return _error(404, "404 Project Not Found")
        pipeline = self.pipelines.get(pipeline_id)
        return pipeline if pipeline is not None else _error(404, "404 Not found")

    def _find_job(self, request: Request, project: str, job_id: int) -> LabPipeline | Response:
        pipeline = self._jobs.get(job_id)
        found = self._find(request, project, pipeline.id if pipeline else -1)
        return _error(404, "404 Job Not Found") if found is not pipeline else found

    async def _get_pipeline(self, request: Request, project: str, pipeline_id: int) -> Response:
        found = self._find(request, project, pipeline_id)
        if isinstance(found, Response):
            return found
        return JSONResponse(self.pipeline_json(found))

    async def _get_jobs(self, request: Request, project: str, pipeline_id: int) -> Response:
        found = self._find(request, project, pipeline_id)
        if isinstance(found, Response):
            return found
        jobs = [] if found.job.status == "skipped" else [self.job_json(found)]
        return JSONResponse(jobs)

    async def _get_variables(self, request: Request, project: str, pipeline_id: int) -> Response:
        found = self._find(request, project, pipeline_id)
        if isinstance(found, Response):
            return found
        return JSONResponse(
            [
                {"key": key, "value": value, "variable_type": "env_var"}
                for key, value in found.variables.items()
            ]
        )

    async def _cancel(self, request: Request, project: str, pipeline_id: int) -> Response:
        found = self._find(request, project, pipeline_id)
        if isinstance(found, Response):
            return found
        # GitLab answers at once with the pipeline as it is then; the jobs stop after.
        if found.status not in FINAL:
            found.move("canceling")
            stopping = asyncio.create_task(self.cancel(found.id))
            self._background.add(stopping)
            stopping.add_done_callback(self._background.discard)
        return JSONResponse(self.pipeline_json(found))

    async def _trace(self, request: Request, project: str, job_id: int) -> Response:
        found = self._find_job(request, project, job_id)
        if isinstance(found, Response):
            return found
        return PlainTextResponse("\n".join(found.job.trace) + "\n")

    async def _artifact(self, request: Request, project: str, job_id: int, path: str) -> Response:
        found = self._find_job(request, project, job_id)
        if isinstance(found, Response):
            return found
        file = (found.job.workdir / path).resolve()
        if (
            found.job.status != "success"
            or not file.is_relative_to(found.job.workdir.resolve())
            or not file.is_file()
            or path.startswith("runner")
        ):
            return _error(404, "404 Not Found")
        return Response(file.read_bytes(), media_type="application/octet-stream")

    # ----- lifecycle -----

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        server = EmbeddedServer(
            self.app(), host, port, name="the lab GitLab", timeout_graceful_shutdown=2
        )
        self.url = await server.start()
        self._server = server

    async def stop(self) -> None:
        for pipeline in list(self.pipelines.values()):
            await self.cancel(pipeline.id)
        if self._server is not None:
            await self._server.stop()
            self._server = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


async def _trigger_body(request: Request) -> dict[str, Any] | None:
    """JSON (python-gitlab) or a form / query string with `variables[KEY]=value` (curl)."""
    raw = await request.body()
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return None
        return data if isinstance(data, dict) else None
    pairs = parse_qsl(raw.decode(errors="replace")) + list(request.query_params.multi_items())
    body: dict[str, Any] = {"variables": {}}
    for key, value in pairs:
        if key.startswith("variables[") and key.endswith("]"):
            body["variables"][key[len("variables[") : -1]] = value
        else:
            body[key] = value
    return body
