"""Bootstrap-token authentication in the lab Kubernetes API, as kube-apiserver's.

A bearer token `<id>.<secret>` is accepted while the Secret `bootstrap-token-<id>` in
kube-system, of type `bootstrap.kubernetes.io/token`, holds that secret, allows
authentication and has not expired. The group it grants
(`system:bootstrappers:...`) may register and report its own Node, nothing else: a joining
guest in the lab does with it what a kubelet's TLS bootstrap ends up doing.
"""

from __future__ import annotations

import base64
import hmac
import re
from datetime import UTC, datetime
from typing import Any

from lab.kube_store import KubeStore

NAMESPACE = "kube-system"
SECRET_TYPE = "bootstrap.kubernetes.io/token"
_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
# What a bootstrap token may touch: Nodes (registration and status). Elsewhere it is no
# credential at all (401).
BOOTSTRAP_PATHS = "/api/v1/nodes"


def _fields(secret: dict[str, Any]) -> dict[str, str]:
    """`data` (base64, as stored) with `stringData` (as written) on top."""
    fields: dict[str, str] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            fields[key] = base64.b64decode(value).decode()
        except (ValueError, TypeError):
            continue
    fields.update({k: str(v) for k, v in (secret.get("stringData") or {}).items()})
    return fields


def _expired(expiration: str | None, now: datetime) -> bool:
    if not expiration:
        return False
    try:
        return datetime.fromisoformat(expiration.replace("Z", "+00:00")) <= now
    except ValueError:
        return True  # unreadable: not trusted


def bootstrap_token_valid(store: KubeStore, credential: str, now: datetime | None = None) -> bool:
    found = _TOKEN.match(credential)
    if found is None:
        return False
    token_id, token_secret = found.groups()
    secret = store.get("secrets", NAMESPACE, f"bootstrap-token-{token_id}")
    if secret is None or secret.get("type") != SECRET_TYPE:
        return False
    fields = _fields(secret)
    return (
        hmac.compare_digest(fields.get("token-secret", "").encode(), token_secret.encode())
        and fields.get("usage-bootstrap-authentication") == "true"
        and not _expired(fields.get("expiration"), now or datetime.now(UTC))
    )
