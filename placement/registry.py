"""Plugin name -> factory registry: built-ins, then a site's entry points.

A factory takes the plugin's arguments from the policy (`plugin_args.<name>`, a mapping) and
returns the plugin. Duplicate names fail when registered, unknown names when a policy is
loaded: never in the middle of a request. A site ships plugins as entry points in the group
`virtflow.placement.plugins` (name = plugin name, object = factory).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from . import names
from .plugins.alignment import ResourceAlignment
from .plugins.anti_affinity import AntiAffinity
from .plugins.balanced import BalancedAllocation
from .plugins.dedicated import Dedicated
from .plugins.min_free import MinFreeResources
from .plugins.near import Near
from .plugins.node_affinity import NodeAffinity
from .plugins.node_name import NodeName
from .plugins.pool import Pool
from .plugins.resources_fit import NodeResourcesFit
from .plugins.taint_toleration import TaintToleration
from .plugins.threshold import ResourceThreshold
from .plugins.topology_spread import PodTopologySpread
from .plugins.unschedulable import NodeUnschedulable
from .plugins.vm_quota import VmQuota

Factory = Callable[[Mapping[str, Any]], object]


class RegistryError(ValueError):
    """A plugin that cannot be registered (duplicate name, broken entry point)."""


@dataclass(frozen=True)
class Registration:
    name: str
    factory: Factory
    # Runs without being named in the policy (the PLACEMENT.md filters and default scores).
    default: bool = False


class PluginRegistry:
    def __init__(self) -> None:
        self._entries: dict[str, Registration] = {}

    def register(self, name: str, factory: Factory, *, default: bool = False) -> None:
        if name in self._entries:
            raise RegistryError(f"duplicate placement plugin name {name!r}")
        self._entries[name] = Registration(name, factory, default)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> Registration:
        return self._entries[name]

    def names(self) -> list[str]:
        """Registration order: the order filters run in (built-ins first)."""
        return list(self._entries)

    def copy(self) -> PluginRegistry:
        other = PluginRegistry()
        other._entries = dict(self._entries)
        return other

    def load_entry_points(self, eps: Iterable[EntryPoint] | None = None) -> PluginRegistry:
        """Register each entry point of the plugin group, sorted by name for a stable order."""
        found = entry_points(group=names.ENTRY_POINT_GROUP) if eps is None else eps
        for ep in sorted(found, key=lambda e: e.name):
            try:
                factory = ep.load()
            except Exception as exc:
                raise RegistryError(f"placement plugin {ep.name!r} ({ep.value}): {exc}") from exc
            if not callable(factory):
                raise RegistryError(f"placement plugin {ep.name!r} ({ep.value}) is not callable")
            self.register(ep.name, factory)
        return self


def _no_args(cls: Callable[[], object]) -> Factory:
    def factory(args: Mapping[str, Any]) -> object:
        if args:
            raise ValueError(f"takes no arguments, got {sorted(args)}")
        return cls()

    return factory


def builtin_registry() -> PluginRegistry:
    registry = PluginRegistry()
    for cls in (
        NodeUnschedulable,
        NodeName,
        Pool,
        Dedicated,
        VmQuota,
        TaintToleration,
        NodeAffinity,
        NodeResourcesFit,
        AntiAffinity,
        PodTopologySpread,
        Near,
        BalancedAllocation,
    ):
        registry.register(cls.name, _no_args(cls), default=True)
    # Policy-configured: they run when their thresholds are set.
    registry.register(MinFreeResources.name, _no_args(MinFreeResources))
    registry.register(ResourceThreshold.name, _no_args(ResourceThreshold))
    # Packing: runs when weighted in the policy (plugin_weights).
    registry.register(ResourceAlignment.name, _no_args(ResourceAlignment))
    return registry


@lru_cache(maxsize=1)
def _installed() -> PluginRegistry:
    return builtin_registry().load_entry_points()


def default_registry() -> PluginRegistry:
    """Built-ins plus the installed entry points, loaded once per process."""
    return _installed().copy()
