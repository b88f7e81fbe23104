"""Who may call the lab Kubernetes API: the one place every request is authenticated.

The kubeconfig's bearer token opens everything; a bootstrap token (lab/kube_bootstrap.py)
only Nodes, where a joining machine registers and reports itself, and the reviews that ask
what it may do. Health endpoints and /version need none, as on a real API server.
"""

from __future__ import annotations

import hmac

from lab.kube_access import CLUSTER_ADMIN, PUBLIC_PATHS, REVIEW_PATHS, Identity, bootstrap_identity
from lab.kube_bootstrap import BOOTSTRAP_PATHS, bootstrap_token_valid
from lab.kube_store import KubeStore


class Authenticator:
    def __init__(self, token: str, store: KubeStore) -> None:
        self.token = token
        self.store = store

    def authenticated(self, path: str, authorization: str | None) -> bool:
        """True when the request may proceed; False answers 401 Unauthorized."""
        if path in PUBLIC_PATHS:
            return True
        identity = self.identify(authorization)
        if identity is None:
            return False
        return identity.admin or path.startswith((BOOTSTRAP_PATHS, *REVIEW_PATHS))

    def identify(self, authorization: str | None) -> Identity | None:
        """The caller behind a bearer token, or None when the token is no credential."""
        scheme, _, credential = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not credential:
            return None
        if hmac.compare_digest(credential.encode(), self.token.encode()):
            return CLUSTER_ADMIN
        if bootstrap_token_valid(self.store, credential):
            return bootstrap_identity(credential.partition(".")[0])
        return None
