"""Provisioning activities: the real ansible-runner runs the real playbooks against a started
lab hypervisor, through Temporal's ActivityEnvironment. Each run costs ~2 s: twelve in all.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.heartbeats import QUIET_SECONDS
from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, DescribeVmInput, DestroyVmInput, VmFacts, VmSpec
from lab.hypervisor import LabHypervisor
from provisioners.ansible import AnsibleProvisioner
from provisioners.stopping import finish_first, run_stoppable
from runtime.settings import Settings
from tests.helpers import run_processes
from worker.worker import build_provisioner

REPO = Path(__file__).resolve().parents[2]
CREATE_TASK = "Ask the lab hypervisor for the VM"


@pytest.fixture(scope="module")
async def hypervisor() -> AsyncIterator[LabHypervisor]:
    hv = LabHypervisor(
        [
            {
                "name": "bm-1",
                "cpu_capacity": 32,
                "cpu_allocation_ratio": 2.0,
                "memory_mb_capacity": 131072,
                "memory_allocation_ratio": 1.0,
                "gpu_capacity": 0,
            }
        ]
    )
    await hv.start()
    yield hv
    await hv.stop()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    return tmp_path / "ansible"


@pytest.fixture
def activities(hypervisor: LabHypervisor, artifacts: Path) -> ProvisioningActivities:
    hypervisor.create_delay = 0.0
    provisioner = AnsibleProvisioner(
        playbook_dir=REPO / "playbooks",
        hypervisor="lab",
        extravars={"lab_hypervisor_url": hypervisor.url},
        artifacts_root=artifacts,
    )
    return ProvisioningActivities(provisioner)


def spec(name: str, **overrides: Any) -> VmSpec:
    fields: dict[str, Any] = {
        "name": name,
        "host": "bm-1",
        "cpu": 4,
        "memory_mb": 8192,
        "labels": {"virtflow.io/spare": "true"},
    }
    return VmSpec.model_validate(fields | overrides)


def recording_env() -> tuple[ActivityEnvironment, list[Any]]:
    env, beats = ActivityEnvironment(), list[Any]()
    env.on_heartbeat = lambda *details: beats.extend(details)
    return env, beats


async def test_create_returns_facts_from_set_stats_and_is_idempotent(
    hypervisor: LabHypervisor,
    activities: ProvisioningActivities,
    artifacts: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The create task lasts past the quiet period, so a heartbeat reports it.
    hypervisor.create_delay = QUIET_SECONDS
    env, beats = recording_env()
    with caplog.at_level(logging.DEBUG, logger="provisioners.task_clock"):
        facts = await env.run(activities.create_vm, CreateVmInput(spec=spec("spare-1", vmid=4242)))
    # Where the run's time went, task by task, with the hypervisor's delay on its task.
    (timed,) = [r for r in caplog.records if hasattr(r, "playbook_seconds")]
    spent = dict(timed.playbook_seconds)
    assert timed.playbook_seconds[0][0] == "(start of ansible-playbook)"
    assert timed.playbook_seconds[-1][0] == "(end of the play)"
    assert spent[CREATE_TASK] >= QUIET_SECONDS - 0.05  # stamps are to the microsecond
    assert all(seconds >= 0 for seconds in spent.values())
    lab_vm = hypervisor.vms["spare-1"]
    assert facts == VmFacts(name="spare-1", host="bm-1", ip=lab_vm.ip, mac=lab_vm.mac, vmid=4242)
    assert lab_vm.labels == {"virtflow.io/spare": "true"}
    assert {"task": CREATE_TASK} in beats
    assert list(artifacts.iterdir()) == []  # the per-run private data dir is gone

    # A retry after a worker crash: same name, never a second VM.
    again = await ActivityEnvironment().run(
        activities.create_vm, CreateVmInput(spec=spec("spare-1", cpu=8))
    )
    assert again == facts
    assert [name for name in hypervisor.vms if name == "spare-1"] == ["spare-1"]
    assert hypervisor.vms["spare-1"].cpu == 4

    described = await ActivityEnvironment().run(
        activities.describe_vm, DescribeVmInput(name="spare-1")
    )
    assert described == facts


async def test_destroy_is_idempotent(
    hypervisor: LabHypervisor, activities: ProvisioningActivities
) -> None:
    await hypervisor.create_vm(spec("spare-2").model_dump())
    destroy = DestroyVmInput(name="spare-2", host="bm-1")
    await ActivityEnvironment().run(activities.destroy_vm, destroy)
    assert "spare-2" not in hypervisor.vms
    await ActivityEnvironment().run(activities.destroy_vm, destroy)  # already gone: no error
    assert "spare-2" not in hypervisor.vms


async def test_permanent_failure_is_non_retryable_with_the_hypervisor_message(
    hypervisor: LabHypervisor, activities: ProvisioningActivities
) -> None:
    hypervisor.fail_next_create("image ubuntu-24.04 not found in datastore lab")
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-3")))
    assert caught.value.type == "ProvisioningFailed"
    assert caught.value.non_retryable
    assert caught.value.message == "image ubuntu-24.04 not found in datastore lab"
    assert "spare-3" not in hypervisor.vms


async def test_transient_failure_is_retryable(
    hypervisor: LabHypervisor, activities: ProvisioningActivities
) -> None:
    hypervisor.fail_next_create("hypervisor busy, try later", transient=True)
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-4")))
    assert caught.value.type == "ProvisioningTransient"
    assert not caught.value.non_retryable
    assert "answered 500: hypervisor busy, try later" in caught.value.message


async def test_describe_reports_an_absent_vm_as_none(
    activities: ProvisioningActivities,
) -> None:
    described = await ActivityEnvironment().run(
        activities.describe_vm, DescribeVmInput(name="spare-never-made")
    )
    assert described is None


async def test_a_lab_hypervisor_that_does_not_answer_is_transient_for_every_call(
    artifacts: Path,
) -> None:
    with socket.socket() as closed:  # a port nobody listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    activities = ProvisioningActivities(
        AnsibleProvisioner(
            playbook_dir=REPO / "playbooks",
            hypervisor="lab",
            extravars={"lab_hypervisor_url": f"http://127.0.0.1:{port}"},
            artifacts_root=artifacts,
        )
    )
    calls: list[tuple[Any, Any]] = [
        (activities.describe_vm, DescribeVmInput(name="spare-6")),
        (activities.destroy_vm, DestroyVmInput(name="spare-6", host="bm-1")),
    ]
    for call, given in calls:
        with pytest.raises(ApplicationError) as caught:
            await ActivityEnvironment().run(call, given)
        assert caught.value.type == "ProvisioningTransient"
        assert not caught.value.non_retryable
        assert f"127.0.0.1:{port} answered -1" in caught.value.message


async def test_cancellation_stops_the_playbook_and_only_its_own(
    hypervisor: LabHypervisor, activities: ProvisioningActivities, artifacts: Path
) -> None:
    # The hypervisor would hold the requests far longer than the bounds below: only a
    # stopped ansible-playbook lets the activity return in time, and only a stopped task
    # worker lets go of its request (Ansible's workers leave ansible-playbook's process
    # group, which the runner's own kill reaches). A run beside it keeps every process.
    hypervisor.create_delay = 600
    (env, beats), (other_env, other_beats) = recording_env(), recording_env()
    running = asyncio.create_task(
        env.run(activities.create_vm, CreateVmInput(spec=spec("spare-5")))
    )
    other = asyncio.create_task(
        other_env.run(activities.create_vm, CreateVmInput(spec=spec("spare-8")))
    )
    await eventually(lambda: {"task": CREATE_TASK} in beats and "spare-5" in hypervisor.vms)
    await eventually(lambda: {"task": CREATE_TASK} in other_beats and "spare-8" in hypervisor.vms)
    before = run_processes(artifacts)
    assert len(before) == 2
    # ansible-playbook and the task's worker at least, in each run
    assert all(len(pids) >= 2 for pids in before.values())

    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, timeout=60)
    await eventually(lambda: len(run_processes(artifacts)) == 1, timeout=10)
    ((marker, pids),) = run_processes(artifacts).items()
    assert pids == before[marker], "the run beside it lost a process"
    assert not other.done()

    other_env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(other, timeout=60)
    await eventually(lambda: not run_processes(artifacts), timeout=10)


async def test_a_destroy_first_stops_a_create_of_the_same_vm_still_running_here(
    hypervisor: LabHypervisor, activities: ProvisioningActivities
) -> None:
    # A create attempt whose heartbeat timed out keeps running in its worker, while the
    # engine, asked to cancel it, ends the activity at once and the compensation's destroy
    # starts: the destroy must not run beside it, or the create lands after the destroy.
    hypervisor.create_delay = 600
    env, beats = recording_env()
    orphan = asyncio.create_task(env.run(activities.create_vm, CreateVmInput(spec=spec("spare-7"))))
    await eventually(lambda: {"task": CREATE_TASK} in beats and "spare-7" in hypervisor.vms)

    destroy = DestroyVmInput(name="spare-7", host="bm-1")
    await asyncio.wait_for(ActivityEnvironment().run(activities.destroy_vm, destroy), timeout=60)
    # The create had stopped before the destroy looked, and the destroy found what it made.
    assert orphan.done()
    with pytest.raises(asyncio.CancelledError):
        await orphan
    assert "spare-7" not in hypervisor.vms
    # Only the orphan is stopped: a later create of the same name runs undisturbed.
    hypervisor.create_delay = 0.0
    again = await ActivityEnvironment().run(
        activities.create_vm, CreateVmInput(spec=spec("spare-7"))
    )
    assert again.name == "spare-7" and "spare-7" in hypervisor.vms


async def turns(count: int) -> None:
    """Let the event loop run `count` rounds of ready callbacks."""
    for _ in range(count):
        await asyncio.sleep(0)


async def eventually(condition: Any, timeout: float = 30.0) -> None:
    """Poll `condition` until true, failing after `timeout` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


async def test_a_hypervisor_without_a_directory_names_the_ones_there(
    artifacts: Path,
) -> None:
    provisioner = AnsibleProvisioner(
        playbook_dir=REPO / "playbooks", hypervisor="vmware", extravars={}, artifacts_root=artifacts
    )
    activities = ProvisioningActivities(provisioner)
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-6")))
    assert caught.value.non_retryable
    assert caught.value.message == (
        "hypervisor 'vmware' has no hypervisors/vmware/create.yml; "
        "hypervisors with create tasks: lab, libvirt, proxmox"
    )


def test_a_missing_ansible_inventory_stops_the_worker_at_start(tmp_path: Path) -> None:
    missing = tmp_path / "hosts.yaml"
    settings = Settings(state_dir=tmp_path, ansible_inventory=missing)
    with pytest.raises(ValueError, match="VIRTFLOW_ANSIBLE_INVENTORY") as raised:
        build_provisioner(settings, http=None)  # type: ignore[arg-type]
    assert str(missing) in str(raised.value)

    missing.write_text("all: {hosts: {}}\n")
    provisioner = build_provisioner(settings, http=None)  # type: ignore[arg-type]
    assert isinstance(provisioner, AnsibleProvisioner)
    assert provisioner.inventory == missing


async def test_a_second_cancel_still_waits_for_the_call_in_flight() -> None:
    # The SDK cancels an activity's task once per cancel it hears of; the wait for a call that
    # cannot be taken back (a libvirt define, a create's POST) must outlast every one of them.
    started, release, cancelled = threading.Event(), threading.Event(), threading.Event()

    def call() -> None:
        started.set()
        release.wait()

    waiting = asyncio.ensure_future(run_stoppable(call, cancelled))
    try:
        await eventually(started.is_set)
        waiting.cancel()
        await eventually(cancelled.is_set)
        waiting.cancel()  # again, while the call still runs
        await turns(5)  # a cancel that gets through ends the task within a turn or two
        assert not waiting.done(), "the second cancel cut the wait short"
    finally:
        release.set()
    with pytest.raises(asyncio.CancelledError):
        await waiting

    posted = asyncio.get_running_loop().create_future()
    sending = asyncio.ensure_future(finish_first(posted))
    await turns(1)
    sending.cancel()
    await turns(1)
    sending.cancel()
    await turns(5)
    assert not sending.done(), "the second cancel cut the wait short"
    posted.set_result("sent")
    with pytest.raises(asyncio.CancelledError):
        await sending
