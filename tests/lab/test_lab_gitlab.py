"""The lab GitLab against the real python-gitlab over real HTTP, with the real lab playbook.

python-gitlab is synchronous and the server runs in the test's loop, so every call goes
through a thread. Two pipelines run the playbook (~2 s each); the rest never reach it. ~8 s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import gitlab
import pytest
from gitlab.v4.objects import Project

from lab.gitlab import PROJECT_PATH, LabGitLab
from lab.hypervisor import LabHypervisor
from tests.helpers import assert_eventually
from tests.lab_gitlab import running_lab_gitlab

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(fn, *args, **kwargs)


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[tuple[LabGitLab, LabHypervisor]]:
    async with running_lab_gitlab(tmp_path / "gitlab") as servers:
        yield servers


def project_of(server: LabGitLab, token: str | None = None) -> Project:
    gl = gitlab.Gitlab(server.url, private_token=token or server.api_token, timeout=10)
    return gl.projects.get(PROJECT_PATH, lazy=True)


VM = {
    "VIRTFLOW_ACTION": "create",
    "VM_NAME": "spare-gl-1",
    "VM_HOST": "bm-1",
    "VM_CPU": "2",
    "VM_MEMORY_MB": "2048",
    "VM_LABELS": json.dumps({"virtflow.io/spare": "true"}),
}


async def finished(project: Project, pipeline_id: int) -> Any:
    async def final() -> Any:
        pipeline = await call(project.pipelines.get, pipeline_id)
        assert pipeline.status in ("success", "failed", "canceled"), pipeline.status
        return pipeline

    return await assert_eventually(final, timeout=60)


async def test_a_triggered_pipeline_runs_the_playbook_and_publishes_vm_json(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, hv = lab
    project = project_of(server)
    pipeline = await call(project.trigger_pipeline, "main", server.trigger_token, variables=VM)
    assert pipeline.status == "created"
    assert pipeline.source == "trigger" and pipeline.ref == "main"
    assert pipeline.web_url == f"{server.url}/{PROJECT_PATH}/-/pipelines/{pipeline.id}"
    assert {"id", "iid", "project_id", "sha", "created_at"} <= set(pipeline.attributes)

    done = await finished(project, pipeline.id)
    assert done.status == "success"
    (job,) = await call(done.jobs.list, get_all=True)
    assert (job.name, job.status, job.stage) == ("create_vm", "success", "vm")
    job_api = project.jobs.get(job.id, lazy=True)
    facts = json.loads(await call(job_api.artifact, "vm.json"))
    vm = hv.vms["spare-gl-1"]
    assert facts == {"name": vm.name, "host": "bm-1", "ip": vm.ip, "mac": vm.mac, "vmid": vm.vmid}
    assert vm.labels == {"virtflow.io/spare": "true"}
    trace = (await call(job_api.trace)).decode()
    assert "TASK [Ask the lab hypervisor for the VM]" in trace
    assert trace.rstrip().endswith("Job succeeded")


async def test_trigger_errors_are_gitlabs(lab: tuple[LabGitLab, LabHypervisor]) -> None:
    server, _ = lab
    project = project_of(server)
    cases: list[tuple[str, str, dict[str, Any], int, str]] = [
        ("main", "", VM, 400, "token is missing"),
        ("main", "glptt-wrong", VM, 404, "404 Not Found"),
        ("nope", server.trigger_token, VM, 400, "Reference not found"),
        ("main", server.trigger_token, {"VM_CPU": 2}, 400, "key-valued strings"),
    ]
    for ref, token, variables, status, message in cases:
        with pytest.raises(gitlab.GitlabCreateError) as caught:
            await call(project.trigger_pipeline, ref, token, variables=variables)
        assert caught.value.response_code == status, (ref, token)
        assert message in str(caught.value.error_message)
    elsewhere = gitlab.Gitlab(server.url, private_token=server.api_token).projects.get(
        "other/project", lazy=True
    )
    with pytest.raises(gitlab.GitlabCreateError) as caught:
        await call(elsewhere.trigger_pipeline, "main", server.trigger_token, variables=VM)
    assert caught.value.response_code == 404
    assert server.pipelines == {}


async def test_reads_need_the_api_token_and_an_existing_pipeline(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, _ = lab
    server.hold_pipelines()
    pipeline = server.trigger("main", {**VM, "VIRTFLOW_ACTION": "describe"})
    with pytest.raises(gitlab.GitlabAuthenticationError) as caught:
        await call(project_of(server, token="glpat-wrong").pipelines.get, pipeline.id)
    assert caught.value.response_code == 401
    with pytest.raises(gitlab.GitlabGetError) as missing:
        await call(project_of(server).pipelines.get, 999)
    assert missing.value.response_code == 404
    with pytest.raises(gitlab.GitlabGetError) as no_artifact:
        await call(project_of(server).jobs.get(pipeline.job.id, lazy=True).artifact, "vm.json")
    assert no_artifact.value.response_code == 404


async def test_cancel_answers_200_and_the_pipeline_ends_canceled(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, hv = lab
    server.hold_pipelines()
    project = project_of(server)
    pipeline = await call(project.trigger_pipeline, "main", server.trigger_token, variables=VM)

    async def running() -> None:
        assert (await call(project.pipelines.get, pipeline.id)).status == "running"

    await assert_eventually(running)
    answer = await call(project.pipelines.get(pipeline.id, lazy=True).cancel)
    assert isinstance(answer, dict)
    assert answer["status"] in ("canceling", "canceled")
    assert (await finished(project, pipeline.id)).status == "canceled"
    (job,) = await call(project.pipelines.get(pipeline.id, lazy=True).jobs.list, get_all=True)
    assert job.status == "canceled"
    assert "spare-gl-1" not in hv.vms
    # Cancelling a finished pipeline still answers 200, with its status unchanged.
    again = await call(project.pipelines.get(pipeline.id, lazy=True).cancel)
    assert isinstance(again, dict)
    assert again["status"] == "canceled"


async def test_a_failed_pipeline_names_its_job_and_reason(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, _ = lab
    server.fail_next_pipeline("fatal: no route to host bm-1")
    project = project_of(server)
    pipeline = await call(project.trigger_pipeline, "main", server.trigger_token, variables=VM)
    assert (await finished(project, pipeline.id)).status == "failed"
    (job,) = await call(project.pipelines.get(pipeline.id, lazy=True).jobs.list, get_all=True)
    assert (job.name, job.status, job.failure_reason) == ("create_vm", "failed", "script_failure")
    trace = (await call(project.jobs.get(job.id, lazy=True).trace)).decode()
    assert "fatal: no route to host bm-1" in trace


async def test_pipelines_of_one_vm_wait_for_each_other(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, _ = lab
    server.hold_pipelines()
    first = server.trigger("main", VM)
    second = server.trigger("main", {**VM, "VIRTFLOW_ACTION": "destroy"})
    other = server.trigger("main", {**VM, "VM_NAME": "spare-gl-2"})

    async def queued() -> None:
        assert (first.status, second.status, other.status) == (
            "running",
            "waiting_for_resource",
            "running",
        )

    await assert_eventually(queued)
    for pipeline in (first, second, other):
        await server.cancel(pipeline.id)
    assert {p.status for p in (first, second, other)} == {"canceled"}


async def test_a_5xx_reaches_python_gitlab_as_such(lab: tuple[LabGitLab, LabHypervisor]) -> None:
    server, _ = lab
    server.fail_next_requests(503)
    with pytest.raises(gitlab.GitlabError) as caught:
        await call(project_of(server).pipelines.get, 1)
    assert caught.value.response_code == 503


def test_a_relative_workdir_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The playbook writes vm.json from its own working directory (virtflow dev's state dir
    # is relative).
    monkeypatch.chdir(tmp_path)
    server = LabGitLab(REPO / "playbooks", {}, workdir=Path("gitlab"))
    assert server.workdir == (tmp_path / "gitlab").resolve()
