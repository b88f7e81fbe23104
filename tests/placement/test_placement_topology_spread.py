"""Filter 16 and the PodTopologySpread score, each case run vectorised and host by host."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, request
from pydantic import ValidationError

from placement.engine import Engine
from placement.models import ExistingVm, Policy, VmRequest
from placement.table import HostTable

ZONE = "topology.kubernetes.io/zone"


def zoned(name: str, zone: str | None, **fields: Any) -> Any:
    labels = {ZONE: zone} if zone is not None else {}
    return host(name, labels={**labels, **fields.pop("labels", {})}, **fields)


def spread(
    key: str = ZONE, skew: int = 1, when: str = "DoNotSchedule", group: str | None = "g"
) -> dict[str, Any]:
    """A constraint over group g (the request has no anti-affinity group unless a test says)."""
    return {"topology_key": key, "max_skew": skew, "when_unsatisfiable": when, "group": group}


def vms(*hosts: str, group: str = "g") -> list[dict[str, Any]]:
    return [{"name": f"vm-{i}", "host": h, "group": group} for i, h in enumerate(hosts)]


def hard(**fields: Any) -> VmRequest:
    return request(topology_spread=[spread(**fields)])


def test_a_domain_at_the_skew_limit_is_a_violation() -> None:
    hosts = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")]
    decision = decide(placement_input(hosts, hard(), existing_vms=vms("a1")))
    # count a=1, b=0, min 0: a second VM in a makes the skew 2.
    assert decision.rejected == {
        "a1": "topology_spread_violation",
        "a2": "topology_spread_violation",
    }
    assert decision.host == "b1"


def test_a_larger_max_skew_allows_the_fuller_domain() -> None:
    hosts = [zoned("a1", "a"), zoned("b1", "b", cpu_allocated=30)]
    decision = decide(placement_input(hosts, hard(skew=2), existing_vms=vms("a1")))
    assert decision.rejected == {"b1": "insufficient_cpu"}
    assert decision.host == "a1"


def test_a_host_that_lacks_the_key_violates() -> None:
    decision = decide(placement_input([zoned("a1", "a"), zoned("none", None)], hard()))
    assert decision.rejected == {"none": "topology_spread_violation"}


def test_the_emptiest_domain_counts_even_when_its_hosts_are_full() -> None:
    # b's only host is full, yet b is an eligible domain with count 0: min stays 0.
    hosts = [zoned("a1", "a"), zoned("b1", "b", cpu_allocated=32)]
    decision = decide(placement_input(hosts, hard(), existing_vms=vms("a1")))
    assert decision.rejected == {"a1": "topology_spread_violation", "b1": "insufficient_cpu"}
    assert decision.host is None


def test_cordoned_and_tainted_hosts_are_still_eligible_domains() -> None:
    hosts = [
        zoned("a1", "a"),
        zoned("b1", "b", unschedulable=True),
        zoned("c1", "c", taints=[{"key": "k", "effect": "NoSchedule"}]),
    ]
    decision = decide(placement_input(hosts, hard(), existing_vms=vms("a1")))
    assert decision.rejected["a1"] == "topology_spread_violation"


def test_domains_of_hosts_outside_the_pool_do_not_count() -> None:
    # b is only in another pool: not eligible, so min is a's count and a stays open.
    hosts = [zoned("a1", "a", pool="web"), zoned("b1", "b", pool="db")]
    req = request(pool="web", topology_spread=[spread()])
    decision = decide(placement_input(hosts, req, existing_vms=vms("a1", "b1")))
    assert decision.host == "a1"


def test_vms_on_hosts_outside_the_node_selector_are_not_counted() -> None:
    hosts = [
        zoned("a1", "a", labels={"disk": "ssd"}),
        zoned("a2", "a"),
        zoned("b1", "b", labels={"disk": "ssd"}),
    ]
    req = request(node_selector={"disk": "ssd"}, topology_spread=[spread()])
    # Two VMs on a2 (no ssd) are not counted: a=0, b=1, so only a is open.
    decision = decide(placement_input(hosts, req, existing_vms=vms("a2", "a2", "b1")))
    assert decision.rejected == {
        "a2": "node_selector_mismatch",
        "b1": "topology_spread_violation",
    }
    assert decision.host == "a1"


def test_vms_of_other_groups_and_unknown_hosts_are_not_counted() -> None:
    hosts = [zoned("a1", "a"), zoned("b1", "b")]
    existing = [*vms("a1", group="other"), *vms("gone-host")]
    decision = decide(placement_input(hosts, hard(), existing_vms=existing))
    assert decision.rejected == {}


def test_the_constraint_group_overrides_the_anti_affinity_group() -> None:
    hosts = [zoned("a1", "a"), zoned("b1", "b")]
    req = request(anti_affinity_group="other", topology_spread=[spread(group="g")])
    decision = decide(placement_input(hosts, req, existing_vms=vms("a1")))
    assert decision.rejected == {"a1": "topology_spread_violation"}


def test_every_hard_constraint_must_hold() -> None:
    hosts = [
        zoned("a1", "a", rack="r1"),
        zoned("a2", "a", rack="r2"),
        zoned("b1", "b", rack="r1"),
        zoned("b2", "b", rack="r2"),
    ]
    req = request(topology_spread=[spread(), spread(key="rack")])
    decision = decide(placement_input(hosts, req, existing_vms=vms("a1")))
    assert decision.host == "b2"
    assert set(decision.rejected) == {"a1", "a2", "b1"}


def test_host_as_the_key_spreads_over_hosts() -> None:
    hosts = [host("h1"), host("h2")]
    req = hard(key="host")
    decision = decide(placement_input(hosts, req, existing_vms=vms("h1")))
    assert decision.rejected == {"h1": "topology_spread_violation"}


def test_schedule_anyway_scores_emptier_domains_higher() -> None:
    hosts = [zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c"), zoned("none", None)]
    req = request(topology_spread=[spread(when="ScheduleAnyway")])
    decision = decide(placement_input(hosts, req, existing_vms=vms("a1", "a1", "b1")))
    spread_scores = {h: s["PodTopologySpread"] for h, s in decision.scores.items()}
    # raw a=2, b=1, c=0: 100 - 100 * raw // 2; lacking the key scores 0.
    assert spread_scores == {"a1": 0, "b1": 50, "c1": 100, "none": 0}
    assert decision.rejected == {}
    assert decision.host == "c1"


def test_schedule_anyway_with_no_vms_gives_everyone_100() -> None:
    req = request(topology_spread=[spread(when="ScheduleAnyway")])
    decision = decide(placement_input([zoned("a1", "a"), zoned("b1", "b")], req))
    assert {s["PodTopologySpread"] for s in decision.scores.values()} == {100}


def test_the_score_is_left_out_without_a_schedule_anyway_constraint() -> None:
    decision = decide(placement_input([zoned("a1", "a"), zoned("b1", "b")], hard()))
    assert "PodTopologySpread" not in decision.scores["a1"]
    decision = decide(placement_input([zoned("a1", "a")], request()))
    assert decision.plugins == ("NodeResourcesFit", "NodeResourcesBalancedAllocation")


def test_the_score_weight_is_2_by_default_and_can_be_changed() -> None:
    hosts = [zoned("a1", "a"), zoned("b1", "b")]
    req = request(topology_spread=[spread(when="ScheduleAnyway")])
    existing = vms("a1")
    for weight in (2, 7):
        policy = {"plugin_weights": {"PodTopologySpread": weight}} if weight != 2 else None
        decision = decide(placement_input(hosts, req, policy, existing_vms=existing))
        s = decision.scores["b1"]
        others = s["NodeResourcesFit"] + s["NodeResourcesBalancedAllocation"]
        assert s["total"] == others + weight * s["PodTopologySpread"]


def test_disabling_the_plugin_ignores_the_constraints() -> None:
    hosts = [zoned("a1", "a"), zoned("b1", "b", cpu_allocated=8)]
    policy = {"disabled_plugins": ["PodTopologySpread"]}
    decision = decide(placement_input(hosts, hard(), policy, existing_vms=vms("a1")))
    assert decision.host == "a1"


@pytest.mark.parametrize(
    ("constraint", "message"),
    [
        (
            {"topology_key": "zone", "max_skew": 0, "when_unsatisfiable": "DoNotSchedule"},
            "max_skew",
        ),
        ({"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "Never"}, "when_unsatis"),
        (
            {"topology_key": "", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"},
            "topology_key",
        ),
        (
            {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"},
            "no group",
        ),
    ],
    ids=["a zero skew", "an unknown mode", "an empty key", "no group at all"],
)
def test_bad_constraints_are_refused(constraint: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        VmRequest.model_validate(
            {"name": "x", "cpu": 1, "memory_mb": 1, "topology_spread": [constraint]}
        )


def test_a_constraint_without_group_counts_the_anti_affinity_group() -> None:
    # Scope rack: a1's rack r1 is taken by the group, and zone a is full by the spread.
    hosts = [zoned("a1", "a", rack="r1"), zoned("a2", "a", rack="r2"), zoned("b1", "b", rack="r1")]
    req = request(
        anti_affinity_group="g", anti_affinity_scope="rack", topology_spread=[spread(group=None)]
    )
    decision = decide(placement_input(hosts, req, existing_vms=vms("a1")))
    assert decision.rejected == {
        "a1": "anti_affinity_conflict",
        "a2": "topology_spread_violation",
        "b1": "anti_affinity_conflict",
    }


def test_one_table_follows_the_group_vms_each_request_names() -> None:
    # A table serves many requests; the rows of a group's VMs are kept for the next request
    # and must be looked up again when that request's VMs differ.
    hosts = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("b2", "b")]
    table = HostTable.build(hosts)
    engine = Engine(Policy())
    existing = [ExistingVm.model_validate(vm) for vm in vms("a1", "ghost")]
    moved = [ExistingVm.model_validate(vm) for vm in vms("b1", "ghost")]
    for vm_list, full in ((existing, "a"), (moved, "b"), (existing, "a")):
        rejected = engine.decide(table, hard(), vm_list).rejected
        assert rejected == {
            f"{full}1": "topology_spread_violation",
            f"{full}2": "topology_spread_violation",
        }


def test_one_table_follows_a_list_of_vms_changed_in_place() -> None:
    # The table recognises the VMs it saw last by identity: a list changed in place since, or
    # a new list holding new but equal VMs, must give the rows of what it holds now.
    hosts = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("b2", "b")]
    table = HostTable.build(hosts)
    engine = Engine(Policy())
    vm_list = [ExistingVm.model_validate(vm) for vm in vms("a1", "ghost")]
    for change, full in ((None, "a"), ("b1", "b"), (None, "b"), ("a2", "a")):
        if change is not None:
            vm_list[0] = ExistingVm(name="vm-0", host=change, group="g")
        for listed in (vm_list, [vm.model_copy() for vm in vm_list]):
            rejected = engine.decide(table, hard(), listed).rejected
            assert rejected == {
                f"{full}1": "topology_spread_violation",
                f"{full}2": "topology_spread_violation",
            }


def test_an_existing_vm_is_frozen() -> None:
    vm = ExistingVm(name="vm-0", host="a1", group="g")
    with pytest.raises(ValidationError):
        vm.host = "b1"  # type: ignore[misc]
