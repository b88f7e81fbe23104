"""The `Table` answer (meta.k8s.io/v1) kubectl asks for with `Accept: ...;as=Table`.

Columns follow kube-apiserver's printers for the types kubectl users look at (nodes, pods,
events, namespaces, budgets); other types get NAME and AGE. Priority-1 columns are the ones
kubectl shows with `-o wide`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from lab.kube_store import Obj

TABLE_GROUP = "meta.k8s.io"
NONE = "<none>"

Column = tuple[str, str, int, Callable[[Obj], Any]]  # name, type, priority, cell


def wants_table(accept: str | None) -> str | None:
    """The Table apiVersion the client accepts (meta.k8s.io/v1 or v1beta1), else None."""
    for part in (accept or "").split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("as") == "Table" and params.get("g") == TABLE_GROUP:
            return f"{TABLE_GROUP}/{params.get('v', 'v1')}"
    return None


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """kubectl's short ages: 45s, 3m12s, 5h, 2d3h, 40d."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    return f"{days}d" if days < 730 else f"{days // 365}y"


def age(value: str | None) -> str:
    moment = _parse_time(value)
    if moment is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - moment).total_seconds())


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name", ""))


def _age(obj: Obj) -> str:
    return age(_meta(obj).get("creationTimestamp"))


def _conditions(obj: Obj) -> dict[str, str]:
    return {
        c.get("type"): c.get("status") for c in (obj.get("status") or {}).get("conditions") or []
    }


def _node_status(node: Obj) -> str:
    ready = _conditions(node).get("Ready")
    text = "Ready" if ready == "True" else "NotReady" if ready == "False" else "Unknown"
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(node: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(
        k[len(prefix) :] for k in (_meta(node).get("labels") or {}) if k.startswith(prefix)
    )
    return ",".join(roles) or NONE


def _address(node: Obj, kind: str) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address"))
    return NONE


def _info(key: str) -> Callable[[Obj], str]:
    return lambda node: str(((node.get("status") or {}).get("nodeInfo") or {}).get(key, ""))


def _pod_ready(pod: Obj) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _pod_status(pod: Obj) -> str:
    if _meta(pod).get("deletionTimestamp"):
        return "Terminating"
    return str((pod.get("status") or {}).get("phase", "Pending"))


def _pod_restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(int(c.get("restartCount", 0)) for c in statuses)


def _event_object(event: Obj) -> str:
    involved = event.get("involvedObject") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


def _event_last_seen(event: Obj) -> str:
    return age(
        event.get("lastTimestamp")
        or event.get("eventTime")
        or _meta(event).get("creationTimestamp")
    )


def _budget_field(key: str) -> Callable[[Obj], str]:
    return lambda pdb: str((pdb.get("spec") or {}).get(key, "N/A"))


NAME: Column = ("Name", "string", 0, _name)
AGE: Column = ("Age", "string", 0, _age)
COLUMNS: dict[str, list[Column]] = {
    "nodes": [
        NAME,
        ("Status", "string", 0, _node_status),
        ("Roles", "string", 0, _node_roles),
        AGE,
        ("Version", "string", 0, _info("kubeletVersion")),
        ("Internal-IP", "string", 1, lambda n: _address(n, "InternalIP")),
        ("External-IP", "string", 1, lambda n: _address(n, "ExternalIP")),
        ("OS-Image", "string", 1, _info("osImage")),
        ("Kernel-Version", "string", 1, _info("kernelVersion")),
        ("Container-Runtime", "string", 1, _info("containerRuntimeVersion")),
    ],
    "pods": [
        NAME,
        ("Ready", "string", 0, _pod_ready),
        ("Status", "string", 0, _pod_status),
        ("Restarts", "integer", 0, _pod_restarts),
        AGE,
        ("IP", "string", 1, lambda p: (p.get("status") or {}).get("podIP") or NONE),
        ("Node", "string", 1, lambda p: (p.get("spec") or {}).get("nodeName") or NONE),
        ("Nominated Node", "string", 1, lambda p: NONE),
        ("Readiness Gates", "string", 1, lambda p: NONE),
    ],
    "namespaces": [
        NAME,
        ("Status", "string", 0, lambda ns: (ns.get("status") or {}).get("phase", "Active")),
        AGE,
    ],
    "events": [
        ("Last Seen", "string", 0, _event_last_seen),
        ("Type", "string", 0, lambda e: e.get("type", "")),
        ("Reason", "string", 0, lambda e: e.get("reason", "")),
        ("Object", "string", 0, _event_object),
        ("Message", "string", 0, lambda e: e.get("message", "")),
        ("Name", "string", 1, _name),
    ],
    "poddisruptionbudgets": [
        NAME,
        ("Min Available", "string", 0, _budget_field("minAvailable")),
        ("Max Unavailable", "string", 0, _budget_field("maxUnavailable")),
        (
            "Allowed Disruptions",
            "integer",
            0,
            lambda b: (b.get("status") or {}).get("disruptionsAllowed", 0),
        ),
        AGE,
    ],
    "leases": [
        NAME,
        ("Holder", "string", 0, lambda le: (le.get("spec") or {}).get("holderIdentity", "")),
        AGE,
    ],
    "secrets": [
        NAME,
        ("Type", "string", 0, lambda s: s.get("type", "Opaque")),
        ("Data", "integer", 0, lambda s: len(s.get("data") or {})),
        AGE,
    ],
}


def _row_object(obj: Obj, include: str, api_version: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": _meta(obj)}


def to_table(
    resource: str,
    objects: list[Obj],
    resource_version: str,
    api_version: str = f"{TABLE_GROUP}/v1",
    include_object: str = "Metadata",
    headers: bool = True,
) -> Obj:
    columns = COLUMNS.get(resource, [NAME, AGE])
    rows = []
    for obj in objects:
        row: Obj = {"cells": [cell(obj) for _, _, _, cell in columns]}
        if (embedded := _row_object(obj, include_object, api_version)) is not None:
            row["object"] = embedded
        rows.append(row)
    table: Obj = {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {
                "name": name,
                "type": kind,
                "format": "name" if name == "Name" else "",
                "description": "",
                "priority": priority,
            }
            for name, kind, priority, _ in columns
        ]
        if headers
        else [],
        "rows": rows,
    }
    return table
