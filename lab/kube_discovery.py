"""Discovery documents (/api, /apis, /apis/<group>, /<prefix>/<group-version>), built from the
resource table so that every advertised group version answers and lists what it serves."""

from __future__ import annotations

from lab.kube_resources import GROUPS, RESOURCES, STATUS_VERBS
from lab.kube_store import Obj


def api_versions() -> Obj:
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}


def api_group(group: str) -> Obj:
    version = {"groupVersion": f"{group}/{GROUPS[group]}", "version": GROUPS[group]}
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": [version],
        "preferredVersion": version,
    }


def api_group_list() -> Obj:
    groups = [
        {k: v for k, v in api_group(g).items() if k not in ("kind", "apiVersion")} for g in GROUPS
    ]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resource_list(group: str, version: str) -> Obj | None:
    """The APIResourceList of one group version, or None when it is not served."""
    served = [r for r in RESOURCES if (r.group, r.version) == (group, version)]
    if not served:
        return None
    resources: list[Obj] = []
    for r in served:
        resources.append(
            {
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(r.verbs),
                **({"shortNames": list(r.short_names)} if r.short_names else {}),
            }
        )
        if r.has_status:
            resources.append(
                {
                    "name": f"{r.plural}/status",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": list(STATUS_VERBS),
                }
            )
        if r.plural == "pods":
            resources.append(
                {
                    "name": "pods/eviction",
                    "singularName": "",
                    "namespaced": True,
                    "group": "policy",
                    "version": "v1",
                    "kind": "Eviction",
                    "verbs": ["create"],
                }
            )
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
