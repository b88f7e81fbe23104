"""The resource types the lab Kubernetes API serves: one table that the store, the routes and
discovery all read, so what discovery advertises is exactly what the paths answer.

Reviews (SelfSubjectReview, SelfSubjectAccessReview, SelfSubjectRulesReview) are advertised
with the one verb
they have, `create`, and answered by lab/kube_access.py instead of being stored."""

from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class ResourceType:
    plural: str
    kind: str
    group: str  # "" is the core group, served under /api/v1
    version: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    has_status: bool = True
    verbs: tuple[str, ...] = ALL_VERBS

    @property
    def stored(self) -> bool:
        """Reviews are answered, not kept: the store has no room for them."""
        return self.verbs != CREATE_ONLY

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


RESOURCES: tuple[ResourceType, ...] = (
    ResourceType("namespaces", "Namespace", "", "v1", False, ("ns",)),
    ResourceType("nodes", "Node", "", "v1", False, ("no",)),
    ResourceType("pods", "Pod", "", "v1", True, ("po",)),
    ResourceType("events", "Event", "", "v1", True, ("ev",), has_status=False),
    ResourceType("secrets", "Secret", "", "v1", True, has_status=False),
    # kubectl cluster-info lists kube-system's Services labelled kubernetes.io/cluster-service.
    ResourceType("services", "Service", "", "v1", True, ("svc",)),
    ResourceType("daemonsets", "DaemonSet", "apps", "v1", True, ("ds",)),
    ResourceType("replicasets", "ReplicaSet", "apps", "v1", True, ("rs",)),
    ResourceType("leases", "Lease", "coordination.k8s.io", "v1", True, has_status=False),
    ResourceType("poddisruptionbudgets", "PodDisruptionBudget", "policy", "v1", True, ("pdb",)),
    ResourceType(
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        "authorization.k8s.io",
        "v1",
        False,
        has_status=False,
        verbs=CREATE_ONLY,
    ),
    ResourceType(
        "selfsubjectreviews",
        "SelfSubjectReview",
        "authentication.k8s.io",
        "v1",
        False,
        has_status=False,
        verbs=CREATE_ONLY,
    ),
    ResourceType(
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        "authorization.k8s.io",
        "v1",
        False,
        has_status=False,
        verbs=CREATE_ONLY,
    ),
)
BY_PLURAL: dict[str, ResourceType] = {r.plural: r for r in RESOURCES if r.stored}
# Group -> version, in the order discovery lists them.
GROUPS: dict[str, str] = {r.group: r.version for r in RESOURCES if r.group}


def resolve(group: str, version: str, plural: str) -> ResourceType | None:
    """The stored type served at this path, or None (the API answers 404)."""
    found = BY_PLURAL.get(plural)
    if found is None or (found.group, found.version) != (group, version):
        return None
    return found
