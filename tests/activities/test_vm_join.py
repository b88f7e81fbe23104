"""Joining from a site template: the bootstrap token, the rendered user data, the adopted Node,
and the lab API's side (bootstrap-token authentication), against the lab Kubernetes API."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import yaml
from lightkube import AsyncClient, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Node
from temporalio.exceptions import ApplicationError

from activities.bootstrap_tokens import (
    NAMESPACE,
    SECRET_TYPE,
    TokenTaken,
    create_token,
    delete_token,
    secret_name,
    token_id_for,
    token_secret,
)
from activities.vm_join import ClusterEndpoint, Joiner, cluster_endpoint, join_endpoint
from contracts.kubernetes import NodeAdoption
from contracts.vm import VmSpec
from lab.kube_testing import KubeLab, kube_lab
from placement.models import Taint
from runtime.vm_templates import SiteTemplates, VmTemplate

HOUR = timedelta(hours=1)

USER_DATA = (
    "#cloud-config\n"
    "node: {{ node_name }}\n"
    "labels: {{ labels | tojson }}\n"
    "taints: {{ taints | tojson }}\n"
    "server: {{ api_server }}\n"
    "ca: {{ ca_data }}\n"
    "token: {{ join_token }}\n"
)
TAINT = Taint(key="virtflow.io/spare", value="true", effect="NoSchedule")


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[KubeLab]:
    async with kube_lab(tmp_path) as running:
        yield running


@pytest.fixture
async def kube(lab: KubeLab) -> AsyncIterator[AsyncClient]:
    client = AsyncClient(config=KubeConfig.from_file(lab.kubeconfig))
    yield client
    await client.close()


def joiner(kube: AsyncClient, **templates: VmTemplate) -> Joiner:
    return Joiner.for_one(
        SiteTemplates(templates, {"gpu": "gpu"} if "gpu" in templates else None),
        kube,
        ClusterEndpoint(server="https://127.0.0.1:6443", ca_data="Q0E="),
    )


def spec(**fields: object) -> VmSpec:
    base: dict[str, object] = {
        "name": "spare-lab-r1",
        "host": "kvm-01",
        "cpu": 2,
        "memory_mb": 2048,
        "labels": {"virtflow.io/spare": "true"},
    }
    return VmSpec.model_validate({**base, **fields})


async def test_the_user_data_carries_a_fresh_bootstrap_token_and_the_template_values(
    lab: KubeLab, kube: AsyncClient
) -> None:
    template = VmTemplate(
        image="debian-12.qcow2",
        network="br-spares",
        user_data=USER_DATA,
        labels={"node-role.kubernetes.io/spare": ""},
        taints=[TAINT],
        api_server="https://10.0.2.2:6443",
    )
    prepared = await joiner(kube, default=template).prepare(spec())

    assert (prepared.image, prepared.network) == ("debian-12.qcow2", "br-spares")
    assert prepared.user_data is not None
    rendered = yaml.safe_load(prepared.user_data)
    assert rendered["node"] == "spare-lab-r1"
    assert rendered["labels"] == {
        "node-role.kubernetes.io/spare": "",
        "virtflow.io/spare": "true",
    }
    assert rendered["taints"] == [TAINT.model_dump()]
    assert (rendered["server"], rendered["ca"]) == ("https://10.0.2.2:6443", "Q0E=")
    # kubeadm's Secret: bootstrap-token-<id> in kube-system, the token is <id>.<secret>.
    (secret,) = lab.api.store.list("secrets", NAMESPACE)
    data = secret["stringData"]
    assert secret["type"] == SECRET_TYPE
    assert secret["metadata"]["name"] == f"bootstrap-token-{data['token-id']}"
    assert secret["metadata"]["labels"] == {"virtflow.io/spare-id": "spare-lab-r1"}
    assert rendered["token"] == f"{data['token-id']}.{data['token-secret']}"
    assert data["usage-bootstrap-authentication"] == "true"
    assert data["expiration"].endswith("Z")


async def test_a_request_value_wins_but_its_null_never_hides_the_site_value(
    kube: AsyncClient,
) -> None:
    site = VmTemplate(image="site.qcow2", network="site-net")
    assert (await joiner(kube, default=site).prepare(spec())).image == "site.qcow2"
    chosen = await joiner(kube, default=site).prepare(spec(network="mine"))
    assert (chosen.image, chosen.network) == ("site.qcow2", "mine")


async def test_a_request_picks_a_template_by_name_or_by_pool(kube: AsyncClient) -> None:
    site = joiner(
        kube,
        default=VmTemplate(image="small.qcow2"),
        gpu=VmTemplate(image="cuda.qcow2"),
    )
    assert (await site.prepare(spec(pool="gpu"))).image == "cuda.qcow2"
    assert (await site.prepare(spec(pool="general"))).image == "small.qcow2"
    assert (await site.prepare(spec(template="gpu"))).image == "cuda.qcow2"
    with pytest.raises(ApplicationError) as raised:
        await site.prepare(spec(template="huge"))
    assert raised.value.non_retryable
    assert "'huge' is not one of the site's (default, gpu)" in str(raised.value)


async def test_a_site_without_templates_leaves_the_spec_alone(kube: AsyncClient) -> None:
    assert await joiner(kube).prepare(spec()) == spec()


def test_a_broken_template_fails_at_start_up() -> None:
    with pytest.raises(ValueError, match=r"vm_templates\.bad\.user_data: line 1"):
        SiteTemplates({"bad": VmTemplate(user_data="{{ node_name ")})
    with pytest.raises(ValueError, match=r"pool_templates\.gpu: no vm_templates entry .cuda."):
        SiteTemplates({"default": VmTemplate()}, {"gpu": "cuda"})


async def test_a_variable_the_site_misspelt_fails_without_showing_the_token(
    kube: AsyncClient,
) -> None:
    broken = VmTemplate(user_data="token: {{ join_token }}\nname: {{ nodename }}\n")
    with pytest.raises(ApplicationError) as raised:
        await joiner(kube, default=broken).prepare(spec())
    assert raised.value.non_retryable
    assert "'nodename' is undefined" in str(raised.value)


async def test_adopting_a_ready_node_labels_and_taints_it_and_deletes_the_token(
    lab: KubeLab, kube: AsyncClient
) -> None:
    site = joiner(kube, default=VmTemplate(labels={"role": "spare"}, taints=[TAINT]))
    await create_token(kube, "spare-lab-r1", timedelta(minutes=5))
    await create_token(kube, "spare-lab-other", timedelta(minutes=5))
    other = {"key": "example.com/keep", "value": "", "effect": "NoSchedule"}
    await kube.create(Node(metadata=ObjectMeta(name="spare-lab-r1", labels={"a": "b"})))
    await kube.patch(Node, "spare-lab-r1", {"spec": {"taints": [other]}})

    adoption = NodeAdoption(labels={"virtflow.io/spare": "true"})
    await site.adopt("lab", "spare-lab-r1", adoption)
    await site.adopt("lab", "spare-lab-r1", adoption)  # a retry changes nothing

    node = lab.api.store.get("nodes", "", "spare-lab-r1")
    assert node is not None
    assert node["metadata"]["labels"] == {"a": "b", "role": "spare", "virtflow.io/spare": "true"}
    assert node["spec"]["taints"] == [other, TAINT.model_dump()]
    left = lab.api.store.list("secrets", NAMESPACE)
    assert [s["metadata"]["labels"]["virtflow.io/spare-id"] for s in left] == ["spare-lab-other"]
    await site.forget("lab", "spare-lab-other")
    assert lab.api.store.list("secrets", NAMESPACE) == []


async def test_a_spares_token_is_reached_by_a_name_derived_from_its_id(
    lab: KubeLab, kube: AsyncClient
) -> None:
    first = await create_token(kube, "spare-lab-r1", timedelta(minutes=5))
    token_id = token_id_for("spare-lab-r1")
    assert first.startswith(f"{token_id}.") and token_id != token_id_for("spare-lab-r2")
    # A retried create replaces the token: one Secret, holding the new secret.
    second = await create_token(kube, "spare-lab-r1", timedelta(minutes=5))
    (stored,) = lab.api.store.list("secrets", NAMESPACE)
    assert stored["metadata"]["name"] == secret_name(token_id)
    assert second != first and second.endswith(stored["stringData"]["token-secret"])
    assert await delete_token(kube, "spare-lab-r1")
    assert not await delete_token(kube, "spare-lab-r1")  # gone already: nothing to do
    assert lab.api.store.list("secrets", NAMESPACE) == []


async def test_a_token_name_another_spare_holds_is_neither_replaced_nor_deleted(
    lab: KubeLab, kube: AsyncClient
) -> None:
    # As if another spare's id hashed to the same token id.
    theirs = token_secret(token_id_for("spare-lab-r1"), "0123456789abcdef", "spare-lab-x", HOUR)
    await kube.create(theirs)
    with pytest.raises(TokenTaken, match="belongs to spare spare-lab-x"):
        await create_token(kube, "spare-lab-r1", HOUR)
    assert not await delete_token(kube, "spare-lab-r1")
    (stored,) = lab.api.store.list("secrets", NAMESPACE)
    assert stored["metadata"]["labels"]["virtflow.io/spare-id"] == "spare-lab-x"


async def test_the_join_is_told_the_advertised_api_server_and_its_ca(
    lab: KubeLab, tmp_path: Path
) -> None:
    ca = tmp_path / "advertised-ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nadvertised\n")
    own = cluster_endpoint(lab.kubeconfig)
    advertised = "https://cp.example:6443"
    assert join_endpoint(advertised, ca, lab.kubeconfig) == ClusterEndpoint(
        server=advertised, ca_data=base64.b64encode(ca.read_bytes()).decode()
    )
    # Each part falls back to the worker's own: the same API server and CA it talks to.
    assert join_endpoint(advertised, None, lab.kubeconfig) == ClusterEndpoint(
        server=advertised, ca_data=own.ca_data
    )
    assert join_endpoint(None, None, lab.kubeconfig) == own


# --- the lab API's side ------------------------------------------------------------------


async def register(lab: KubeLab, token: str, path: str = "/api/v1/nodes") -> int:
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "spare-lab-r1"}}
    verify = lab.api.certificates.client_context()
    async with httpx.AsyncClient(base_url=lab.api.url, timeout=10, verify=verify) as http:
        answer = await http.post(path, json=body, headers={"Authorization": f"Bearer {token}"})
    return answer.status_code


async def test_the_lab_api_lets_a_valid_bootstrap_token_register_its_node(
    lab: KubeLab, kube: AsyncClient
) -> None:
    token = await create_token(kube, "spare-lab-r1", timedelta(minutes=5))
    assert await register(lab, token) == 201
    # Nodes only: a bootstrap token is no key to the rest of the cluster.
    assert await register(lab, token, "/api/v1/namespaces/default/pods") == 401


@pytest.mark.parametrize("case", ["unknown", "wrong secret", "expired", "not for auth"])
async def test_the_lab_api_answers_401_to_a_token_it_must_not_accept(
    lab: KubeLab, kube: AsyncClient, case: str
) -> None:
    token_id, secret = "abcdef", "0123456789abcdef"
    ttl = timedelta(minutes=-1 if case == "expired" else 5)
    made = token_secret(token_id, secret, "spare-lab-r1", ttl)
    if case == "not for auth":
        assert made.stringData is not None
        made.stringData["usage-bootstrap-authentication"] = "false"
    if case != "unknown":
        await kube.create(made)
    presented = f"{token_id}.{'f' * 16}" if case == "wrong secret" else f"{token_id}.{secret}"
    assert await register(lab, presented) == 401


async def test_the_lab_api_reads_a_token_stored_as_base64_data(
    lab: KubeLab, kube: AsyncClient
) -> None:
    made = token_secret("ghijkl", "0123456789abcdef", "spare-lab-r1", timedelta(minutes=5))
    assert made.stringData is not None
    made.data = {k: base64.b64encode(v.encode()).decode() for k, v in made.stringData.items()}
    made.stringData = None
    await kube.create(made)
    assert await register(lab, "ghijkl.0123456789abcdef") == 201
