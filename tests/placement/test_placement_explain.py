"""The readable explanation table."""

from __future__ import annotations

from factories import host, placement_input, request

from placement.engine import place
from placement.explain import render_explanation


def test_table_lists_chosen_candidates_then_rejections_with_numbers() -> None:
    hosts = [
        host("busy", cpu_allocated=20),
        host("free"),
        host("small", cpu_capacity=2),
        host("web", pool="web"),
    ]
    inp = placement_input(hosts, request(cpu=4, pool=None, node_selector={}))
    inp = inp.model_copy(update={"hosts": [*hosts[:3], hosts[3]]})
    decision = place(inp)
    lines = render_explanation(inp, decision).splitlines()
    assert lines[0] == "request vm-1: cpu 4, memory_mb 8192"
    assert lines[1].split() == [
        "host",
        "result",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "total",
    ]
    assert lines[2].split()[:2] == ["free", "chosen"]
    assert lines[2].split()[-1] == str(decision.scores["free"]["total"])
    assert [line.split()[0] for line in lines[3:6]] == ["web", "busy", "small"]
    assert lines[5].split(None, 1)[1] == "insufficient_cpu (needs 4 of 2)"
    assert lines[-1] == decision.summary


def test_nothing_fits_ends_with_the_reason_counts() -> None:
    inp = placement_input([host("a", pool="x"), host("b", pool="y")], request(pool="z"))
    text = render_explanation(inp, place(inp))
    assert text.splitlines()[-1] == "no host fits: 2 pool_mismatch"
    assert "a     pool_mismatch" in text


def test_limit_caps_the_rows() -> None:
    inp = placement_input([host(f"h{i}") for i in range(10)])
    lines = render_explanation(inp, place(inp), limit=3).splitlines()
    assert lines[-2] == "... 7 more hosts"
    assert len(lines) == 1 + 1 + 3 + 2


def test_a_spread_rejection_names_the_domain_and_its_count() -> None:
    hosts = [
        host("a1", labels={"zone": "a"}),
        host("b1", labels={"zone": "b"}),
        host("bare"),
    ]
    spread = {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    req = request(anti_affinity_group="web", topology_spread=[spread])
    existing = [{"name": "web-0", "host": "b1", "group": "web"}]
    inp = placement_input(hosts, req, existing_vms=existing)
    lines = render_explanation(inp, place(inp)).splitlines()
    assert lines[0] == (
        "request vm-1: cpu 4, memory_mb 8192, spread web over zone max_skew 1 (DoNotSchedule)"
    )
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[2:-1]}
    assert rows["bare"] == "topology_spread_violation (no zone)"
    # b1 is taken by host anti-affinity first: the first failed filter is the one reported.
    assert rows["b1"] == "anti_affinity_conflict"
    assert rows["a1"].split()[0] == "chosen"


def test_a_spread_rejection_shows_count_min_and_skew() -> None:
    hosts = [host("a1", labels={"zone": "a"}), host("a2", labels={"zone": "a"})]
    hosts.append(host("b1", labels={"zone": "b"}, cpu_allocated=32))
    spread = {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
    req = request(topology_spread=[{**spread, "group": "web"}])
    existing = [{"name": "web-0", "host": "a1", "group": "web"}]
    inp = placement_input(hosts, req, existing_vms=existing)
    text = render_explanation(inp, place(inp))
    assert "a2    topology_spread_violation (zone=a has 1, min 0, max_skew 1)" in text
    assert text.splitlines()[-1] == (
        "no host fits: 2 topology_spread_violation, 1 insufficient_cpu"
    )


def test_not_near_names_the_wanted_domain() -> None:
    hosts = [
        host("old", labels={"zone": "a"}, unschedulable=True),
        host("a1", labels={"zone": "a"}),
        host("b1", labels={"zone": "b"}),
        host("bare"),
    ]
    req = request(near={"vm": "node-3", "topology_key": "zone"})
    inp = placement_input(hosts, req, existing_vms=[{"name": "node-3", "host": "old"}])
    lines = render_explanation(inp, place(inp)).splitlines()
    assert lines[0].endswith(", near node-3 by zone (required)")
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[2:-1]}
    assert rows["b1"] == "not_near (wants zone=a (host old of node-3), has zone=b)"
    assert rows["bare"] == "not_near (wants zone=a (host old of node-3), has no zone)"
    assert lines[-1] == f"placed on a1 (total {place(inp).scores['a1']['total']})"


def test_an_unknown_near_lists_no_host_and_says_why() -> None:
    req = request(near={"vm": "node-9", "topology_key": "zone", "required": False})
    inp = placement_input([host("a1"), host("b1")], req)
    lines = render_explanation(inp, place(inp)).splitlines()
    assert lines[0].endswith(", near node-9 by zone (preferred)")
    assert lines[1].split() == ["host", "result", "total"]
    assert lines[2:] == ["near_unknown: vm 'node-9' is not among the existing VMs"]
