"""The HTTP provisioner against a started lab hypervisor over real HTTP, through Temporal's
ActivityEnvironment: create is idempotent by name, refusals are final, an unreachable
hypervisor is left to the engine's retry."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, DescribeVmInput, DestroyVmInput, VmSpec
from lab.hypervisor import LabHypervisor
from provisioners.http_api import HttpProvisioner
from runtime.http_client import HttpClient


@pytest.fixture
async def hypervisor() -> AsyncIterator[LabHypervisor]:
    hv = LabHypervisor(
        [
            {
                "name": "bm-1",
                "cpu_capacity": 8,
                "cpu_allocation_ratio": 1.0,
                "memory_mb_capacity": 65536,
                "memory_allocation_ratio": 1.0,
            }
        ]
    )
    await hv.start()
    yield hv
    await hv.stop()


@pytest.fixture
async def http() -> AsyncIterator[HttpClient]:
    client = HttpClient()
    yield client
    await client.aclose()


def spec(name: str, cpu: int = 2) -> VmSpec:
    return VmSpec(name=name, host="bm-1", cpu=cpu, memory_mb=2048, labels={"a": "b"})


async def test_create_twice_gives_one_vm_then_destroy_leaves_nothing(
    hypervisor: LabHypervisor,
    http: HttpClient,
) -> None:
    acts = ProvisioningActivities(HttpProvisioner(hypervisor.url, http=http))
    env = ActivityEnvironment()
    first = await env.run(acts.create_vm, CreateVmInput(spec=spec("vm-a")))
    again = await env.run(acts.create_vm, CreateVmInput(spec=spec("vm-a")))
    assert first == again
    assert first.host == "bm-1" and first.ip and first.mac and first.vmid
    assert hypervisor.created == ["vm-a"]
    assert await env.run(acts.describe_vm, DescribeVmInput(name="vm-a")) == first

    await env.run(acts.destroy_vm, DestroyVmInput(name="vm-a", host="bm-1"))
    await env.run(acts.destroy_vm, DestroyVmInput(name="vm-a", host="bm-1"))
    assert await env.run(acts.describe_vm, DescribeVmInput(name="vm-a")) is None
    assert hypervisor.vms == {}


async def test_a_refused_create_is_final_and_says_why(
    hypervisor: LabHypervisor, http: HttpClient
) -> None:
    acts = ProvisioningActivities(HttpProvisioner(hypervisor.url, http=http))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(acts.create_vm, CreateVmInput(spec=spec("vm-big", 16)))
    assert caught.value.type == "ProvisioningFailed" and caught.value.non_retryable
    assert "HTTP 409" in caught.value.message
    assert "insufficient_cpu: host bm-1 has 8 of 8 cpu free, 16 requested" in caught.value.message


async def test_a_server_error_or_no_hypervisor_is_retried_by_the_engine(
    hypervisor: LabHypervisor,
    http: HttpClient,
) -> None:
    hypervisor.fail_next_create("disk array busy", transient=True)
    acts = ProvisioningActivities(HttpProvisioner(hypervisor.url, http=http))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(acts.create_vm, CreateVmInput(spec=spec("vm-b")))
    assert caught.value.type == "ProvisioningTransient" and not caught.value.non_retryable
    assert "HTTP 500: disk array busy" in caught.value.message

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    nowhere = ProvisioningActivities(HttpProvisioner(f"http://127.0.0.1:{port}", http=http))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(nowhere.create_vm, CreateVmInput(spec=spec("vm-c")))
    assert caught.value.type == "ProvisioningTransient"
    assert caught.value.message == "create vm-c: cannot connect (ClientConnectorError)"
