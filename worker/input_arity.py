"""A workflow started with the wrong number of inputs fails at once, saying so.

`temporal workflow start` without `--input`, or with two, hands `run()` the wrong number of
arguments. Python's TypeError would fail the workflow *task*, which Temporal retries forever:
the spare would hang, unanswerable. This interceptor checks the count against `run()`'s
signature first and fails the *workflow* with a non-retryable, readable error instead.
"""

from __future__ import annotations

import inspect
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from contracts.failures import Failure

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def accepted_inputs(run_fn: Any) -> tuple[int, int | None, list[str]]:
    """(fewest, most or None for any, parameter names) that `run_fn` accepts."""
    parameters = list(inspect.signature(run_fn).parameters.values())
    if parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    positional = [p for p in parameters if p.kind in _POSITIONAL]
    required = sum(p.default is inspect.Parameter.empty for p in positional)
    unbounded = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)
    return required, None if unbounded else len(positional), [p.name for p in positional]


def _count(n: int) -> str:
    return {0: "no input", 1: "one input"}.get(n, f"{n} inputs")


class _CheckInputCount(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        fewest, most, names = accepted_inputs(input.run_fn)
        given = len(input.args)
        if given < fewest or (most is not None and given > most):
            wanted = _count(fewest) if fewest == most else f"{fewest} to {most} inputs"
            raise ApplicationError(
                f"{workflow.info().workflow_type} takes {wanted} ({', '.join(names)}, each one "
                f"JSON document: temporal workflow start --input '{{...}}'); it was started "
                f"with {_count(given)}",
                type=Failure.INVALID_INPUT,
                non_retryable=True,
            )
        return await super().execute_workflow(input)


class InputArityCheck(Interceptor):
    """Worker interceptor: wrong input counts fail the workflow, never loop its task."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        return _CheckInputCount
