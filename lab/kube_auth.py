"""Who may call the lab Kubernetes API: the one place every request is authenticated.

The kubeconfig's bearer token opens everything; a bootstrap token (lab/kube_bootstrap.py)
only Nodes, where a joining machine registers and reports itself. Health endpoints need none,
as on a real API server (anonymous access to /healthz, /livez, /readyz).
"""

from __future__ import annotations

import hmac

from lab.kube_bootstrap import BOOTSTRAP_PATHS, bootstrap_token_valid
from lab.kube_store import KubeStore

PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz"})


class Authenticator:
    def __init__(self, token: str, store: KubeStore) -> None:
        self.token = token
        self.store = store

    def authenticated(self, path: str, authorization: str | None) -> bool:
        """True when the request may proceed; False answers 401 Unauthorized."""
        if path in PUBLIC_PATHS:
            return True
        scheme, _, credential = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not credential:
            return False
        if hmac.compare_digest(credential.encode(), self.token.encode()):
            return True
        return path.startswith(BOOTSTRAP_PATHS) and bootstrap_token_valid(self.store, credential)
