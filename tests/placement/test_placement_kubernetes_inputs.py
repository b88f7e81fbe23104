"""Kubernetes-shaped inputs take what the official Kubernetes client writes, and refuse labels
that no Node could carry, naming the field."""

from __future__ import annotations

import pytest
from kubernetes.client import (
    V1NodeSelectorRequirement,
    V1PodSpec,
    V1Toleration,
)
from pydantic import ValidationError

from placement.labels import check_label_key, check_label_value
from placement.models import MatchExpression, NodeAffinity, Taint, Toleration, VmRequest


def _request(**fields: object) -> VmRequest:
    return VmRequest.model_validate({"name": "vm", "cpu": 1, "memory_mb": 1, **fields})


def test_a_clients_toleration_with_explicit_nulls_is_accepted() -> None:
    written = V1Toleration(key="example.com/gpu", value="yes", effect="NoSchedule").to_dict()
    assert written["operator"] is None and written["toleration_seconds"] is None
    toleration = Toleration.model_validate(written)
    assert toleration == Toleration(key="example.com/gpu", value="yes", effect="NoSchedule")
    assert toleration.tolerates(Taint(key="example.com/gpu", value="yes", effect="NoSchedule"))


def test_a_clients_tolerate_everything_toleration_tolerates_every_taint() -> None:
    toleration = Toleration.model_validate(V1Toleration(operator="Exists").to_dict())
    assert toleration.tolerates(Taint(key="anything", value="x", effect="NoExecute"))


def test_a_clients_match_expression_with_null_values_is_accepted() -> None:
    written = V1NodeSelectorRequirement(key="example.com/zone", operator="Exists").to_dict()
    assert written["values"] is None
    assert MatchExpression.model_validate(written).matches({"example.com/zone": "a"})


def test_null_affinity_terms_are_no_terms() -> None:
    assert NodeAffinity.model_validate({"required": None, "preferred": None}) == NodeAffinity()


def test_a_pod_specs_null_selector_and_tolerations_are_empty() -> None:
    spec = V1PodSpec(containers=[]).to_dict()
    assert spec["node_selector"] is None and spec["tolerations"] is None
    request = _request(node_selector=spec["node_selector"], tolerations=spec["tolerations"])
    assert (request.node_selector, request.tolerations) == ({}, [])


@pytest.mark.parametrize(
    "key",
    ["zone", "topology.kubernetes.io/zone", "a", "A_b.c-9", "x" * 63, f"{'d' * 253}/n"],
)
def test_kubernetes_label_keys_are_accepted(key: str) -> None:
    assert check_label_key(key) == key


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "the name must not be empty"),
        ("zone/", "the name must not be empty"),
        ("/zone", "the prefix before '/' must not be empty"),
        ("-zone", "the name must be alphanumeric"),
        ("zone_", "the name must be alphanumeric"),
        ("has space", "the name must be alphanumeric"),
        ("x" * 64, "at most 63"),
        ("Example.com/zone", "the prefix must be a DNS subdomain"),
        ("a/b/c", "the prefix must be a DNS subdomain"),
        (f"{'d' * 254}/n", "the prefix must be a DNS subdomain"),
    ],
)
def test_label_keys_that_kubernetes_refuses_are_refused(key: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        check_label_key(key)


@pytest.mark.parametrize("value", ["", "a", "v1.2_3-x", "x" * 63])
def test_kubernetes_label_values_are_accepted(value: str) -> None:
    assert check_label_value(value) == value


@pytest.mark.parametrize("value", ["-a", "a-", "a b", "a/b", "x" * 64, "ü"])
def test_label_values_that_kubernetes_refuses_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="must be empty or alphanumeric"):
        check_label_value(value)


@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"node_selector": {"bad key": "x"}}, ("node_selector", "bad key", "[key]")),
        ({"node_selector": {"zone": "a b"}}, ("node_selector", "zone")),
        ({"tolerations": [{"key": "-k", "operator": "Exists"}]}, ("tolerations", 0, "key")),
        ({"tolerations": [{"key": "k", "value": "a/b"}]}, ("tolerations", 0, "value")),
    ],
)
def test_a_bad_label_is_refused_naming_where_it_is(
    fields: dict[str, object], loc: tuple[object, ...]
) -> None:
    with pytest.raises(ValidationError) as caught:
        _request(**fields)
    [error] = caught.value.errors()
    assert error["loc"] == loc
