"""POST /spare/prepare: validation before anything starts, idempotency on request_id."""

from __future__ import annotations

import httpx
import pytest
from kubernetes.client import V1NodeSelectorRequirement, V1PodSpec, V1Toleration
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from contracts.common import CLUSTER
from contracts.spare import MEMO_REQUEST_HASH, PREPARE_SPARE
from tests.api.api_helpers import spare_body


async def assert_not_started(client: Client, workflow_id: str) -> None:
    with pytest.raises(RPCError) as err:
        await client.get_workflow_handle(workflow_id).describe()
    assert err.value.status == RPCStatusCode.NOT_FOUND


async def test_an_invalid_body_is_422_naming_the_field(api: httpx.AsyncClient) -> None:
    answer = await api.post("/spare/prepare", json=spare_body(cpu=0))
    assert answer.status_code == 422
    problem = answer.json()
    assert answer.headers["content-type"] == "application/problem+json"
    assert (problem["code"], problem["status"], problem["type"]) == (
        "invalid_request",
        422,
        "urn:virtflow:problem:invalid_request",
    )
    [error] = problem["errors"]
    assert (error["loc"], error["field"]) == (["body", "cpu"], "cpu")
    assert "greater than 0" in error["message"] and "greater than 0" in problem["detail"]


async def test_an_unknown_field_is_refused(api: httpx.AsyncClient) -> None:
    answer = await api.post("/spare/prepare", json=spare_body(url="http://evil.example"))
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["loc"] == ["body", "url"]


@pytest.mark.parametrize(
    ("field", "value", "code", "reason"),
    [
        (
            "inventory",
            "nowhere",
            "unknown_inventory",
            "unknown inventory 'nowhere' (configured: default)",
        ),
        (
            "receivers",
            ["upgradectrl", "stranger"],
            "unknown_receiver",
            "unknown receiver 'stranger'",
        ),
        (
            "template",
            "huge",
            "unknown_template",
            "unknown VM template 'huge' (configured: none)",
        ),
    ],
)
async def test_unknown_names_are_422_before_any_workflow_starts(
    api: httpx.AsyncClient, client: Client, field: str, value: object, code: str, reason: str
) -> None:
    body = spare_body(**{field: value})
    answer = await api.post("/spare/prepare", json=body)
    assert answer.status_code == 422
    assert answer.json()["code"] == code
    [error] = answer.json()["errors"]
    assert error["loc"] == ["body", field]
    assert error["message"].startswith(reason)
    await assert_not_started(client, f"spare-lab-{body['request_id']}")


async def test_the_same_body_twice_is_the_same_spare(
    api: httpx.AsyncClient, client: Client
) -> None:
    body = spare_body(pool="general", receivers=["upgradectrl"])
    first = await api.post("/spare/prepare", json=body)
    again = await api.post("/spare/prepare", json=body)
    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    workflow_id = f"spare-lab-{body['request_id']}"
    assert first.json()["spare_id"] == first.json()["workflow_id"] == workflow_id
    assert first.json()["ui_url"].endswith(f"/namespaces/default/workflows/{workflow_id}")

    handle = client.get_workflow_handle(workflow_id)
    description = await handle.describe()
    assert description.workflow_type == PREPARE_SPARE
    assert description.typed_search_attributes.get(CLUSTER) == "lab"
    assert isinstance(await description.memo_value(MEMO_REQUEST_HASH), str)
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    assert len(runs) == 1
    await handle.terminate("test over")


async def test_a_different_body_reusing_the_request_id_is_409(
    api: httpx.AsyncClient, client: Client
) -> None:
    body = spare_body()
    assert (await api.post("/spare/prepare", json=body)).status_code == 202
    answer = await api.post("/spare/prepare", json={**body, "cpu": 4})
    assert answer.status_code == 409
    assert answer.json()["code"] == "request_conflict"
    assert "already used by a different request" in answer.json()["detail"]
    # Spelling out a default is the same request, not a different one.
    same = await api.post("/spare/prepare", json={**body, "gpu": 0})
    assert same.status_code == 202
    await client.get_workflow_handle(f"spare-lab-{body['request_id']}").terminate("test over")


async def test_a_closed_spare_is_not_started_again(api: httpx.AsyncClient, client: Client) -> None:
    body = spare_body()
    assert (await api.post("/spare/prepare", json=body)).status_code == 202
    handle = client.get_workflow_handle(f"spare-lab-{body['request_id']}")
    await handle.terminate("test over")
    answer = await api.post("/spare/prepare", json=body)
    assert answer.status_code == 202
    description = await handle.describe()
    assert description.status == WorkflowExecutionStatus.TERMINATED
    assert (await api.post("/spare/prepare", json={**body, "cpu": 3})).status_code == 409


async def test_a_request_written_by_the_kubernetes_client_is_accepted(
    api: httpx.AsyncClient, client: Client
) -> None:
    # An upgrade controller in Python fills the Kubernetes fields from the official client's
    # objects: to_dict() writes null for every unset field.
    toleration = V1Toleration(key="example.com/upgrade", operator="Exists").to_dict()
    expression = V1NodeSelectorRequirement(key="example.com/zone", operator="Exists").to_dict()
    body = spare_body(
        tolerations=[toleration],
        node_selector=V1PodSpec(containers=[]).to_dict()["node_selector"],
        node_affinity={"required": [[expression]], "preferred": None},
    )
    answer = await api.post("/spare/prepare", json=body)
    assert answer.status_code == 202, answer.text
    await client.get_workflow_handle(answer.json()["spare_id"]).terminate("test over")


@pytest.mark.parametrize(
    ("fields", "loc", "field"),
    [
        (
            {"node_selector": {"example.com/": "a"}},
            ["body", "node_selector", "example.com/", "[key]"],
            "node_selector.example.com/",
        ),
        (
            {"node_selector": {"zone": "a b"}},
            ["body", "node_selector", "zone"],
            "node_selector.zone",
        ),
        (
            {"tolerations": [{"key": "k", "value": "-x"}]},
            ["body", "tolerations", 0, "value"],
            "tolerations.0.value",
        ),
    ],
)
async def test_a_label_kubernetes_would_refuse_is_422_naming_it(
    api: httpx.AsyncClient,
    client: Client,
    fields: dict[str, object],
    loc: list[object],
    field: str,
) -> None:
    body = spare_body(**fields)
    answer = await api.post("/spare/prepare", json=body)
    assert answer.status_code == 422
    [error] = answer.json()["errors"]
    assert error["loc"] == loc and "label" in error["message"]
    # The field reads as the operator wrote it; a bad key is named by its own path.
    assert error["field"] == field
    await assert_not_started(client, f"spare-lab-{body['request_id']}")


@pytest.mark.parametrize(
    ("fields", "code", "loc", "reason"),
    [
        (
            {"pool": "nowhere"},
            "unknown_pool",
            ["body", "pool"],
            "no host of inventory 'default' is in pool 'nowhere' (pools: general, gpu)",
        ),
        (
            {"node_selector": {"topology.kubernetes.io/zone": "lab-z"}},
            "no_matching_host",
            ["body", "node_selector", "topology.kubernetes.io/zone"],
            "no host of inventory 'default' has label topology.kubernetes.io/zone=lab-z "
            "(values there: lab-a, lab-b)",
        ),
        (
            {"pool": "gpu", "node_selector": {"virtflow.io/cpu": "skylake"}},
            "no_matching_host",
            ["body", "node_selector", "virtflow.io/cpu"],
            "no host in pool 'gpu' has label virtflow.io/cpu=skylake",
        ),
        (
            {
                "node_selector": {
                    "topology.kubernetes.io/zone": "lab-a",
                    "virtflow.io/cpu": "skylake",
                }
            },
            "no_matching_host",
            ["body", "node_selector"],
            "no host of inventory 'default' has all of the labels",
        ),
        (
            # The qemu-scheduler's host-name pattern, as an unmatched selector.
            {"annotations": {"node.qemu-scheduler/regex": "^pve[0-9]"}},
            "no_matching_host",
            ["body", "annotations", "node.qemu-scheduler/regex"],
            "no host of inventory 'default' has a name matching '^pve[0-9]'",
        ),
    ],
)
async def test_a_pool_or_selector_no_host_has_is_422_before_anything_starts(
    api: httpx.AsyncClient,
    client: Client,
    fields: dict[str, object],
    code: str,
    loc: list[str],
    reason: str,
) -> None:
    body = spare_body(**fields)
    answer = await api.post("/v1/spares", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == code
    [error] = answer.json()["errors"]
    assert error["loc"] == loc and error["message"].startswith(reason)
    await assert_not_started(client, f"spare-lab-{body['request_id']}")
    many = await api.post("/v1/spares", json={**body, "count": 2})
    assert (many.status_code, many.json()["code"]) == (422, code)
