"""PodDisruptionBudgets (policy/v1): their status computed from the pods they select, and
the eviction check a real API server makes, with its exact refusal.

The status is computed whenever a budget is read, as if the disruption controller had just
synced: expectedPods = the selected pods, currentHealthy = those Running and Ready and not
terminating, desiredHealthy from minAvailable or maxUnavailable (integers or percentages,
rounded up), disruptionsAllowed = max(0, currentHealthy - desiredHealthy).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from lab.kube_store import KubeError, KubeStore, Obj

REFUSAL = "Cannot evict pod as it would violate the pod's disruption budget."
CAUSE = "DisruptionBudget"


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector: matchLabels and matchExpressions; `{}` selects every pod."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def healthy(pod: Obj) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return status.get("phase") == "Running" and conditions.get("Ready", "True") == "True"


def _scaled(value: int | str, expected: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * expected / 100)
    return int(value)


def budget_status(pdb: Obj, pods: Iterable[Obj]) -> Obj:
    spec = pdb.get("spec") or {}
    selected = [p for p in pods if selects(spec.get("selector"), p["metadata"].get("labels") or {})]
    expected = len(selected)
    current = sum(1 for p in selected if healthy(p))
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
    else:
        desired = _scaled(spec.get("minAvailable", 1), expected)
    allowed = max(0, current - desired)
    return {
        "observedGeneration": pdb["metadata"].get("generation", 1),
        "expectedPods": expected,
        "currentHealthy": current,
        "desiredHealthy": desired,
        "disruptionsAllowed": allowed,
        "conditions": [
            {
                "type": "DisruptionAllowed",
                "status": "True" if allowed > 0 else "False",
                "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                "message": "",
                "observedGeneration": pdb["metadata"].get("generation", 1),
                "lastTransitionTime": pdb["metadata"].get("creationTimestamp"),
            }
        ],
    }


def with_status(store: KubeStore, pdb: Obj) -> Obj:
    namespace = pdb["metadata"].get("namespace", "")
    return {**pdb, "status": budget_status(pdb, store.list("pods", namespace))}


def check_eviction(store: KubeStore, pod: Obj) -> None:
    """Raise the API server's refusal when a budget forbids evicting this pod now."""
    if pod["metadata"].get("deletionTimestamp"):
        return  # already going: evicting again changes nothing
    if (pod.get("status") or {}).get("phase") != "Running":
        return  # pending or finished pods never count against a budget
    labels = pod["metadata"].get("labels") or {}
    namespace = pod["metadata"].get("namespace", "")
    budgets = [
        b
        for b in store.list("poddisruptionbudgets", namespace)
        if selects((b.get("spec") or {}).get("selector"), labels)
    ]
    if len(budgets) > 1:
        raise KubeError(
            500,
            "InternalError",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource "
            "does not support.",
        )
    if not budgets:
        return
    budget = with_status(store, budgets[0])
    status = budget["status"]
    if status["disruptionsAllowed"] > 0:
        return
    name = budget["metadata"]["name"]
    message = (
        f"The disruption budget {name} needs {status['desiredHealthy']} healthy pods "
        f"and has {status['currentHealthy']} currently"
    )
    raise KubeError(
        429, "TooManyRequests", REFUSAL, {"causes": [{"reason": CAUSE, "message": message}]}
    )
