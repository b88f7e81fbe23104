"""Properties over generated inventories: the vectorised and per-host paths agree (decide()
checks it), the chosen host passes every filter, the best total wins with the name_asc
tie-break, and the order of hosts in the input never changes the answer."""

from __future__ import annotations

import math
from typing import Any

from factories import decide
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.framework import RequestContext
from placement.models import PlacementInput
from placement.pipeline import build_pipeline
from placement.registry import default_registry
from placement.table import HostTable

LABELS = st.dictionaries(
    st.sampled_from(["zone", "gen", "disk"]), st.sampled_from(["a", "b", "3", "7"]), max_size=3
)
TAINT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["gpu", "maint"]),
        "value": st.sampled_from(["", "yes"]),
        "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
    }
)
TOLERATION = st.one_of(
    st.fixed_dictionaries(
        {"key": st.sampled_from(["gpu", "maint"]), "operator": st.just("Exists")},
        optional={"effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])},
    ),
    st.fixed_dictionaries({"key": st.just("gpu"), "value": st.sampled_from(["", "yes"])}),
    st.just({"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}),
)
EXPR = st.one_of(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["zone", "disk"]),
            "operator": st.sampled_from(["In", "NotIn"]),
            "values": st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2),
        }
    ),
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["zone", "gen"]),
            "operator": st.sampled_from(["Exists", "DoesNotExist"]),
        }
    ),
    st.fixed_dictionaries(
        {"key": st.just("gen"), "operator": st.sampled_from(["Gt", "Lt"]), "values": st.just(["5"])}
    ),
)


DEVICES = st.dictionaries(st.sampled_from(["x.io/fpga", "y.io/nic"]), st.integers(0, 2), max_size=2)


@st.composite
def hosts(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from([f"h{i}" for i in range(16)]), min_size=2, max_size=12,
                          unique=True))  # fmt: skip
    out = []
    for name in names:
        cpu = draw(st.integers(0, 32)) if draw(st.integers(0, 9)) == 0 else 32
        mem = 1024 * (draw(st.integers(0, 32)) if draw(st.integers(0, 9)) == 0 else 32)
        gpu = draw(st.integers(0, 2))
        disk = draw(st.sampled_from([0, 50, 100]))
        out.append(
            {
                "name": name,
                "pool": draw(st.sampled_from([None, "a", "a", "b"])),
                "dedicated": draw(st.integers(0, 5)) == 0,
                "cpu_capacity": cpu,
                "cpu_allocated": draw(st.integers(0, cpu // 2 + 2)),
                "cpu_allocation_ratio": draw(st.sampled_from([None, 1.0, 1.5, 2.0])),
                "memory_mb_capacity": mem,
                "memory_mb_allocated": draw(st.integers(0, mem // 2 + 1024)),
                "memory_allocation_ratio": draw(st.sampled_from([None, 1.0, 1.3])),
                "gpu_capacity": gpu,
                "gpu_allocated": draw(st.integers(0, gpu)),
                "disk_gb_capacity": disk,
                "disk_gb_allocated": draw(st.integers(0, disk)),
                "disk_allocation_ratio": draw(st.sampled_from([1.0, 1.5])),
                "devices_capacity": draw(DEVICES),
                "devices_allocated": draw(DEVICES),
                "labels": draw(LABELS),
                "taints": draw(st.lists(TAINT, max_size=2)) if draw(st.integers(0, 3)) == 0 else [],
                "rack": draw(st.sampled_from([None, "r1", "r2"])),
                "vm_count": draw(st.integers(0, 2)),
                "vm_quota": draw(st.sampled_from([None, None, None, 0, 2, 4])),
                "unschedulable": draw(st.integers(0, 19)) == 0,
            }
        )
    return out


@st.composite
def inputs(draw: st.DrawFn) -> PlacementInput:
    host_list = draw(hosts())
    names = [h["name"] for h in host_list] or ["h0"]
    affinity = None
    if draw(st.integers(0, 2)) == 0:
        affinity = {
            "required": draw(st.lists(st.lists(EXPR, min_size=1, max_size=2), max_size=3)),
            "preferred": draw(st.lists(
                st.fixed_dictionaries({"weight": st.integers(1, 100),
                                       "match": st.lists(EXPR, min_size=1, max_size=2)}),
                max_size=2,
            )),
        }  # fmt: skip
    request = {
        "name": "vm",
        "cpu": draw(st.integers(1, 8)),
        "memory_mb": draw(st.integers(1, 8)) * 1024,
        "gpu": int(draw(st.integers(0, 4)) == 0),
        "disk_gb": draw(st.sampled_from([0, 0, 10, 40])),
        "devices": draw(DEVICES) if draw(st.integers(0, 3)) == 0 else {},
        "pool": draw(st.sampled_from([None] * 6 + ["a", "b"])),
        "dedicated": draw(st.integers(0, 9)) == 0,
        "tolerations": draw(st.lists(TOLERATION, max_size=2)),
        "node_selector": {"zone": "a"} if draw(st.integers(0, 5)) == 0 else {},
        "node_affinity": affinity,
        "anti_affinity_group": draw(st.sampled_from([None, "g"])),
        "anti_affinity_scope": draw(st.sampled_from(["host", "rack"])),
        "node_name_regex": draw(st.sampled_from([None] * 8 + ["1", "^h[0-5]$"])),
    }
    policy = {
        "scoring_strategy": draw(
            st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
        ),
        "allow_shared_on_dedicated": draw(st.booleans()),
        "plugin_weights": {"ResourceAlignment": draw(st.sampled_from([0, 0, 3]))},
        "resource_weights": {"cpu": draw(st.integers(0, 3)), "memory_mb": draw(st.integers(1, 3)),
                             "disk_gb": draw(st.sampled_from([0, 0, 1, 2]))},
        "thresholds": draw(st.sampled_from([{}, {"prefer_below_percent": {"cpu": 60}},
                                            {"min_free": {"gpu": 1}}])),
    }  # fmt: skip
    existing = draw(
        st.lists(
            st.fixed_dictionaries(
                {"name": st.just("x"), "host": st.sampled_from(names), "group": st.just("g")}
            ),
            max_size=2,
        )
    )
    return PlacementInput.model_validate(
        {"hosts": host_list, "request": request, "policy": policy, "existing_vms": existing}
    )


@settings(max_examples=300, deadline=None)
@given(inputs())
def test_chosen_host_passes_every_filter_and_has_the_best_total(inp: PlacementInput) -> None:
    decision = decide(inp)
    if decision.host is None:
        assert len(decision.rejected) == len(inp.hosts)
        return
    chosen = next(h for h in inp.hosts if h.name == decision.host)
    table = HostTable.build(inp.hosts)
    ctx = RequestContext.build(inp.request, inp.policy, inp.existing_vms, table)
    for plugin in build_pipeline(inp.policy, default_registry()).filters:
        assert plugin.filter_host(ctx, chosen) is None, plugin.name
    # Re-derived from PLACEMENT.md, independently of the plugins.
    req = chosen.cpu_allocation_ratio or 1.0
    assert chosen.cpu_allocated + inp.request.cpu <= math.floor(chosen.cpu_capacity * req)
    cordon_ok = any(t.key == "node.kubernetes.io/unschedulable" for t in inp.request.tolerations)
    assert cordon_ok or not chosen.unschedulable
    assert inp.request.pool in (None, chosen.pool)
    assert chosen.vm_quota is None or chosen.vm_count < chosen.vm_quota
    if inp.request.disk_gb:
        disk = math.floor(chosen.disk_gb_capacity * chosen.disk_allocation_ratio)
        assert chosen.disk_gb_allocated + inp.request.disk_gb <= disk
    for device, n in inp.request.devices.items():
        used = chosen.devices_allocated.get(device, 0)
        assert n == 0 or used + n <= chosen.devices_capacity.get(device, 0)
    best = max(s["total"] for s in decision.scores.values())
    winners = sorted(h for h, s in decision.scores.items() if s["total"] == best)
    assert decision.host == winners[0]
    assert not set(decision.rejected) & set(decision.scores)
    assert set(decision.rejected) | set(decision.scores) == {h.name for h in inp.hosts}


@settings(max_examples=200, deadline=None)
@given(inputs(), st.randoms(use_true_random=False))
def test_shuffling_hosts_never_changes_the_answer(inp: PlacementInput, rnd: Any) -> None:
    shuffled = list(inp.hosts)
    rnd.shuffle(shuffled)
    other = inp.model_copy(update={"hosts": shuffled})
    a, b = decide(inp), decide(other)
    assert a.to_json() == b.to_json()
    assert (a.summary, a.reason_counts) == (b.summary, b.reason_counts)
