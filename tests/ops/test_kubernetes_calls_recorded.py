"""The source scan behind the RBAC check, held against what a spare's whole life really sends:
every Kubernetes request the product's code makes while a spare is prepared, becomes Ready,
is drained and released is one the scan found, and one the worker's RBAC allows."""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest
from lightkube.core import generic_client
from temporalio.client import Client

from contracts.spare import Phase, ReleaseRequest
from lab.hypervisor import load_inventory_file
from runtime.settings import REPO_ROOT
from tests.chaos.evidence import running_activities
from tests.helpers import assert_eventually
from tests.ops.kube_calls import ApiCall, rbac_target
from tests.ops.kube_calls import product_calls as scanned_calls
from tests.ops.test_kubernetes_manifests import (
    KUSTOMIZE_ROOT,
    PRODUCT_PACKAGES,
    WORKER_SA,
    _rules_of,
    allowed,
    render,
)
from tests.stack import LAB_INVENTORY, running_stack, wait_phase
from workflows.prepare_spare import PrepareSpare

LIFE_SECONDS = 90
_VERBS = {"post": "create", "put": "update", "global_list": "list"}
_PRODUCT_DIRS = tuple(str(REPO_ROOT / p) + "/" for p in PRODUCT_PACKAGES)


def _from_product() -> str | None:
    """The product's file and line this request comes from, if any."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(_PRODUCT_DIRS):
            return f"{Path(frame.f_code.co_filename).relative_to(REPO_ROOT)}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return None


class Recorder:
    def __init__(self) -> None:
        self.calls: list[ApiCall] = []

    def wrap(self, original: Any) -> Any:
        signature = inspect.signature(original)

        def prepare_request(*args: Any, **kwargs: Any) -> Any:
            request = original(*args, **kwargs)
            where = _from_product()
            if where is not None:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                arguments["client"] = arguments.pop("self")
                self.record(where, **arguments)
            return request

        return prepare_request

    def record(self, where: str, *, method: str, res: Any, obj: Any, **kw: Any) -> None:
        group, resource, namespaced = rbac_target(res or type(obj))
        verb = "watch" if kw["watch"] else _VERBS.get(method, method)
        namespace = kw["namespace"]
        if not namespaced or namespace == "*":
            namespace = None
        elif namespace is None:
            from_object = obj.metadata.namespace if obj is not None and obj.metadata else None
            namespace = from_object or kw["client"].namespace
        self.calls.append(ApiCall(verb, group, resource, namespace, where))


def _scanned(call: ApiCall, scanned: list[ApiCall]) -> bool:
    return any(
        (s.verb, s.group, s.resource) == (call.verb, call.group, call.resource)
        and s.namespace in (None, call.namespace)
        for s in scanned
    )


async def test_every_request_of_a_spares_life_is_scanned_and_allowed(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    original = generic_client.GenericClient.prepare_request
    monkeypatch.setattr(generic_client.GenericClient, "prepare_request", recorder.wrap(original))
    doc = load_inventory_file(LAB_INVENTORY)
    async with running_stack(client, task_queue, tmp_path, doc, provisioner="http") as stack:
        request = stack.request()
        # Not Ready at first, so the Ready wait lists and watches the Node.
        stack.lab.kubelet.set_behaviour(request.spare_id, never_ready=True)
        handle = await stack.start(request)

        async def waiting() -> None:
            assert "wait_node_ready" in await running_activities(handle)

        await assert_eventually(waiting, timeout=60, interval=0.2)
        await stack.lab.kubelet.mark_ready(request.spare_id)
        await wait_phase(handle, Phase.READY)
        # A request the recorder broke would be retried for ever: bound the release.
        async with asyncio.timeout(LIFE_SECONDS):
            await handle.execute_update(PrepareSpare.release, ReleaseRequest())
            assert (await handle.result()).phase == Phase.RELEASED

    seen = {(c.verb, c.resource) for c in recorder.calls}
    # The life of a spare: the Node watched, cordoned and deleted, its pods evicted.
    assert {("watch", "nodes"), ("patch", "nodes"), ("delete", "nodes")} <= seen
    assert {("list", "pods"), ("create", "pods/eviction")} <= seen
    scanned = scanned_calls(REPO_ROOT, PRODUCT_PACKAGES)
    unscanned = sorted({str(c) for c in recorder.calls if not _scanned(c, scanned)})
    assert unscanned == [], "requests the source scan missed:\n" + "\n".join(unscanned)
    granted = _rules_of(render(KUSTOMIZE_ROOT / "base"), WORKER_SA)
    refused = sorted({str(c) for c in recorder.calls if not allowed(granted, c)})
    assert refused == [], "requests the worker's RBAC refuses:\n" + "\n".join(refused)
