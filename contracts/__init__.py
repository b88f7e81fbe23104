"""The data that crosses a Temporal boundary, one module per boundary, at the bottom of the
import graph (above only `placement` and `webhooks`).

Each module holds one workflow's (or the ledger's) input, result, queries, updates and
signals, with their names, so a caller (the API, the command line, another workflow, an
activity) imports the contract and never the workflow. `common` holds what every boundary
shares: the task queue, the search attributes, the activity timeouts; `vm` the one VM shape,
the VM spec a provisioner builds and the facts it reports.
"""
