"""Names shared by the workflows, the worker and the API: defined once, here."""

from temporalio.common import SearchAttributeKey

TASK_QUEUE = "virtflow"

PREPARE_SPARE = "PrepareSpare"
RELEASE_SPARE = "ReleaseSpare"
INVENTORY_LEDGER = "InventoryLedger"
RECONCILE_SPARES = "ReconcileSpares"
# The Temporal Schedule that runs ReconcileSpares (worker/schedules.py).
RECONCILE_SCHEDULE_ID = "virtflow-reconcile-spares"
SCHEDULE_HOST = "ScheduleHost"
# Signal from a replacement spare, once Ready, to the unhealthy spare it replaces.
REPLACEMENT_READY_SIGNAL = "replacement_ready"

CLUSTER = SearchAttributeKey.for_keyword("VirtflowCluster")
POOL = SearchAttributeKey.for_keyword("VirtflowPool")
HOST = SearchAttributeKey.for_keyword("VirtflowHost")
PHASE = SearchAttributeKey.for_keyword("VirtflowPhase")

SEARCH_ATTRIBUTES = (CLUSTER, POOL, HOST, PHASE)
# The pool a request that names none shows in search.
ANY_POOL = "any"


def spare_workflow_id(cluster: str, request_id: str) -> str:
    """Derived from the request so a repeated POST or CLI start finds the same spare."""
    return f"spare-{cluster}-{request_id}"


def ledger_workflow_id(inventory: str) -> str:
    return f"ledger-{inventory}"


def release_workflow_id(spare_id: str) -> str:
    return f"release-{spare_id}"


def schedule_workflow_id(task_id: str) -> str:
    """A placement-only task of the original scheduler's API (`POST /schedule`)."""
    return f"schedule-{task_id}"
