"""The worker's clients, one per cluster: credentials rotate without a restart, from a file or
from Cluster API's `<cluster>-kubeconfig` Secret, and an unregistered cluster is refused."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.kube_clusters import ClusterAccess, ClusterClients
from activities.kubernetes import CheckNodeReadyInput, KubernetesActivities
from contracts.kubernetes import WaitNodeReadyInput
from lab.kube_testing import KubeLab, eventually, kube_lab


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[KubeLab]:
    async with kube_lab(tmp_path) as kube:
        yield kube


async def look(acts: KubernetesActivities, cluster: str = "c1") -> bool:
    inp = CheckNodeReadyInput(node_name="spare-c1-r1", cluster=cluster)
    return (await ActivityEnvironment().run(acts.check_node_ready, inp)).ready


async def test_a_rotated_kubeconfig_file_is_picked_up(lab: KubeLab, tmp_path: Path) -> None:
    acts = KubernetesActivities(ClusterClients({"c1": ClusterAccess(kubeconfig=lab.kubeconfig)}))
    try:
        assert not await look(acts)
        lab.api.token = "rotated-token-1c2d3e"
        with pytest.raises(ApplicationError, match="401"):
            await look(acts)
        lab.api.write_kubeconfig(lab.kubeconfig)  # the new credentials, as a rotation writes
        assert not await look(acts)
    finally:
        await acts.close()


def _kubeconfig_secret(seed: KubeLab, cluster: KubeLab, name: str, namespace: str) -> None:
    """The Secret Cluster API keeps in the seed for a workload cluster: its kubeconfig."""
    value = base64.b64encode(cluster.kubeconfig.read_bytes()).decode()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"{name}-kubeconfig", "namespace": namespace},
        "data": {"value": value},
    }
    if seed.api.store.get("secrets", namespace, f"{name}-kubeconfig") is None:
        seed.api.store.create("secrets", namespace, secret)
    else:
        seed.api.store.replace("secrets", namespace, f"{name}-kubeconfig", secret)


async def test_a_cluster_api_kubeconfig_secret_is_read_and_its_rotation_picked_up(
    lab: KubeLab, tmp_path: Path
) -> None:
    async with kube_lab(tmp_path / "seed") as seed:
        _kubeconfig_secret(seed, lab, "c1", "default")
        clusters = ClusterClients(
            {"c1": ClusterAccess(secret_namespace="default")},
            seed_kubeconfig=seed.kubeconfig,
            secret_refresh_seconds=3600,
        )
        acts = KubernetesActivities(clusters)
        try:
            assert not await look(acts)
            assert lab.api.calls and not [c for c in seed.api.calls if "nodes" in c[1]]
            lab.api.token = "rotated-token-4f5a6b"
            lab.api.write_kubeconfig(lab.kubeconfig)
            _kubeconfig_secret(seed, lab, "c1", "default")
            # Refused once with the old credentials, which sends the next call to the Secret:
            # retried, not a failure of the spare.
            with pytest.raises(ApplicationError, match="401") as refused:
                await look(acts)
            assert refused.value.type == "KubernetesCredentialsRotated"
            assert not refused.value.non_retryable
            assert not await look(acts)

            # Credentials revoked and the Secret not updated: read again once, then final.
            lab.api.token = "revoked-token-7a8b9c"
            with pytest.raises(ApplicationError, match="401") as refused:
                await look(acts)
            assert not refused.value.non_retryable
            with pytest.raises(ApplicationError, match="401") as refused:
                await look(acts)
            assert refused.value.type == "KubernetesUnauthorized"
            assert refused.value.non_retryable
        finally:
            await acts.close()


async def test_the_ready_wait_goes_on_through_a_rotation_of_the_kubeconfig_secret(
    lab: KubeLab, tmp_path: Path
) -> None:
    async with kube_lab(tmp_path / "seed") as seed:
        _kubeconfig_secret(seed, lab, "c1", "default")
        clusters = ClusterClients(
            {"c1": ClusterAccess(secret_namespace="default")},
            seed_kubeconfig=seed.kubeconfig,
            secret_refresh_seconds=3600,
        )
        acts = KubernetesActivities(clusters)

        def secret_reads() -> int:
            return sum(1 for _, path in seed.api.calls if path.endswith("/c1-kubeconfig"))

        lab.kubelet.set_behaviour("spare-c1-r1", never_ready=True)
        await lab.kubelet.vm_started("spare-c1-r1", None, {})
        await eventually(lambda: lab.api.store.get("nodes", "", "spare-c1-r1") is not None)
        try:
            inp = WaitNodeReadyInput(node_name="spare-c1-r1", cluster="c1", poll_hint_seconds=0.2)
            waiting = asyncio.create_task(ActivityEnvironment().run(acts.wait_node_ready, inp))
            # Listed, then watching (the same path, the watch's query aside).
            await eventually(lambda: list(lab.api.calls).count(("GET", "/api/v1/nodes")) >= 2)
            lab.api.token = "rotated-token-0d1e2f"
            lab.api.write_kubeconfig(lab.kubeconfig)
            _kubeconfig_secret(seed, lab, "c1", "default")
            lab.api.drop_watches()  # the re-list meets the old credentials' 401
            # Refused, the wait reads the Secret again (once an hour otherwise).
            await eventually(lambda: secret_reads() == 2)
            await lab.kubelet.mark_ready("spare-c1-r1")
            # Bounded only so that a wait that never ends fails here instead of hanging.
            assert (await asyncio.wait_for(waiting, 60)).ready
        finally:
            await acts.close()


async def test_an_unregistered_cluster_is_refused_for_good(lab: KubeLab) -> None:
    acts = KubernetesActivities(ClusterClients({"c1": ClusterAccess(kubeconfig=lab.kubeconfig)}))
    try:
        with pytest.raises(ApplicationError) as refused:
            await look(acts, cluster="c2")
        assert refused.value.type == "UnknownCluster" and refused.value.non_retryable
        assert refused.value.message == "unknown cluster 'c2' (registered: c1)"
    finally:
        await acts.close()
