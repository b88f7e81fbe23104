"""Everything that crosses a Temporal boundary, and its name, at the bottom of the import
graph (above only `placement` and `webhooks`).

The rule: every input and result of a workflow, an activity, an Update, a query or a signal,
and the names under which they are registered, live here, one module per boundary; nothing
that crosses a boundary is defined beside the code that takes it. A caller (the API, the
command line, a workflow, an activity) imports the contract, never the workflow or the
activity class it calls, and a workflow's history decodes with this package alone. HTTP
bodies are not Temporal boundaries: they stay with their routers in `api/`.

Workflows: `spare` (PrepareSpare), `release` (ReleaseSpare), `ledger` (InventoryLedger, and
the activities that reach it), `warm` (WarmPool, the warm claim and hand-over),
`schedule_host` (ScheduleHost), `reconcile` (ReconcileSpares, CompensateSpare, the sweep's
activities). Activities: `vm` (provisioning: the VM spec and facts), `kubernetes` (Ready wait,
adoption, health watch), `drain` (drain policy and outcome), `placement` (the placement
activity), `notify` (webhook and event-bus delivery), `spare_ids`, `hosts`. Shared: `common`
(task queue, search attributes), `timeouts` (activity timeouts), `metrics` (metric names),
`failures` (every failure type raised, and whether it is retried).
"""
