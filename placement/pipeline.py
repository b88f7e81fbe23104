"""A policy checked against a registry and turned into ordered plugin instances.

Which plugins run: the defaults, the policy-configured ones whose thresholds are set, and any
named in `enabled_plugins` or `plugin_weights`; minus `disabled_plugins`. Filters run in
registry order (PLACEMENT.md order, then site plugins); a score runs when its weight is
positive (`plugin_weights`, 1 when not named).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import names
from .errors import PolicyError
from .framework import FilterPlugin, ScorePlugin
from .models import Policy
from .registry import PluginRegistry


@dataclass(frozen=True)
class Pipeline:
    filters: Sequence[FilterPlugin]
    scores: Sequence[tuple[ScorePlugin, int]]


def _check_names(policy: Policy, registry: PluginRegistry) -> None:
    known = ", ".join(registry.names())
    for key, values in (
        ("plugin_weights", list(policy.plugin_weights)),
        ("enabled_plugins", policy.enabled_plugins),
        ("disabled_plugins", policy.disabled_plugins),
        ("plugin_args", list(policy.plugin_args)),
    ):
        for name in values:
            if name not in registry:
                raise PolicyError(f"{key}.{name}", f"unknown plugin {name!r} (known: {known})")


def _wanted(policy: Policy, registry: PluginRegistry) -> list[str]:
    thresholds = policy.thresholds
    configured = {
        names.MIN_FREE_RESOURCES: bool(thresholds.min_free),
        names.RESOURCE_THRESHOLD: bool(thresholds.prefer_below_percent),
    }
    for name in policy.enabled_plugins:
        if configured.get(name) is False:
            key = "min_free" if name == names.MIN_FREE_RESOURCES else "prefer_below_percent"
            raise PolicyError(f"enabled_plugins.{name}", f"needs thresholds.{key}")
    named = set(policy.enabled_plugins) | {n for n, w in policy.plugin_weights.items() if w > 0}
    wanted = []
    for name in registry.names():
        on = registry.get(name).default or configured.get(name, False) or name in named
        if on and name not in policy.disabled_plugins:
            wanted.append(name)
    return wanted


def build_pipeline(policy: Policy, registry: PluginRegistry) -> Pipeline:
    _check_names(policy, registry)
    filters: list[FilterPlugin] = []
    scores: list[tuple[ScorePlugin, int]] = []
    for name in _wanted(policy, registry):
        try:
            plugin = registry.get(name).factory(policy.plugin_args.get(name, {}))
        except Exception as exc:
            raise PolicyError(f"plugin_args.{name}", str(exc)) from exc
        if getattr(plugin, "name", None) != name:
            raise PolicyError(name, f"the plugin calls itself {getattr(plugin, 'name', None)!r}")
        is_filter = isinstance(plugin, FilterPlugin)
        is_score = isinstance(plugin, ScorePlugin)
        if not (is_filter or is_score):
            raise PolicyError(name, "the plugin is neither a filter nor a score")
        if is_filter:
            filters.append(plugin)  # type: ignore[arg-type]
        weight = policy.plugin_weights.get(name, 1)
        if is_score and weight > 0:
            scores.append((plugin, weight))  # type: ignore[arg-type]
        elif name in policy.plugin_weights and not is_score and weight > 0:
            raise PolicyError(f"plugin_weights.{name}", f"{name} is a filter, not a score")
    return Pipeline(filters, scores)
