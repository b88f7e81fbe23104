"""A spare cancelled while its create playbook runs leaves nothing behind on the real path.

Three spares are cancelled at three points of the libvirt create playbook: once the overlay
disk exists, once the cloud-init seed is built, once the domain is defined. Compensation
starts only after the cancelled playbook has stopped (the history shows the create cancelled
before the release begins), so its destroy finds all that the create made: afterwards there
is no domain, no disk, no seed, no console log and no bootstrap token, with no orphan sweep
running. No guest has to boot: the cancel comes before that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError

from activities.bootstrap_tokens import NAMESPACE
from activities.vm_join import cluster_endpoint
from contracts.spare import Phase
from lab.guest_image import GuestImage
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.libvirt.sshd import LoopbackSshd
from tests.libvirt.test_real_spare import real_site, record_tokens, remove_domain
from tests.stack import running_stack
from workflows.prepare_spare import PrepareSpare

pytestmark = [pytest.mark.libvirt]


def defined(uri: str, name: str) -> bool:
    import libvirt

    conn = libvirt.open(uri)
    try:
        return name in [d.name() for d in conn.listAllDomains()]
    finally:
        conn.close()


async def order_of_events(handle: WorkflowHandle[Any, Any]) -> list[str]:
    """The spare's history: the create ending cancelled, and the release that compensates."""
    kept = {
        EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "create stopped",
        EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: "release started",
    }
    return [kept[e.event_type] async for e in handle.fetch_history_events() if e.event_type in kept]


async def test_a_spare_cancelled_during_its_create_playbook_leaves_nothing(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    libvirt_uri: str,
    libvirt_collections: Path,
    guest_image: GuestImage,
    loopback_ssh: LoopbackSshd,
) -> None:
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    images = tmp_path / "images"
    images.mkdir()

    def configure(settings: Settings) -> Settings:
        port = urlsplit(cluster_endpoint(settings.kubeconfig).server).port
        return real_site(settings, tmp_path, loopback_ssh, guest_image, images, port)

    async with running_stack(client, task_queue, tmp_path, {"hosts": []}, configure) as stack:
        tokens = record_tokens(stack.lab.kube.store)

        async def cancel_once(point: str, reached: Callable[[str], bool]) -> str:
            # A short heartbeat timeout: the cancel reaches the activity with a heartbeat.
            req = stack.request(cpu=1, memory_mb=256, timeouts={"heartbeat_seconds": 3})
            name = req.spare_id
            request.addfinalizer(lambda: remove_domain(libvirt_uri, name))
            handle = await stack.start(req)

            async def at_point() -> None:
                assert reached(name), f"{name}: not yet at '{point}'"

            await assert_eventually(at_point, timeout=600, interval=0.05)
            await handle.cancel()
            with pytest.raises(WorkflowFailureError) as caught:
                await handle.result()
            assert isinstance(caught.value.cause, CancelledError)
            assert (await handle.query(PrepareSpare.status)).phase == Phase.CANCELLED
            # The create was cut short mid-playbook, and the release began after it stopped.
            events = await order_of_events(handle)
            assert events == ["create stopped", "release started"], f"{point}: {events}"
            return name

        names = await asyncio.gather(
            cancel_once("disk", lambda n: (images / f"{n}.qcow2").exists()),
            cancel_once("seed", lambda n: (images / f"{n}-seed.iso").exists()),
            cancel_once("domain", lambda n: defined(libvirt_uri, n)),
        )
        # Each made a token (a retried attempt makes another); none is left, nor anything on
        # the hypervisor.
        assert len(tokens) >= 3
        assert stack.lab.kube.store.list("secrets", NAMESPACE) == []
        assert [n for n in names if defined(libvirt_uri, n)] == []
        assert sorted(p.name for p in images.iterdir()) == []
