"""Who called the lab Kubernetes API and what they may do, answered as kube-apiserver would
through SelfSubjectReview, SelfSubjectAccessReview and SelfSubjectRulesReview (what
`kubectl auth whoami`, `kubectl auth can-i` and `kubectl auth can-i --list` send).

The lab knows two identities: the kubeconfig's user, the lab's cluster-admin (every verb on
every resource and path), and a bootstrap token's (`system:bootstrappers`), which may touch
Nodes only, the same paths lab/kube_auth.py lets it reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lab.kube_resources import ALL_VERBS
from lab.kube_store import Obj

AUTHORIZATION = "authorization.k8s.io/v1"
# Paths anyone may GET, signed in or not (system:public-info-viewer on a real cluster).
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version"})
AUTHENTICATION = "authentication.k8s.io/v1"
REVIEW_PATHS = (
    f"/apis/{AUTHENTICATION}/selfsubjectreviews",
    f"/apis/{AUTHORIZATION}/selfsubjectaccessreviews",
    f"/apis/{AUTHORIZATION}/selfsubjectrulesreviews",
)
# Reviews are open to every authenticated user (the system:basic-user role of a real cluster).
_REVIEW_RULE = {
    "verbs": ["create"],
    "apiGroups": ["authorization.k8s.io"],
    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
}


@dataclass(frozen=True)
class Identity:
    username: str
    groups: tuple[str, ...]
    admin: bool

    def may(self, attributes: dict[str, Any]) -> tuple[bool, str]:
        """(allowed, reason) for one SelfSubjectAccessReview's resource or path attributes."""
        if self.admin:
            return True, "lab: the kubeconfig's user is the lab's cluster-admin"
        if (
            attributes.get("group", "") == ""
            and attributes.get("resource") == "nodes"
            and attributes.get("verb") in (*ALL_VERBS, "*")
        ):
            return True, "lab: a bootstrap token may register and report its Node"
        if attributes.get("resource") in _REVIEW_RULE["resources"]:
            return attributes.get("verb") == "create", ""
        if attributes.get("path") in PUBLIC_PATHS:
            return attributes.get("verb") == "get", ""
        return False, ""

    def rules(self) -> Obj:
        """The status of a SelfSubjectRulesReview: what this identity may do."""
        if self.admin:
            return {
                "resourceRules": [
                    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                ],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": False,
            }
        nodes = {"verbs": list(ALL_VERBS), "apiGroups": [""], "resources": ["nodes"]}
        return {
            "resourceRules": [nodes, _REVIEW_RULE],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": sorted(PUBLIC_PATHS)}],
            "incomplete": False,
        }


CLUSTER_ADMIN = Identity("virtflow-lab-admin", ("system:masters", "system:authenticated"), True)


def bootstrap_identity(token_id: str) -> Identity:
    groups = (
        "system:bootstrappers",
        "system:bootstrappers:kubeadm:default-node-token",
        "system:authenticated",
    )
    return Identity(f"system:bootstrap:{token_id}", groups, False)


def review(kind: str, body: Any, identity: Identity) -> Obj:
    """The answered review: the spec as sent, and a status from the identity's role."""
    spec = body.get("spec") if isinstance(body, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    if kind == "selfsubjectreviews":
        user = {"username": identity.username, "groups": list(identity.groups)}
        answer = _answer("SelfSubjectReview", spec, {"userInfo": user}, AUTHENTICATION)
        del answer["spec"]  # a SelfSubjectReview has none
        return answer
    if kind == "selfsubjectrulesreviews":
        return _answer("SelfSubjectRulesReview", spec, identity.rules())
    attributes = spec.get("resourceAttributes") or spec.get("nonResourceAttributes") or {}
    allowed, reason = identity.may(attributes if isinstance(attributes, dict) else {})
    status: Obj = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return _answer("SelfSubjectAccessReview", spec, status)


def _answer(kind: str, spec: Obj, status: Obj, api_version: str = AUTHORIZATION) -> Obj:
    return {
        "kind": kind,
        "apiVersion": api_version,
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": status,
    }
