"""Two real clients judge the lab Kubernetes API: the official Python client (`kubernetes`) and
kubectl, through the kubeconfig the lab writes. One API and kubelet serve the whole module.

The official client is synchronous and the API runs in the test's loop, so its calls go
through a thread. About 3 s.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from lab.kube_testing import KubeLab, kube_lab
from tests.helpers import assert_eventually

NODE = "spare-clients-1"
KUBECTL = os.environ.get("VIRTFLOW_KUBECTL") or shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
BOOTSTRAP_ID, BOOTSTRAP_SECRET = "abcdef", "0123456789abcdef"


@dataclass
class Lab:
    kube: KubeLab
    api: client.ApiClient
    bootstrap_kubeconfig: Path

    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Any: the client's models type every field optional, the tests read what the lab set."""
    return await asyncio.to_thread(fn, *args, **kwargs)


@pytest.fixture(scope="module")
async def lab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Lab]:
    directory = tmp_path_factory.mktemp("kube-clients")
    async with kube_lab(directory, ready_delay=0.05) as running:
        await running.kubelet.vm_started(NODE, "10.0.2.15", {"virtflow.io/spare": "true"})
        running.api.store.create(
            "secrets",
            "kube-system",
            {
                "metadata": {"name": f"bootstrap-token-{BOOTSTRAP_ID}"},
                "type": "bootstrap.kubernetes.io/token",
                "stringData": {
                    "token-id": BOOTSTRAP_ID,
                    "token-secret": BOOTSTRAP_SECRET,
                    "usage-bootstrap-authentication": "true",
                },
            },
        )
        bootstrap = yaml.safe_load(running.kubeconfig.read_text())
        bootstrap["users"][0]["user"]["token"] = f"{BOOTSTRAP_ID}.{BOOTSTRAP_SECRET}"
        bootstrap_path = directory / "bootstrap-kubeconfig"
        bootstrap_path.write_text(yaml.safe_dump(bootstrap))
        api = config.new_client_from_config(config_file=str(running.kubeconfig))
        try:
            yield Lab(running, api, bootstrap_path)
        finally:
            api.close()


async def test_version_has_every_field_a_real_apiserver_answers(lab: Lab) -> None:
    info = await call(client.VersionApi(lab.api).get_code)
    assert (info.major, info.minor) == ("1", "31")
    assert info.git_version.startswith("v1.31.0")
    assert len(info.git_commit) == 40 and info.git_tree_state == "clean"
    assert info.build_date and info.go_version.startswith("go") and info.compiler == "gc"
    assert info.platform.startswith("linux/")


async def test_list_nodes_pods_and_leases(lab: Lab) -> None:
    nodes = await call(lab.core().list_node)
    assert [n.metadata.name for n in nodes.items] == [NODE]
    assert nodes.metadata.resource_version
    pods = await call(
        lab.core().list_pod_for_all_namespaces, field_selector=f"spec.nodeName={NODE}"
    )
    assert {p.metadata.name for p in pods.items} == {f"kube-proxy-{NODE}", f"workload-{NODE}"}
    lease = await call(
        client.CoordinationV1Api(lab.api).read_namespaced_lease, NODE, "kube-node-lease"
    )
    assert lease.spec.holder_identity == NODE and lease.spec.renew_time is not None


async def test_watch_sees_a_patch_to_a_node(lab: Lab) -> None:
    listed = await call(lab.core().list_node)
    since = listed.metadata.resource_version
    watcher = watch.Watch()

    def first_modified() -> Any:
        events = watcher.stream(lab.core().list_node, resource_version=since, timeout_seconds=20)
        try:
            for event in events:
                if event["type"] == "MODIFIED" and event["object"].metadata.labels.get("watched"):
                    return event["object"]
            return None
        finally:
            events.close()  # the connection too, not only the loop

    seen = asyncio.create_task(call(first_modified))
    patched = await call(lab.core().patch_node, NODE, {"metadata": {"labels": {"watched": "yes"}}})
    assert patched.metadata.labels["watched"] == "yes"
    modified = await seen
    assert modified is not None and modified.metadata.name == NODE


async def test_evict_deletes_a_pod_and_a_budget_refuses_with_429(lab: Lab) -> None:
    namespace, workload = "default", f"workload-{NODE}"
    lab.kube.api.block_eviction(namespace, workload)
    body = client.V1Eviction(metadata=client.V1ObjectMeta(name=workload, namespace=namespace))
    with pytest.raises(ApiException) as refused:
        await call(lab.core().create_namespaced_pod_eviction, workload, namespace, body)
    assert refused.value.status == 429
    assert "disruption budget" in json.loads(refused.value.body or "{}").get("message", "")

    lab.kube.api.unblock_eviction(namespace, workload)
    await call(lab.core().create_namespaced_pod_eviction, workload, namespace, body)

    async def gone() -> None:
        with pytest.raises(ApiException) as missing:
            await call(lab.core().read_namespaced_pod, workload, namespace)
        assert missing.value.status == 404

    await assert_eventually(gone, timeout=10)


def access_review(
    verb: str, resource: str, namespace: str = ""
) -> client.V1SelfSubjectAccessReview:
    attributes = client.V1ResourceAttributes(verb=verb, resource=resource, namespace=namespace)
    spec = client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes)
    return client.V1SelfSubjectAccessReview(spec=spec)


async def test_access_reviews_answer_from_the_callers_role(lab: Lab) -> None:
    admin = client.AuthorizationV1Api(lab.api)
    review = await call(admin.create_self_subject_access_review, access_review("delete", "nodes"))
    assert review.status.allowed and "cluster-admin" in review.status.reason

    joining = config.new_client_from_config(config_file=str(lab.bootstrap_kubeconfig))
    try:
        bootstrapper = client.AuthorizationV1Api(joining)
        nodes = await call(
            bootstrapper.create_self_subject_access_review, access_review("create", "nodes")
        )
        secrets = await call(
            bootstrapper.create_self_subject_access_review,
            access_review("list", "secrets", "kube-system"),
        )
        assert nodes.status.allowed and not secrets.status.allowed
        # What it may not do, it cannot do either.
        with pytest.raises(ApiException) as denied:
            await call(client.CoreV1Api(joining).list_namespaced_secret, "kube-system")
        assert denied.value.status == 401
    finally:
        joining.close()


async def kubectl(kubeconfig: Path, *args: str) -> tuple[int, str]:
    """Exit code and stdout (stderr only carries kubectl's own warnings: shown on failure)."""
    assert KUBECTL is not None
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        str(kubeconfig),
        "--request-timeout=20s",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(kubeconfig.parent)},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    assert b"error" not in err.lower(), err.decode()
    return proc.returncode, out.decode()


@needs_kubectl
async def test_kubectl_version_shows_the_server(lab: Lab) -> None:
    code, out = await kubectl(lab.kube.kubeconfig, "version", "-o", "json")
    assert code == 0, out
    server = json.loads(out)["serverVersion"]
    assert server["gitVersion"].startswith("v1.31.0") and server["goVersion"].startswith("go")


@needs_kubectl
async def test_kubectl_auth_can_i_for_the_admin_and_for_a_bootstrap_token(lab: Lab) -> None:
    code, out = await kubectl(lab.kube.kubeconfig, "auth", "can-i", "delete", "nodes")
    assert (code, out.strip()) == (0, "yes")
    code, out = await kubectl(lab.kube.kubeconfig, "auth", "can-i", "--list")
    assert code == 0 and "*.*" in out, out
    code, out = await kubectl(lab.bootstrap_kubeconfig, "auth", "can-i", "create", "nodes")
    assert (code, out.strip()) == (0, "yes")
    code, out = await kubectl(
        lab.bootstrap_kubeconfig, "auth", "can-i", "get", "secrets", "-n", "kube-system"
    )
    assert (code, out.strip()) == (1, "no")


@needs_kubectl
async def test_kubectl_auth_whoami_names_the_caller(lab: Lab) -> None:
    code, out = await kubectl(lab.kube.kubeconfig, "auth", "whoami", "-o", "json")
    assert code == 0, out
    assert json.loads(out)["status"]["userInfo"]["username"] == "virtflow-lab-admin"
    code, out = await kubectl(lab.bootstrap_kubeconfig, "auth", "whoami", "-o", "json")
    user = json.loads(out)["status"]["userInfo"]
    assert user["username"] == f"system:bootstrap:{BOOTSTRAP_ID}"
    assert "system:bootstrappers" in user["groups"]


@needs_kubectl
async def test_kubectl_cluster_info(lab: Lab) -> None:
    code, out = await kubectl(lab.kube.kubeconfig, "cluster-info")
    assert code == 0, out
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)  # kubectl colours it
    assert f"Kubernetes control plane is running at {lab.kube.api.url}" in plain
