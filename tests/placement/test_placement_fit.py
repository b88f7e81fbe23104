"""Requests that could never fit, however long they wait."""

from __future__ import annotations

from factories import host, placement_input, request

from placement.fit import empty_inventory_decision, largest_fit_possible


def test_a_full_inventory_could_still_fit_later() -> None:
    hosts = [
        host("h1", cpu_capacity=16, cpu_allocated=16, vm_count=9, unschedulable=True,
             taints=[{"key": "maint", "effect": "NoSchedule"}]),
    ]  # fmt: skip
    existing = [{"name": "db-0", "host": "h1", "group": "db"}]
    inp = placement_input(hosts, request(cpu=16, anti_affinity_group="db"), existing_vms=existing)
    assert largest_fit_possible(inp)


def test_a_request_larger_than_every_host_never_fits() -> None:
    inp = placement_input([host("h1", cpu_capacity=8), host("h2", memory_mb_capacity=1024)],
                          request(cpu=16, memory_mb=4096))  # fmt: skip
    assert not largest_fit_possible(inp)
    assert empty_inventory_decision(inp).reason_counts == {
        "insufficient_cpu": 1,
        "insufficient_memory": 1,
    }


def test_overcommit_counts_towards_what_could_fit() -> None:
    inp = placement_input([host("h1", cpu_capacity=8, cpu_allocation_ratio=2.0)], request(cpu=16))
    assert largest_fit_possible(inp)


def test_static_properties_still_apply() -> None:
    assert not largest_fit_possible(placement_input([host(pool="a")], request(pool="b")))
    assert not largest_fit_possible(placement_input([host(vm_quota=0)]))
    assert not largest_fit_possible(placement_input([host()], request(gpu=1)))
    policy = {"thresholds": {"min_free": {"cpu": 30}}}
    assert not largest_fit_possible(placement_input([host()], request(cpu=4), policy))


def test_vm_ids_do_not_make_a_request_impossible() -> None:
    inp = placement_input([host()], request(vmid_range="1-1"), used_vmids=[1])
    assert largest_fit_possible(inp)


def test_an_empty_inventory_never_fits() -> None:
    assert not largest_fit_possible(placement_input([]))


def test_a_full_spread_could_still_fit_later() -> None:
    hosts = [host("h1", labels={"zone": "a"}), host("h2", labels={"zone": "b"}, cpu_capacity=2)]
    spread = {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    req = request(topology_spread=[{**spread, "group": "web"}])
    existing = [{"name": "web-0", "host": "h1", "group": "web"}]
    assert largest_fit_possible(placement_input(hosts, req, existing_vms=existing))


def test_near_keeps_the_wanted_domain_when_emptied() -> None:
    hosts = [
        host("h1", labels={"zone": "a"}, cpu_capacity=2),
        host("h2", labels={"zone": "b"}),
    ]
    existing = [{"name": "node-1", "host": "h1"}]
    near = {"vm": "node-1", "topology_key": "zone"}
    assert not largest_fit_possible(
        placement_input(hosts, request(near=near), existing_vms=existing)
    )
    preferred = request(near={**near, "required": False})
    assert largest_fit_possible(placement_input(hosts, preferred, existing_vms=existing))
