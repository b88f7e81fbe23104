"""A workload cluster's kubeconfig, read from Cluster API's Secret in the seed cluster.

Cluster API keeps each workload cluster's kubeconfig in the Secret `<cluster>-kubeconfig`, key
`value`, in the Cluster's namespace of the management (seed) cluster. This is virtflow's only
call to the seed: one `get` by name, so the seed's RBAC grants exactly those Secrets
(`resourceNames`, deploy/kubernetes/overlays/seed) and never a list of them.
"""

from __future__ import annotations

import base64

from lightkube import ApiError, AsyncClient
from lightkube.resources.core_v1 import Secret
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure

KUBECONFIG_SECRET_SUFFIX = "-kubeconfig"
KUBECONFIG_SECRET_KEY = "value"


def kubeconfig_secret_name(cluster: str) -> str:
    return f"{cluster}{KUBECONFIG_SECRET_SUFFIX}"


async def read_kubeconfig_secret(seed: AsyncClient, cluster: str, namespace: str) -> str:
    """The kubeconfig text; a Secret that is missing, not ours to read or without `value` is
    an operator's fix, never a retry's (non-retryable `KubeconfigSecretUnreadable`)."""
    name = kubeconfig_secret_name(cluster)
    try:
        secret = await seed.get(Secret, name, namespace=namespace)
    except ApiError as exc:
        if exc.status.code in (401, 403, 404):
            raise ApplicationError(
                f"cannot read Secret {namespace}/{name}, cluster {cluster}'s kubeconfig: "
                f"{exc.status.message}",
                type=Failure.KUBECONFIG_SECRET_UNREADABLE,
                non_retryable=True,
            ) from exc
        raise
    data = secret.data or {}
    if KUBECONFIG_SECRET_KEY not in data:
        raise ApplicationError(
            f"Secret {namespace}/{name} has no key '{KUBECONFIG_SECRET_KEY}'",
            type=Failure.KUBECONFIG_SECRET_UNREADABLE,
            non_retryable=True,
        )
    return base64.b64decode(data[KUBECONFIG_SECRET_KEY]).decode()
