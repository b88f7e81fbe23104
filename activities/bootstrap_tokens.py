"""Bootstrap tokens: the short-lived credential a new VM joins the cluster with, as kubeadm's.

`kubeadm token create` writes a Secret `bootstrap-token-<id>` of type
`bootstrap.kubernetes.io/token` in kube-system; the token is `<id>.<secret>`, the API server
accepts it until `expiration`. virtflow makes one per spare, renders it into the spare's
user data and deletes it once the Node is Ready or the spare is released. The token id is
derived from the spare's id, so the Secret is found by name: the worker needs get, create
and delete on kube-system Secrets, never list (which would read every Secret there). The
Secret is also labelled with the spare's id, and only a Secret carrying this spare's label is
replaced or deleted. The token lives only inside the activity that made it: never in
workflow inputs, results, history or logs.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from datetime import UTC, datetime, timedelta

from lightkube import ApiError, AsyncClient
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Secret

NAMESPACE = "kube-system"
SECRET_TYPE = "bootstrap.kubernetes.io/token"
SPARE_ID_LABEL = "virtflow.io/spare-id"
# kubeadm's group for tokens that join nodes.
EXTRA_GROUPS = "system:bootstrappers:kubeadm:default-node-token"
_ALPHABET = string.ascii_lowercase + string.digits


class TokenTaken(Exception):
    """The Secret this spare's token id names belongs to another spare."""


def secret_name(token_id: str) -> str:
    return f"bootstrap-token-{token_id}"


def token_id_for(spare_id: str) -> str:
    """The spare's token id: 6 of [a-z0-9], the first digits of a hash of its id in base 36."""
    number = int.from_bytes(hashlib.sha256(spare_id.encode()).digest()[:8], "big")
    digits = []
    for _ in range(6):
        number, digit = divmod(number, len(_ALPHABET))
        digits.append(_ALPHABET[digit])
    return "".join(digits)


def new_secret() -> str:
    """The token's secret half: 16 of [a-z0-9], as the API server requires."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(16))


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
    """A new token for this spare (`<id>.<secret>`), replacing the one an earlier attempt made."""
    token_id, secret = token_id_for(spare_id), new_secret()
    made = token_secret(token_id, secret, spare_id, ttl)
    try:
        await kube.create(made)
    except ApiError as err:
        if err.status.code != 409:
            raise
        owner = await _owner(kube, spare_id)
        if owner not in (spare_id, None):
            # Two spare ids whose hashes agree in 31 bits: never touch the other's token.
            raise TokenTaken(
                f"the bootstrap token Secret {secret_name(token_id)} belongs to spare {owner}: "
                "ask again with a new request_id"
            ) from None
        await delete_token(kube, spare_id)
        await kube.create(made)
    return f"{token_id}.{secret}"


async def delete_token(kube: AsyncClient, spare_id: str) -> bool:
    """Delete this spare's token; False when it has none (or the name is another spare's)."""
    if await _owner(kube, spare_id) != spare_id:
        return False
    try:
        await kube.delete(Secret, secret_name(token_id_for(spare_id)), namespace=NAMESPACE)
    except ApiError as err:
        if err.status.code != 404:
            raise
        return False
    return True


async def _owner(kube: AsyncClient, spare_id: str) -> str | None:
    """The spare whose label the Secret named after `spare_id`'s token carries; None if absent."""
    try:
        found = await kube.get(Secret, secret_name(token_id_for(spare_id)), namespace=NAMESPACE)
    except ApiError as err:
        if err.status.code == 404:
            return None
        raise
    labels = (found.metadata.labels if found.metadata else None) or {}
    return labels.get(SPARE_ID_LABEL, "")
