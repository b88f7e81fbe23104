"""One spare per id: a spare's workflow id must never have run before.

The API starts spares with id reuse policy REJECT_DUPLICATE, but `temporal workflow start`
allows a duplicate by default: after a spare ended, the same id would start a second spare
(a second VM) for a request that was already served. A workflow started without virtflow's
memo (MEMO_REQUEST_HASH: so not through the API or `virtflow prepare`) asks this activity
first and refuses to run when an earlier run of its id exists; one started with it needs no
visibility query, the server refused the duplicate already.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client

from contracts.spare_ids import EarlierRunInput, EarlierRunResult


class SpareIdActivities:
    def __init__(self, client: Client) -> None:
        self._client = client

    @activity.defn
    async def earlier_run(self, inp: EarlierRunInput) -> EarlierRunResult:
        # Visibility lists every run of the id; an earlier one has closed, so it is listed.
        query = f"WorkflowId = '{inp.workflow_id}'"
        first = None
        async for run in self._client.list_workflows(query):
            if run.run_id != inp.run_id and (first is None or run.start_time < first.start_time):
                first = run
        if first is None:
            return EarlierRunResult()
        status = first.status.name.lower() if first.status else "running"
        return EarlierRunResult(run_id=first.run_id, status=status)
