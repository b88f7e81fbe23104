"""One reading of a Node's conditions and taints, for the two questions virtflow asks of it.

- `readiness_gaps`: may a new spare's Node take workloads? Ready=True, none of the startup
  taints (not-ready, unreachable, uninitialized), NetworkUnavailable not True, not cordoned.
- `health_problems`: is a held spare's Node still healthy? Only Ready not True, or the
  unreachable taint, count: a cordon may be the upgrade controller's own, and a startup taint
  cannot come back on a Node that was Ready.

Both answer in words ("Ready=False (KubeletNotReady)", "taint node.kubernetes.io/unreachable"):
an empty list means yes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lightkube.resources.core_v1 import Node

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
# Startup taints that mean "not ready for workloads yet", whatever the Ready condition says.
BLOCKING_TAINTS = (
    "node.kubernetes.io/not-ready",
    UNREACHABLE_TAINT,
    "node.kubernetes.io/uninitialized",
    "node.cloudprovider.kubernetes.io/uninitialized",
)


def readiness_gaps(node: Node | Mapping[str, Any] | None) -> list[str]:
    """What still keeps this Node from taking workloads; empty means Ready."""
    if node is None:
        return ["node not registered"]
    data, conditions, taints = _read(node)
    gaps = _ready_gap(conditions)
    gaps.extend(f"taint {key}" for key in BLOCKING_TAINTS if key in taints)
    network = conditions.get("NetworkUnavailable")
    if network is not None and network.get("status") == "True":
        gaps.append(f"NetworkUnavailable=True{_reason(network)}")
    if (data.get("spec") or {}).get("unschedulable"):
        gaps.append("cordoned")
    return gaps


def health_problems(node: Node | Mapping[str, Any] | None) -> list[str]:
    """What makes a held Node unhealthy; empty means healthy."""
    if node is None:
        return ["node not found"]
    _, conditions, taints = _read(node)
    problems = _ready_gap(conditions)
    if UNREACHABLE_TAINT in taints:
        problems.append(f"taint {UNREACHABLE_TAINT}")
    return problems


def _read(
    node: Node | Mapping[str, Any],
) -> tuple[Mapping[str, Any], dict[Any, Mapping[str, Any]], set[Any]]:
    data: Mapping[str, Any] = node if isinstance(node, Mapping) else node.to_dict()
    conditions = {c.get("type"): c for c in (data.get("status") or {}).get("conditions") or []}
    taints = {t.get("key") for t in (data.get("spec") or {}).get("taints") or []}
    return data, conditions, taints


def _ready_gap(conditions: Mapping[Any, Mapping[str, Any]]) -> list[str]:
    ready = conditions.get("Ready")
    if ready is None:
        return ["Ready condition not reported"]
    if ready.get("status") != "True":
        return [f"Ready={ready.get('status', 'Unknown')}{_reason(ready)}"]
    return []


def _reason(condition: Mapping[str, Any]) -> str:
    return f" ({condition['reason']})" if condition.get("reason") else ""
