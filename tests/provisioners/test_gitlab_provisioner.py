"""The GitLab provisioner through Temporal's ActivityEnvironment, against the lab GitLab over
real HTTP with the real python-gitlab; the pipelines run the real lab playbook. ~15 s.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.heartbeats import QUIET_SECONDS
from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, DescribeVmInput, DestroyVmInput, VmFacts, VmSpec
from lab.gitlab import PROJECT_PATH, LabGitLab
from lab.hypervisor import LabHypervisor
from provisioners.gitlab_pipeline import GitLabProvisioner, trace_tail
from tests.helpers import assert_eventually
from tests.lab_gitlab import running_lab_gitlab


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[tuple[LabGitLab, LabHypervisor]]:
    async with running_lab_gitlab(tmp_path / "gitlab") as servers:
        yield servers


def provisioner_for(server: LabGitLab, url: str | None = None, **tokens: str) -> GitLabProvisioner:
    return GitLabProvisioner(
        url=url or server.url,
        project=PROJECT_PATH,
        ref="main",
        trigger_token=SecretStr(tokens.get("trigger", server.trigger_token)),
        api_token=SecretStr(tokens.get("api", server.api_token)),
        poll_seconds=0.1,
    )


def spec(name: str) -> VmSpec:
    return VmSpec(name=name, host="bm-1", cpu=2, memory_mb=2048, vmid=4321, labels={"a": "b"})


def recording_env() -> tuple[ActivityEnvironment, list[Any]]:
    env, beats = ActivityEnvironment(), list[Any]()
    env.on_heartbeat = lambda *details: beats.extend(details)
    return env, beats


async def test_create_reads_vm_json_and_a_second_create_finds_the_same_vm(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, hv = lab
    hv.create_delay = QUIET_SECONDS  # the pipeline outlasts the quiet period: it is reported
    activities = ProvisioningActivities(provisioner_for(server))
    env, beats = recording_env()
    facts = await env.run(activities.create_vm, CreateVmInput(spec=spec("spare-a")))
    vm = hv.vms["spare-a"]
    assert facts == VmFacts(name="spare-a", host="bm-1", ip=vm.ip, mac=vm.mac, vmid=4321)
    web_url = f"{server.url}/{PROJECT_PATH}/-/pipelines/1"
    assert {"task": f"pipeline 1 success {web_url}"} in beats
    assert server.pipelines[1].variables["VM_LABELS"] == '{"a": "b"}'

    again = await ActivityEnvironment().run(
        activities.create_vm, CreateVmInput(spec=spec("spare-a"))
    )
    assert again == facts
    assert list(hv.vms) == ["spare-a"]

    described = await ActivityEnvironment().run(
        activities.describe_vm, DescribeVmInput(name="spare-a")
    )
    assert described == facts
    await ActivityEnvironment().run(activities.destroy_vm, DestroyVmInput(name="spare-a"))
    assert hv.vms == {}
    gone = await ActivityEnvironment().run(activities.describe_vm, DescribeVmInput(name="spare-a"))
    assert gone is None


async def test_a_failed_pipeline_is_final_with_job_name_and_trace_tail(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, hv = lab
    hv.fail_next_create("image ubuntu-24.04 not found in datastore lab")
    activities = ProvisioningActivities(provisioner_for(server))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-b")))
    assert caught.value.type == "ProvisioningFailed" and caught.value.non_retryable
    assert caught.value.message.startswith("pipeline 1 failed: job create_vm (script_failure)")
    assert "image ubuntu-24.04 not found in datastore lab" in caught.value.message


async def test_a_pipeline_failed_by_a_transient_playbook_error_is_retryable(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, hv = lab
    hv.fail_next_create("hypervisor busy", transient=True)
    activities = ProvisioningActivities(provisioner_for(server))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-c")))
    assert caught.value.type == "ProvisioningTransient" and not caught.value.non_retryable


async def test_a_pipeline_canceled_in_gitlab_is_final(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, _ = lab
    server.hold_pipelines()
    activities = ProvisioningActivities(provisioner_for(server))
    running = asyncio.create_task(
        ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-d")))
    )

    async def started() -> None:
        assert 1 in server.pipelines and server.pipelines[1].status == "running"

    await assert_eventually(started)
    await server.cancel(1)
    with pytest.raises(ApplicationError) as caught:
        await running
    assert caught.value.non_retryable
    assert caught.value.message == (
        f"pipeline 1 was canceled ({server.url}/{PROJECT_PATH}/-/pipelines/1)"
    )


async def test_cancelling_the_activity_cancels_the_pipeline(
    lab: tuple[LabGitLab, LabHypervisor],
) -> None:
    server, hv = lab
    server.hold_pipelines()
    activities = ProvisioningActivities(provisioner_for(server))
    env, beats = recording_env()
    running = asyncio.create_task(
        env.run(activities.create_vm, CreateVmInput(spec=spec("spare-e")))
    )

    async def reported_running() -> None:
        assert any(str(b.get("task", "")).startswith("pipeline 1 running") for b in beats)

    await assert_eventually(reported_running)
    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert server.pipelines[1].status == "canceled"  # confirmed before the activity ended
    assert "spare-e" not in hv.vms


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_gitlab_errors_map_to_retry_decisions(lab: tuple[LabGitLab, LabHypervisor]) -> None:
    server, _ = lab
    cases = [
        (provisioner_for(server, url=f"http://127.0.0.1:{closed_port()}"), False, "unreachable"),
        (provisioner_for(server, trigger="glptt-wrong"), True, "GitLab answered 404"),
        (provisioner_for(server, api="glpat-wrong"), True, "GitLab answered 401"),
    ]
    for provisioner, final, words in cases:
        with pytest.raises(ApplicationError) as caught:
            await ActivityEnvironment().run(
                ProvisioningActivities(provisioner).create_vm, CreateVmInput(spec=spec("spare-f"))
            )
        assert caught.value.non_retryable is final, caught.value.message
        assert words in caught.value.message
    server.fail_next_requests(503)
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(
            ProvisioningActivities(provisioner_for(server)).create_vm,
            CreateVmInput(spec=spec("spare-f")),
        )
    assert not caught.value.non_retryable
    assert "GitLab answered 503" in caught.value.message


def test_trace_tail_drops_colours_sections_and_blank_lines() -> None:
    trace = b"\x1b[32;1mok\x1b[0;m\nsection_end:1700000000:step_script\r\x1b[0K\n\n" + b"x\n" * 20
    assert trace_tail(trace) == "\n".join(["x"] * 12)
