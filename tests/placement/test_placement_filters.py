"""Filters 1-8 and 15 and their keywords, each case run vectorised and host by host."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, rejection, request

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], str | None]] = [
    # (sentence, host fields, request fields, policy, expected keyword)
    ("a cordoned host is unschedulable", {"unschedulable": True}, {}, {}, "unschedulable"),
    (
        "a cordoned host fails before any other check",
        {"unschedulable": True, "pool": "x"},
        {"pool": "y", "cpu": 999},
        {},
        "unschedulable",
    ),
    # kube-scheduler's NodeUnschedulable: tolerating the cordon taint lets a request on.
    (
        "tolerating the cordon places on a cordoned host",
        {"unschedulable": True},
        {
            "tolerations": [
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoSchedule",
                }
            ]
        },
        {},
        None,
    ),
    (
        "a tolerate-everything toleration tolerates the cordon",
        {"unschedulable": True},
        {"tolerations": [{"operator": "Exists"}]},
        {},
        None,
    ),
    (
        "tolerating the cordon with NoExecute only does not",
        {"unschedulable": True},
        {
            "tolerations": [
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                }
            ]
        },
        {},
        "unschedulable",
    ),
    (
        "tolerating the cordon leaves the other filters",
        {"unschedulable": True, "pool": "x"},
        {"pool": "y", "tolerations": [{"key": "node.kubernetes.io/unschedulable"}]},
        {},
        "pool_mismatch",
    ),
    ("another node_name is a mismatch", {}, {"node_name": "h2"}, {}, "node_name_mismatch"),
    ("the node_name itself passes", {}, {"node_name": "h1"}, {}, None),
    (
        "node_name is checked before the regex",
        {},
        {"node_name": "h2", "node_name_regex": "^x"},
        {},
        "node_name_mismatch",
    ),
    (
        "a regex that does not match the name is a mismatch",
        {},
        {"node_name_regex": "^gpu-"},
        {},
        "node_name_regex_mismatch",
    ),
    (
        "an unanchored regex matches inside the name",
        {"name": "rack2-gpu-07"},
        {"node_name_regex": "gpu"},
        {},
        None,
    ),
    (
        "an anchored regex must match from the start",
        {"name": "rack2-gpu-07"},
        {"node_name_regex": "^gpu"},
        {},
        "node_name_regex_mismatch",
    ),
    (
        "a pool request on another pool is a mismatch",
        {"pool": "batch"},
        {"pool": "web"},
        {},
        "pool_mismatch",
    ),
    (
        "a pool request on a host without pool is a mismatch",
        {},
        {"pool": "web"},
        {},
        "pool_mismatch",
    ),
    ("a request without pool goes to any pool", {"pool": "batch"}, {}, {}, None),
    ("the same pool passes", {"pool": "web"}, {"pool": "web"}, {}, None),
    (
        "a dedicated request needs a dedicated host",
        {},
        {"dedicated": True},
        {},
        "dedicated_required",
    ),
    (
        "a shared request stays off a dedicated host",
        {"dedicated": True},
        {},
        {},
        "dedicated_host_reserved",
    ),
    (
        "the policy may allow shared VMs on dedicated hosts",
        {"dedicated": True},
        {},
        {"allow_shared_on_dedicated": True},
        None,
    ),
    (
        "a dedicated host with a VM is occupied",
        {"dedicated": True, "vm_count": 1},
        {"dedicated": True},
        {},
        "dedicated_host_occupied",
    ),
    (
        "an empty dedicated host takes a dedicated request",
        {"dedicated": True},
        {"dedicated": True},
        {},
        None,
    ),
    ("a host at its quota is full", {"vm_quota": 3, "vm_count": 3}, {}, {}, "vm_quota_exceeded"),
    ("a host over its quota is full", {"vm_quota": 3, "vm_count": 5}, {}, {}, "vm_quota_exceeded"),
    ("a zero quota takes nothing", {"vm_quota": 0}, {}, {}, "vm_quota_exceeded"),
    ("one below the quota passes", {"vm_quota": 3, "vm_count": 2}, {}, {}, None),
    ("no quota means unlimited", {"vm_count": 500}, {}, {}, None),
]


@pytest.mark.parametrize(
    ("host_fields", "request_fields", "policy", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_filter(
    host_fields: dict[str, Any], request_fields: dict[str, Any], policy: dict[str, Any],
    expected: str | None,
) -> None:  # fmt: skip
    assert rejection(host(**host_fields), request(**request_fields), policy) == expected


ANTI = [
    # (sentence, scope, racks of (h1, h2), member on, expected for h1)
    (
        "host scope rejects the host holding a member",
        "host",
        ("r1", "r1"),
        "h1",
        "anti_affinity_conflict",
    ),
    ("host scope ignores a member elsewhere in the rack", "host", ("r1", "r1"), "h2", None),
    (
        "rack scope rejects every host of the member's rack",
        "rack",
        ("r1", "r1"),
        "h2",
        "anti_affinity_conflict",
    ),
    ("rack scope passes another rack", "rack", ("r1", "r2"), "h2", None),
    (
        "rack scope on a host without rack falls back to host scope",
        "rack",
        (None, None),
        "h2",
        None,
    ),
    (
        "rack scope still rejects the member's own rackless host",
        "rack",
        (None, None),
        "h1",
        "anti_affinity_conflict",
    ),
    ("a rackless member does not block a racked host", "rack", ("r1", None), "h2", None),
]


@pytest.mark.parametrize(
    ("scope", "racks", "member_on", "expected"),
    [case[1:] for case in ANTI],
    ids=[case[0] for case in ANTI],
)
def test_anti_affinity(
    scope: str, racks: tuple[str | None, str | None], member_on: str, expected: str | None
) -> None:
    hosts = [host("h1", rack=racks[0]), host("h2", rack=racks[1])]
    req = request(anti_affinity_group="db", anti_affinity_scope=scope)
    existing = [{"name": "db-0", "host": member_on, "group": "db"}]
    decision = decide(placement_input(hosts, req, existing_vms=existing))
    assert decision.rejected.get("h1") == expected


def test_anti_affinity_ignores_other_groups_and_requests_without_group() -> None:
    existing = [{"name": "web-0", "host": "h1", "group": "web"}]
    assert rejection(host(), request(anti_affinity_group="db"), existing_vms=existing) is None
    assert rejection(host(), request(), existing_vms=existing) is None


def test_anti_affinity_member_on_unknown_host_blocks_nothing() -> None:
    existing = [{"name": "db-0", "host": "gone", "group": "db"}]
    req = request(anti_affinity_group="db", anti_affinity_scope="rack")
    assert rejection(host(rack="r1"), req, existing_vms=existing) is None
