"""The engine end to end: order of filters, tie-break, totals, the summary and the JSON form."""

from __future__ import annotations

import numpy as np
import placement_site_plugins as site
from factories import decide, host, placement_input, request

from placement.engine import place
from placement.framework import RequestContext
from placement.models import Host, Policy
from placement.registry import builtin_registry
from placement.table import BoolArray, HostTable


def test_the_first_failed_filter_is_reported() -> None:
    # Fails pool, dedicated, quota, taint and CPU: pool comes first in PLACEMENT.md.
    h = host(pool="b", dedicated=True, vm_quota=0, cpu_capacity=1,
             taints=[{"key": "k", "effect": "NoSchedule"}])  # fmt: skip
    decision = decide(placement_input([h], request(pool="a")))
    assert decision.rejected == {"h1": "pool_mismatch"}


class _Flagged:
    """A site filter with a table form, registered after a host-by-host one."""

    name = "Flagged"
    reasons = ("flagged",)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        return "flagged" if host.labels.get("maintenance") == "soon" else None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray:
        return np.array([h.labels.get("maintenance") == "soon" for h in table.hosts])


def test_a_table_filter_after_a_host_by_host_one_keeps_the_first_failure() -> None:
    registry = builtin_registry()
    registry.register("MaintenanceSoon", site.maintenance_soon, default=True)
    registry.register("Flagged", lambda args: _Flagged(), default=True)
    hosts = [host("a", labels={"maintenance": "soon"}), host("b")]
    decision = decide(placement_input(hosts, request()), registry)
    assert decision.rejected == {"a": "maintenance_soon"}


def test_highest_total_wins() -> None:
    hosts = [host("a", cpu_allocated=16), host("b"), host("c", cpu_allocated=8)]
    decision = decide(placement_input(hosts))
    assert decision.host == "b"
    assert decision.ranked() == ["b", "c", "a"]


def test_ties_go_to_the_smallest_name() -> None:
    hosts = [host("h10"), host("h2"), host("h1x"), host("h1y")]
    decision = decide(placement_input(hosts))
    assert len({s["total"] for s in decision.scores.values()}) == 1
    assert decision.host == "h10"
    assert decision.ranked() == ["h10", "h1x", "h1y", "h2"]


def test_totals_are_weighted_sums() -> None:
    policy = Policy(plugin_weights={"NodeResourcesFit": 3, "NodeResourcesBalancedAllocation": 2})
    decision = decide(placement_input([host(cpu_allocated=8)], policy=policy))
    s = decision.scores["h1"]
    assert s["total"] == 3 * s["NodeResourcesFit"] + 2 * s["NodeResourcesBalancedAllocation"]


def test_a_weight_of_zero_removes_a_score() -> None:
    policy = Policy(plugin_weights={"NodeResourcesBalancedAllocation": 0})
    decision = decide(placement_input([host()], policy=policy))
    assert decision.plugins == ("NodeResourcesFit",)


def test_a_disabled_filter_does_not_run() -> None:
    policy = Policy(disabled_plugins=["Pool"])
    decision = decide(placement_input([host(pool="b")], request(pool="a"), policy))
    assert decision.host == "h1"


def test_nothing_fits_counts_reasons_descending_then_by_keyword() -> None:
    hosts = [host(f"m{i}", pool="web", memory_mb_capacity=1024) for i in range(3)]
    hosts += [host(f"p{i}", pool="other") for i in range(3)]
    hosts += [host("c0", pool="web", cpu_capacity=1), host("q0", pool="web", vm_quota=0)]
    decision = decide(placement_input(hosts, request(pool="web")))
    assert decision.host is None and decision.vmid is None
    assert decision.error == "no_host_fits"
    assert list(decision.reason_counts.items()) == [
        ("insufficient_memory", 3),
        ("pool_mismatch", 3),
        ("insufficient_cpu", 1),
        ("vm_quota_exceeded", 1),
    ]
    assert decision.summary == (
        "no host fits: 3 insufficient_memory, 3 pool_mismatch, 1 insufficient_cpu, "
        "1 vm_quota_exceeded"
    )
    assert decision.scores == {}


def test_an_empty_pool_says_every_host_is_in_another_pool() -> None:
    hosts = [host("h1", pool="web"), host("h2", pool="db")]
    decision = decide(placement_input(hosts, request(pool="gpu")))
    assert decision.summary == "no host fits: 2 pool_mismatch"


def test_an_empty_inventory_fits_nothing() -> None:
    decision = decide(placement_input([]))
    assert decision.error == "no_host_fits"
    assert decision.summary == "no host fits: the inventory has no hosts"
    assert decision.to_json() == {
        "host": None,
        "vmid": None,
        "error": "no_host_fits",
        "rejected": {},
        "scores": {},
    }


def test_a_single_candidate_still_gets_its_breakdown() -> None:
    decision = decide(placement_input([host("only"), host("off", unschedulable=True)]))
    assert decision.host == "only"
    assert decision.summary == f"placed on only (total {decision.scores['only']['total']})"
    assert decision.rejected == {"off": "unschedulable"}


def test_json_form() -> None:
    hosts = [host("h1", cpu_allocated=31), host("h2")]
    decision = decide(placement_input(hosts, request(vmid_range="100-200"), used_vmids=[100]))
    out = decision.to_json()
    assert out["host"] == "h2" and out["vmid"] == 101 and out["error"] is None
    assert out["rejected"] == {"h1": "insufficient_cpu"}
    assert set(out["scores"]) == {"h2"}
    assert set(out["scores"]["h2"]) == {
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "total",
    }
    assert decision.summary.endswith(", vmid 101")


def test_top_scores_keeps_the_best_in_order() -> None:
    hosts = [host(f"h{i}", cpu_allocated=i) for i in range(10)]
    decision = decide(placement_input(hosts))
    top = decision.top_scores(3)
    assert list(top) == ["h0", "h1", "h2"]
    assert top["h0"] == decision.scores["h0"]
    assert decision.top_scores(0) == {}
    assert len(decision.top_scores(50)) == 10


def test_no_vmid_available_means_no_placement() -> None:
    inp = placement_input([host()], request(vmid_range="100-102"), used_vmids=[100, 101, 102])
    decision = decide(inp)
    assert decision.host is None and decision.vmid is None
    assert decision.error == "no_vmid_available"
    assert decision.summary == "no_vmid_available: no free VM id in 100-102"
    assert decision.scores["h1"]["total"] > 0  # the explanation is still there


def test_input_order_does_not_matter() -> None:
    hosts = [host(f"h{i}", cpu_allocated=i % 3, rack=f"r{i % 2}") for i in range(8)]
    a = place(placement_input(hosts))
    b = place(placement_input(list(reversed(hosts))))
    assert a.to_json() == b.to_json()
