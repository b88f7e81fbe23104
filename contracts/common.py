"""What every boundary shares: the task queue and the search attributes."""

from temporalio.common import SearchAttributeKey

TASK_QUEUE = "virtflow"

CLUSTER = SearchAttributeKey.for_keyword("VirtflowCluster")
POOL = SearchAttributeKey.for_keyword("VirtflowPool")
HOST = SearchAttributeKey.for_keyword("VirtflowHost")
PHASE = SearchAttributeKey.for_keyword("VirtflowPhase")

SEARCH_ATTRIBUTES = (CLUSTER, POOL, HOST, PHASE)
# The pool a request that names none shows in search.
ANY_POOL = "any"
