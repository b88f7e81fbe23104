"""Temporal workflows and the deterministic helpers they are made of.

A module with a `@workflow.defn` class runs in the sandbox, which re-imports it for each
workflow. Every other module here is plain deterministic code with no module state, imported
once and passed through the sandbox: it is listed in `SANDBOX_PASSTHROUGH` (worker/worker.py),
and a new one joins that list.
"""
