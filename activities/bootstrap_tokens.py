"""Bootstrap tokens: the short-lived credential a new VM joins the cluster with, as kubeadm's.

`kubeadm token create` writes a Secret `bootstrap-token-<id>` of type
`bootstrap.kubernetes.io/token` in kube-system; the token is `<id>.<secret>`, the API server
accepts it until `expiration`. virtflow makes one per spare, labelled with the spare's id,
renders it into the spare's user data and deletes it once the Node is Ready or the spare is
released. The token lives only inside the activity that made it: never in workflow inputs,
results, history or logs.
"""

from __future__ import annotations

import secrets
import string
from datetime import UTC, datetime, timedelta

from lightkube import AsyncClient
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Secret

NAMESPACE = "kube-system"
SECRET_TYPE = "bootstrap.kubernetes.io/token"
SPARE_ID_LABEL = "virtflow.io/spare-id"
# kubeadm's group for tokens that join nodes.
EXTRA_GROUPS = "system:bootstrappers:kubeadm:default-node-token"
_ALPHABET = string.ascii_lowercase + string.digits


def secret_name(token_id: str) -> str:
    return f"bootstrap-token-{token_id}"


def new_token() -> tuple[str, str]:
    """(token id, token secret): 6 and 16 of [a-z0-9], as the API server requires."""
    pick = secrets.choice
    return "".join(pick(_ALPHABET) for _ in range(6)), "".join(pick(_ALPHABET) for _ in range(16))


def token_secret(token_id: str, token_secret: str, spare_id: str, ttl: timedelta) -> Secret:
    expires = (datetime.now(UTC) + ttl).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Secret(
        metadata=ObjectMeta(
            name=secret_name(token_id), namespace=NAMESPACE, labels={SPARE_ID_LABEL: spare_id}
        ),
        type=SECRET_TYPE,
        stringData={
            "description": f"virtflow: joins spare {spare_id}",
            "token-id": token_id,
            "token-secret": token_secret,
            "expiration": expires,
            "usage-bootstrap-authentication": "true",
            "usage-bootstrap-signing": "true",
            "auth-extra-groups": EXTRA_GROUPS,
        },
    )


async def create_token(kube: AsyncClient, spare_id: str, ttl: timedelta) -> str:
    """A new token for this spare (`<id>.<secret>`); earlier ones stay until deleted."""
    token_id, secret = new_token()
    await kube.create(token_secret(token_id, secret, spare_id, ttl))
    return f"{token_id}.{secret}"


async def delete_tokens(kube: AsyncClient, spare_id: str) -> int:
    """Delete every token made for this spare; how many there were."""
    found = [
        s
        async for s in kube.list(Secret, namespace=NAMESPACE, labels={SPARE_ID_LABEL: spare_id})
        if s.type == SECRET_TYPE and s.metadata is not None and s.metadata.name
    ]
    for item in found:
        assert item.metadata is not None and item.metadata.name is not None
        await kube.delete(Secret, item.metadata.name, namespace=NAMESPACE)
    return len(found)
