"""Properties of spread and near over generated inventories: the chosen host never violates a
DoNotSchedule constraint (re-derived here from PLACEMENT.md, not from the plugin), a required
`near` is honoured, and the answer never depends on the order of the hosts. decide() also checks
that the vectorised and the per-host engines agree on every example."""

from __future__ import annotations

from typing import Any

from factories import decide
from hypothesis import given, settings
from hypothesis import strategies as st
from test_placement_properties import hosts

from placement.models import Host, PlacementInput, TopologySpreadConstraint, VmRequest

KEYS = ["zone", "rack", "host", "disk"]
GROUPS = ["g", "h"]


def domain(h: Host, key: str) -> str | None:
    return h.name if key == "host" else h.rack if key == "rack" else h.labels.get(key)


def eligible(req: VmRequest, h: Host, key: str) -> bool:
    if domain(h, key) is None or req.pool not in (None, h.pool):
        return False
    if any(h.labels.get(k) != v for k, v in req.node_selector.items()):
        return False
    required = req.node_affinity.required if req.node_affinity else []
    return not required or any(all(e.matches(h.labels) for e in term) for term in required)


def violates(inp: PlacementInput, chosen: Host, c: TopologySpreadConstraint) -> bool:
    """PLACEMENT.md, Topology: count, min and the DoNotSchedule condition, from scratch."""
    req = inp.request
    group = c.group or req.anti_affinity_group
    by_name = {h.name: h for h in inp.hosts}
    counts = {domain(h, c.topology_key): 0 for h in inp.hosts if eligible(req, h, c.topology_key)}
    for vm in inp.existing_vms:
        h = by_name.get(vm.host)
        if vm.group == group and h is not None and eligible(req, h, c.topology_key):
            counts[domain(h, c.topology_key)] += 1
    low = min(counts.values(), default=0)
    mine = domain(chosen, c.topology_key)
    return mine is None or counts.get(mine, 0) + 1 - low > c.max_skew


CONSTRAINT = st.fixed_dictionaries(
    {
        "topology_key": st.sampled_from(KEYS),
        "max_skew": st.integers(1, 3),
        "when_unsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
        "group": st.sampled_from([None, *GROUPS]),
    }
)


@st.composite
def topology_inputs(draw: st.DrawFn) -> PlacementInput:
    host_list = draw(hosts())
    names = [h["name"] for h in host_list]
    existing = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "host": st.sampled_from([*names, "gone"]),
                    "group": st.sampled_from([None, *GROUPS]),
                }
            ),
            max_size=10,
        )
    )
    existing = [{"name": f"vm-{i}", **vm} for i, vm in enumerate(existing)]
    near = None
    if draw(st.booleans()):
        near = {
            "vm": draw(st.sampled_from([f"vm-{i}" for i in range(len(existing))] or ["vm-0"])),
            "topology_key": draw(st.sampled_from(KEYS)),
            "required": draw(st.booleans()),
        }
    group = draw(st.sampled_from(["g", "g", None]))
    constraints = draw(st.lists(CONSTRAINT, max_size=3))
    if group is None:
        constraints = [{**c, "group": c["group"] or "g"} for c in constraints]
    request = {
        "name": "new",
        "cpu": draw(st.integers(1, 8)),
        "memory_mb": draw(st.integers(1, 8)) * 1024,
        "pool": draw(st.sampled_from([None] * 4 + ["a"])),
        "node_selector": {"disk": "a"} if draw(st.integers(0, 5)) == 0 else {},
        "anti_affinity_group": group,
        "anti_affinity_scope": draw(st.sampled_from(KEYS)),
        "topology_spread": constraints,
        "near": near,
    }
    policy = {"scoring_strategy": draw(st.sampled_from(["LeastAllocated", "MostAllocated"]))}
    return PlacementInput.model_validate(
        {"hosts": host_list, "request": request, "policy": policy, "existing_vms": existing}
    )


@settings(max_examples=200, deadline=None)
@given(topology_inputs())
def test_the_chosen_host_never_violates_a_hard_constraint(inp: PlacementInput) -> None:
    decision = decide(inp)
    if decision.host is None:
        return
    chosen = next(h for h in inp.hosts if h.name == decision.host)
    for c in inp.request.topology_spread:
        if c.when_unsatisfiable == "DoNotSchedule":
            assert not violates(inp, chosen, c), c
    near = inp.request.near
    if near is not None and near.required:
        vm = next(v for v in inp.existing_vms if v.name == near.vm)
        target = next(h for h in inp.hosts if h.name == vm.host)
        assert domain(chosen, near.topology_key) == domain(target, near.topology_key) is not None


@settings(max_examples=100, deadline=None)
@given(topology_inputs())
def test_an_unknown_near_rejects_no_host(inp: PlacementInput) -> None:
    decision = decide(inp)
    if decision.error == "near_unknown":
        assert decision.rejected == {} and decision.scores == {}
        assert inp.request.near is not None


@settings(max_examples=200, deadline=None)
@given(topology_inputs(), st.randoms(use_true_random=False))
def test_spread_and_near_do_not_depend_on_host_order(inp: PlacementInput, rnd: Any) -> None:
    shuffled = list(inp.hosts)
    rnd.shuffle(shuffled)
    a, b = decide(inp), decide(inp.model_copy(update={"hosts": shuffled}))
    assert a.to_json() == b.to_json()
    assert (a.summary, a.reason_counts) == (b.summary, b.reason_counts)
