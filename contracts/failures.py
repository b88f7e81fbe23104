"""The workflow side's failure types: the `type` of every ApplicationError virtflow raises, and
whether Temporal tries the call again, as `api/errors.Code` is the HTTP side's catalogue.

A type is stable once published: the API maps some to answers (SpareIdUsed), receivers read
the failed spare's type, operators filter on it. A type is either always retried or never:
raised `non_retryable` when asking again would meet the same answer (a person or the request
must change something first), retryable when the cause may pass (a source that did not answer,
a worker that stops). Every raise names its type here, with `non_retryable=not f.retried`;
tests/contracts/test_failures.py holds the code to this table.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Failure(StrEnum):
    """Stable failure types: once published, a type keeps its meaning."""

    # A spare's own end (PrepareSpare, ScheduleHost, ReleaseSpare).
    NO_CAPACITY = "NoCapacity"
    NEVER_FITS = "NeverFits"
    NOT_READY = "NotReady"
    SPARE_ID_USED = "SpareIdUsed"
    DRAIN_BLOCKED = "DrainBlocked"
    DESTROY_REFUSED = "DestroyRefused"
    STEP_FAILED = "StepFailed"
    INVALID_INPUT = "InvalidInput"
    LEDGER_INCONSISTENT = "LedgerInconsistent"
    # Configuration: names and files a person fixes.
    UNKNOWN_INVENTORY = "UnknownInventory"
    INVENTORY_INVALID = "InventoryInvalid"
    INVENTORY_MISCONFIGURED = "InventoryMisconfigured"
    UNKNOWN_RECEIVER = "UnknownReceiver"
    UNKNOWN_CLUSTER = "UnknownCluster"
    NOT_ALLOWED_FOR_CLUSTER = "NotAllowedForCluster"
    UNKNOWN_VM_TEMPLATE = "UnknownVmTemplate"
    VM_TEMPLATE_INVALID = "VmTemplateInvalid"
    PLACEMENT_INPUT_INVALID = "PlacementInputInvalid"
    KUBERNETES_CONFIG_ERROR = "KubernetesConfigError"
    KUBECONFIG_SECRET_UNREADABLE = "KubeconfigSecretUnreadable"
    EVENT_BUS_NOT_CONFIGURED = "EventBusNotConfigured"
    # The outside world's answers.
    PROVISIONING_FAILED = "ProvisioningFailed"
    PROVISIONING_TRANSIENT = "ProvisioningTransient"
    INVENTORY_UNAVAILABLE = "InventoryUnavailable"
    KUBERNETES_UNAUTHORIZED = "KubernetesUnauthorized"
    KUBERNETES_CREDENTIALS_ROTATED = "KubernetesCredentialsRotated"
    KUBERNETES_DECODE_ERROR = "KubernetesDecodeError"
    TOKEN_TAKEN = "TokenTaken"
    WEBHOOK_REJECTED = "WebhookRejected"
    WEBHOOK_UNREACHABLE = "WebhookUnreachable"
    WEBHOOK_RECEIVER_UNAVAILABLE = "WebhookReceiverUnavailable"
    EVENT_BUS_UNAVAILABLE = "EventBusUnavailable"
    WORKER_STOPPING = "WorkerStopping"

    @property
    def retried(self) -> bool:
        """Whether Temporal tries the call again after this failure."""
        return RETRY[self].retried


class Retry(NamedTuple):
    retried: bool
    why: str


NEVER, AGAIN = False, True

RETRY: dict[Failure, Retry] = {
    Failure.NO_CAPACITY: Retry(NEVER, "no room is the ledger's answer, not a fault"),
    Failure.NEVER_FITS: Retry(NEVER, "no host of the inventory could ever hold the request"),
    Failure.NOT_READY: Retry(NEVER, "the Node's deadline passed; a new spare is a new request"),
    Failure.SPARE_ID_USED: Retry(NEVER, "a request_id names one spare, ever"),
    Failure.DRAIN_BLOCKED: Retry(NEVER, "the drain policy stops here for a person to look"),
    Failure.DESTROY_REFUSED: Retry(NEVER, "the release tried its bounded number of times"),
    Failure.STEP_FAILED: Retry(NEVER, "a step failed for good; the spare was compensated"),
    Failure.INVALID_INPUT: Retry(NEVER, "the same input fails the same way"),
    Failure.LEDGER_INCONSISTENT: Retry(AGAIN, "the ledger's next turn may have the answer"),
    Failure.UNKNOWN_INVENTORY: Retry(NEVER, "the worker's settings name no such inventory"),
    Failure.INVENTORY_INVALID: Retry(NEVER, "the inventory document must be fixed"),
    Failure.INVENTORY_MISCONFIGURED: Retry(NEVER, "the inventory's settings must be fixed"),
    Failure.UNKNOWN_RECEIVER: Retry(NEVER, "the worker's settings name no such receiver"),
    Failure.UNKNOWN_CLUSTER: Retry(NEVER, "no cluster of that name is registered"),
    Failure.NOT_ALLOWED_FOR_CLUSTER: Retry(NEVER, "the cluster may not use what was asked"),
    Failure.UNKNOWN_VM_TEMPLATE: Retry(NEVER, "the worker's settings name no such template"),
    Failure.VM_TEMPLATE_INVALID: Retry(NEVER, "the template's settings must be fixed"),
    Failure.PLACEMENT_INPUT_INVALID: Retry(NEVER, "the same batch is inconsistent again"),
    Failure.KUBERNETES_CONFIG_ERROR: Retry(NEVER, "the kubeconfig must be fixed"),
    Failure.KUBECONFIG_SECRET_UNREADABLE: Retry(NEVER, "the Secret or its access must be fixed"),
    Failure.EVENT_BUS_NOT_CONFIGURED: Retry(NEVER, "this worker has no bus to publish to"),
    Failure.PROVISIONING_FAILED: Retry(NEVER, "the hypervisor refused for a reason it reports"),
    Failure.PROVISIONING_TRANSIENT: Retry(AGAIN, "the hypervisor may answer next time"),
    Failure.INVENTORY_UNAVAILABLE: Retry(AGAIN, "the inventory source may answer next time"),
    Failure.KUBERNETES_UNAUTHORIZED: Retry(NEVER, "a 4xx the caller cannot fix by asking again"),
    Failure.KUBERNETES_CREDENTIALS_ROTATED: Retry(
        AGAIN, "refused old credentials: the next call uses the kubeconfig as it is now"
    ),
    Failure.KUBERNETES_DECODE_ERROR: Retry(NEVER, "the API server's answer will not parse again"),
    Failure.TOKEN_TAKEN: Retry(NEVER, "another spare holds the join token"),
    Failure.WEBHOOK_REJECTED: Retry(NEVER, "a receiver that refused the event (4xx) refuses it"),
    Failure.WEBHOOK_UNREACHABLE: Retry(AGAIN, "the receiver may be reachable next time"),
    Failure.WEBHOOK_RECEIVER_UNAVAILABLE: Retry(AGAIN, "a 5xx or 429 may pass"),
    Failure.EVENT_BUS_UNAVAILABLE: Retry(AGAIN, "the bus may answer next time"),
    Failure.WORKER_STOPPING: Retry(AGAIN, "another worker takes the activity up"),
}


def kubernetes_refusal(reason: str | int) -> str:
    """The type of a Kubernetes API 4xx the caller cannot fix by asking again (never retried):
    `Kubernetes<reason>` (`KubernetesForbidden`, `KubernetesInvalid`, or the code)."""
    return f"Kubernetes{reason}"
