"""The plugin registry and a site plugin loaded through entry points, end to end."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import placement_site_plugins as site
import pytest
from factories import decide, host, placement_input, request

from placement.errors import PolicyError
from placement.names import ENTRY_POINT_GROUP
from placement.policy import parse_policy
from placement.registry import PluginRegistry, RegistryError, builtin_registry, default_registry


def entry_point(name: str, attr: str) -> EntryPoint:
    # The module name is whatever the test runner imported it as: it resolves either way.
    return EntryPoint(name=name, value=f"{site.__name__}:{attr}", group=ENTRY_POINT_GROUP)


@pytest.fixture
def registry() -> PluginRegistry:
    return builtin_registry().load_entry_points(
        [entry_point("MaintenanceSoon", "maintenance_soon"), entry_point("HostCost", "host_cost")]
    )


def test_entry_points_register_after_the_builtins_sorted_by_name(
    registry: PluginRegistry,
) -> None:
    assert registry.names()[-2:] == ["HostCost", "MaintenanceSoon"]
    assert registry.names()[0] == "NodeUnschedulable"


def test_site_score_weighted_in_the_policy_decides(registry: PluginRegistry) -> None:
    hosts = [
        host("cheap", cpu_allocated=16, labels={"cost": "10"}),
        host("dear", labels={"cost": "40"}),
        host("unknown"),
    ]
    policy = parse_policy(
        {"plugin_weights": {"HostCost": 5}, "plugin_args": {"HostCost": {"missing": 50}}},
        registry,
    )
    decision = decide(placement_input(hosts, policy=policy), registry)
    costs = {h: s["HostCost"] for h, s in decision.scores.items()}
    # raw 10, 40, 50 -> 100 - 100 * raw // 50.
    assert costs == {"cheap": 80, "dear": 20, "unknown": 0}
    assert decision.host == "cheap"
    assert decision.plugins[-1] == "HostCost"


def test_site_filter_enabled_in_the_policy_rejects_with_its_keyword(
    registry: PluginRegistry,
) -> None:
    hosts = [host("a", labels={"maintenance": "soon"}), host("b", unschedulable=True), host("c")]
    policy = parse_policy({"enabled_plugins": ["MaintenanceSoon"]}, registry)
    decision = decide(placement_input(hosts, request(), policy), registry)
    assert decision.rejected == {"a": "maintenance_soon", "b": "unschedulable"}
    nothing = decide(placement_input(hosts[:2], request(), policy), registry)
    assert nothing.summary == "no host fits: 1 maintenance_soon, 1 unschedulable"


def test_site_plugins_do_not_run_unless_named(registry: PluginRegistry) -> None:
    hosts = [host("a", labels={"maintenance": "soon", "cost": "1"})]
    decision = decide(placement_input(hosts), registry)
    assert decision.host == "a"
    assert "HostCost" not in decision.plugins


def test_bad_plugin_args_name_the_key(registry: PluginRegistry) -> None:
    with pytest.raises(PolicyError, match=r"^plugin_args\.HostCost: unknown arguments \['cap'\]"):
        parse_policy(
            {"enabled_plugins": ["HostCost"], "plugin_args": {"HostCost": {"cap": 1}}}, registry
        )


def test_unknown_names_fail_when_the_policy_is_loaded() -> None:
    with pytest.raises(PolicyError, match=r"^enabled_plugins\.HostCost: unknown plugin"):
        parse_policy({"enabled_plugins": ["HostCost"]}, builtin_registry())


def test_duplicate_names_fail_at_registration(registry: PluginRegistry) -> None:
    with pytest.raises(RegistryError, match="duplicate placement plugin name 'HostCost'"):
        registry.load_entry_points([entry_point("HostCost", "host_cost")])
    with pytest.raises(RegistryError, match="duplicate placement plugin name 'Pool'"):
        builtin_registry().load_entry_points([entry_point("Pool", "host_cost")])


def test_a_broken_entry_point_fails_at_load_naming_it() -> None:
    broken = EntryPoint(name="Gone", value="no_such_module_xyz:factory", group=ENTRY_POINT_GROUP)
    with pytest.raises(RegistryError, match="placement plugin 'Gone'"):
        builtin_registry().load_entry_points([broken])


def test_a_plugin_must_carry_its_registered_name(registry: PluginRegistry) -> None:
    registry.register("Alias", site.host_cost)
    with pytest.raises(PolicyError, match="calls itself 'HostCost'"):
        parse_policy({"enabled_plugins": ["Alias"]}, registry)


def test_the_installed_registry_holds_every_builtin() -> None:
    names = default_registry().names()
    assert names[:12] == [
        "NodeUnschedulable",
        "NodeName",
        "Pool",
        "Dedicated",
        "VmQuota",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "AntiAffinity",
        "PodTopologySpread",
        "Near",
        "NodeResourcesBalancedAllocation",
    ]
