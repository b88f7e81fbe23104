"""PrepareSpare end to end with the GitLab provisioner: real Temporal, real python-gitlab over
real HTTP to the lab GitLab, whose pipelines run the real lab playbook. Also the Ansible
provisioner's retryable unreachable hypervisor. ~30 s on an idle machine.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from contracts.spare import Phase, ReleaseRequest
from contracts.vm import CreateVmInput, VmSpec
from lab.gitlab import LabGitLab
from provisioners.ansible import AnsibleProvisioner
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.stack import Stack, ledger_reservations, running_stack, wait_phase
from workflows.prepare_spare import PrepareSpare

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def stack(
    client: Client, task_queue: str, tmp_path: Path, inventory_doc: dict[str, Any]
) -> AsyncIterator[Stack]:
    async with running_stack(
        client, task_queue, tmp_path, inventory_doc, provisioner="gitlab"
    ) as running:
        yield running


def gitlab_of(stack: Stack) -> LabGitLab:
    assert stack.lab.gitlab is not None
    return stack.lab.gitlab


def pipelines_of(stack: Stack, spare_id: str) -> list[tuple[str, str]]:
    return [
        (p.variables["VIRTFLOW_ACTION"], p.status)
        for p in gitlab_of(stack).pipelines.values()
        if p.variables.get("VM_NAME") == spare_id
    ]


async def history_text(stack: Stack, workflow_id: str) -> str:
    """The JSON of a workflow's history and of its children's, recursively."""
    history = await stack.client.get_workflow_handle(workflow_id).fetch_history()
    texts = [history.to_json()]
    for event in history.events:
        if event.HasField("child_workflow_execution_started_event_attributes"):
            child = event.child_workflow_execution_started_event_attributes.workflow_execution
            texts.append(await history_text(stack, child.workflow_id))
    return "\n".join(texts)


async def test_a_spare_is_created_and_released_through_gitlab_pipelines(stack: Stack) -> None:
    req = stack.request()
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)
    status = await handle.query(PrepareSpare.status)
    vm = stack.lab.hypervisor.vms[req.spare_id]
    assert status.vm is not None and (status.vm.ip, status.vm.mac) == (vm.ip, vm.mac)
    assert pipelines_of(stack, req.spare_id) == [("create", "success")]

    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
    assert (await handle.result()).phase == Phase.RELEASED
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert pipelines_of(stack, req.spare_id) == [("create", "success"), ("destroy", "success")]

    # Neither token is anywhere in the histories, though both were used on every call.
    lab = gitlab_of(stack)
    text = await history_text(stack, handle.id)
    assert "ReleaseSpare" in text and '"destroy_vm"' in text  # the child's history is in
    assert lab.trigger_token not in text
    assert lab.api_token not in text


async def test_a_failed_pipeline_fails_the_spare_with_the_job_and_reason(stack: Stack) -> None:
    stack.lab.hypervisor.fail_next_create("image ubuntu-24.04 not found on host")
    req = stack.request()
    handle = await stack.start(req)
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()
    failure = caught.value.cause
    assert isinstance(failure, ApplicationError)
    assert failure.type == "ProvisioningFailed"
    assert "job create_vm (script_failure)" in failure.message
    assert "image ubuntu-24.04 not found on host" in failure.message
    assert pipelines_of(stack, req.spare_id)[0] == ("create", "failed")
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]


async def test_cancelling_the_spare_cancels_the_running_pipeline(stack: Stack) -> None:
    lab = gitlab_of(stack)
    lab.hold_pipelines()
    # A cancel reaches the create activity with a heartbeat's answer: beat often.
    req = stack.request(timeouts={"heartbeat_seconds": 2})
    handle = await stack.start(req)

    async def creating() -> None:
        assert pipelines_of(stack, req.spare_id) == [("create", "running")]

    await assert_eventually(creating, timeout=60)
    await handle.cancel()

    async def canceled() -> None:
        assert pipelines_of(stack, req.spare_id)[0] == ("create", "canceled")

    await assert_eventually(canceled, timeout=60)
    lab.release_pipelines()  # let the compensating destroy pipeline run
    with pytest.raises(WorkflowFailureError) as caught:
        await handle.result()
    assert isinstance(caught.value.cause, CancelledError)
    assert req.spare_id not in stack.lab.hypervisor.vms
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]
    # Compensation's destroy pipeline was triggered only once the create's had stopped.
    create, destroy = (p for p in lab.pipelines.values() if p.variables["VM_NAME"] == req.spare_id)
    assert (create.status, destroy.variables["VIRTFLOW_ACTION"]) == ("canceled", "destroy")
    assert create.finished_at is not None and destroy.created_at >= create.finished_at


async def test_a_cancel_during_an_http_create_waits_for_the_hypervisors_answer(
    client: Client, task_queue: str, tmp_path: Path, inventory_doc: dict[str, Any]
) -> None:
    def http(settings: Settings) -> Settings:
        url = settings.ansible_extravars["lab_hypervisor_url"]
        return settings.model_copy(update={"provisioner": "http", "hypervisor_api_url": url})

    async with running_stack(client, task_queue, tmp_path, inventory_doc, http) as stack:
        hypervisor = stack.lab.hypervisor
        hypervisor.hold_creates()  # the VM exists; the answer to its POST waits
        req = stack.request(timeouts={"heartbeat_seconds": 1})
        handle = await stack.start(req)
        try:
            await assert_eventually(lambda: _has(hypervisor.vms, req.spare_id))
            await handle.cancel()

            async def cancel_requested() -> None:
                # The create's; a webhook delivery may be pending beside it on a busy machine.
                pending = (await handle.describe()).raw_description.pending_activities
                (create,) = [p for p in pending if p.activity_type.name == "create_vm"]
                assert create.state == PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED

            await assert_eventually(cancel_requested)
            # The POST is still unanswered, so the create has not stopped: nothing is undone.
            assert (await handle.query(PrepareSpare.status)).phase == Phase.CREATING_VM
            assert req.spare_id in hypervisor.vms
        finally:
            hypervisor.release_creates()
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        assert isinstance(caught.value.cause, CancelledError)
        # Destroyed after the create answered: no VM, and no Node booted from it.
        assert req.spare_id not in hypervisor.vms
        assert stack.lab.kube.store.get("nodes", "", req.spare_id) is None
        assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]


async def _has(items: dict[str, Any], key: str) -> None:
    assert key in items


async def test_ansible_with_the_hypervisor_unreachable_is_retryable(tmp_path: Path) -> None:
    with socket_closed() as url:
        provisioner = AnsibleProvisioner(
            playbook_dir=REPO / "playbooks",
            hypervisor="lab",
            extravars={"lab_hypervisor_url": url, "lab_hypervisor_timeout": "5"},
            artifacts_root=tmp_path,
        )
        spec = VmSpec(name="spare-x", host="bm-1", cpu=1, memory_mb=512)
        with pytest.raises(ApplicationError) as caught:
            await ActivityEnvironment().run(
                ProvisioningActivities(provisioner).create_vm, CreateVmInput(spec=spec)
            )
    assert caught.value.type == "ProvisioningTransient" and not caught.value.non_retryable
    assert caught.value.message.startswith(f"lab hypervisor {url} answered -1")


@contextlib.contextmanager
def socket_closed() -> Iterator[str]:
    """A loopback URL where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"
