"""`near`: filter 17, the Near score and the near_unknown error, vectorised and host by host."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, request
from pydantic import ValidationError

ZONE = "topology.kubernetes.io/zone"
REPLACED = [{"name": "node-3", "host": "old", "group": None}]


def site() -> list[Any]:
    return [
        host("old", rack="r1", labels={ZONE: "a"}, unschedulable=True),
        host("a-big", rack="r2", labels={ZONE: "a"}, cpu_allocated=20),
        host("a-small", rack="r1", labels={ZONE: "a"}, cpu_allocated=28),
        host("b-empty", rack="r3", labels={ZONE: "b"}),
        host("nolabel", rack="r4"),
    ]


def near(key: str = ZONE, required: bool = True, vm: str = "node-3") -> dict[str, Any]:
    return {"vm": vm, "topology_key": key, "required": required}


def test_required_near_keeps_the_vm_in_the_replaced_nodes_zone() -> None:
    decision = decide(placement_input(site(), request(near=near()), existing_vms=REPLACED))
    assert decision.host == "a-big"
    assert decision.rejected == {
        "old": "unschedulable",
        "b-empty": "not_near",
        "nolabel": "not_near",
    }


def test_required_near_by_rack() -> None:
    decision = decide(placement_input(site(), request(near=near("rack")), existing_vms=REPLACED))
    assert decision.host == "a-small"
    assert decision.rejected["a-big"] == "not_near"


def test_near_by_host_means_the_same_host() -> None:
    hosts = [host("old", labels={}), host("other")]
    decision = decide(placement_input(hosts, request(near=near("host")), existing_vms=REPLACED))
    assert decision.host == "old"
    assert decision.rejected == {"other": "not_near"}


def test_nothing_near_fits_is_no_host_fits() -> None:
    req = request(cpu=16, near=near())
    decision = decide(placement_input(site(), req, existing_vms=REPLACED))
    assert decision.host is None
    assert decision.error == "no_host_fits"
    assert decision.reason_counts == {"insufficient_cpu": 2, "not_near": 2, "unschedulable": 1}


def test_preferred_near_is_a_score_of_100_in_the_domain() -> None:
    req = request(near=near(required=False))
    decision = decide(placement_input(site(), req, existing_vms=REPLACED))
    assert {h: s["Near"] for h, s in decision.scores.items()} == {
        "a-big": 100,
        "a-small": 100,
        "b-empty": 0,
        "nolabel": 0,
    }
    s = decision.scores["a-big"]
    assert s["total"] == s["NodeResourcesFit"] + s["NodeResourcesBalancedAllocation"] + 2 * 100


def test_preferred_near_yields_to_a_much_better_host() -> None:
    req = request(near=near(required=False))
    policy = {"plugin_weights": {"Near": 0}}
    without = decide(placement_input(site(), req, policy, existing_vms=REPLACED))
    assert "Near" not in without.scores["a-big"]
    assert without.host == "b-empty"


def test_the_score_is_left_out_when_near_is_required_or_absent() -> None:
    decision = decide(placement_input(site(), request(near=near()), existing_vms=REPLACED))
    assert "Near" not in decision.plugins
    assert "Near" not in decide(placement_input(site(), request())).plugins


@pytest.mark.parametrize(
    ("existing", "key", "detail"),
    [
        ([], ZONE, "vm 'node-3' is not among the existing VMs"),
        ([{"name": "node-3", "host": "gone"}], ZONE, "host 'gone' of vm 'node-3' is not in the "),
        (
            [{"name": "node-3", "host": "nolabel"}],
            ZONE,
            f"host 'nolabel' of vm 'node-3' has no {ZONE}",
        ),
        ([{"name": "node-3", "host": "old"}], "row", "host 'old' of vm 'node-3' has no row"),
    ],
    ids=["an unknown vm", "a host not in the inventory", "a host without the label", "no row"],
)
def test_an_unknown_near_is_an_error_that_rejects_no_host(
    existing: list[dict[str, Any]], key: str, detail: str
) -> None:
    for required in (True, False):
        req = request(near=near(key, required))
        decision = decide(placement_input(site(), req, existing_vms=existing))
        assert decision.host is None
        assert decision.error == "near_unknown"
        assert decision.rejected == {} and decision.scores == {} and decision.reason_counts == {}
        assert decision.summary.startswith(f"near_unknown: {detail}")


def test_the_decision_records_the_wanted_and_the_actual_domain() -> None:
    req = request(near=near(required=False), anti_affinity_group="g", anti_affinity_scope="rack")
    decision = decide(placement_input(site(), req, existing_vms=REPLACED))
    assert decision.to_json()["topology"] == {
        "domains": {"rack": "r2", ZONE: "a"},
        "near": {
            "vm": "node-3",
            "node": None,
            "topology_key": ZONE,
            "required": False,
            "host": "old",
            "domain": "a",
        },
    }
    assert decision.topology is not None and decision.topology.near_met
    assert decision.topology.describe() == (
        f"rack=r2, {ZONE}=a; near vm node-3 wanted {ZONE}=a (met)"
    )


def test_a_node_names_the_vm_it_runs_as() -> None:
    existing = [
        {"name": "vm-17", "host": "b-empty", "node": "worker-7"},
        {"name": "worker-7", "host": "a-big"},
    ]
    req = request(near={"node": "worker-7", "topology_key": ZONE})
    decision = decide(placement_input(site(), req, existing_vms=existing))
    # vm-17 runs as Node worker-7; the VM merely named worker-7 is not that Node.
    assert decision.host == "b-empty"
    assert decision.topology is not None and decision.topology.near is not None
    assert (decision.topology.near.vm, decision.topology.near.host) == ("vm-17", "b-empty")


def test_a_node_is_a_vm_of_the_same_name_by_default() -> None:
    req = request(near={"node": "node-3", "topology_key": ZONE})
    decision = decide(placement_input(site(), req, existing_vms=REPLACED))
    assert decision.host == "a-big"


def test_an_unknown_node_is_near_unknown() -> None:
    req = request(near={"node": "worker-9", "topology_key": ZONE, "required": False})
    decision = decide(placement_input(site(), req, existing_vms=REPLACED))
    assert decision.summary == "near_unknown: node 'worker-9' is not among the existing VMs"
    assert decision.topology is not None and decision.topology.near_met is False


@pytest.mark.parametrize("target", [{}, {"vm": "a", "node": "b"}], ids=["neither", "both"])
def test_near_names_a_vm_or_a_node(target: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        request(near={**target, "topology_key": ZONE})


def test_a_request_without_topology_has_no_topology_record() -> None:
    assert "topology" not in decide(placement_input(site(), request())).to_json()


def test_disabling_near_ignores_it() -> None:
    policy = {"disabled_plugins": ["Near"]}
    decision = decide(placement_input(site(), request(near=near()), policy, existing_vms=[]))
    assert decision.error is None
    assert decision.host == "b-empty"
