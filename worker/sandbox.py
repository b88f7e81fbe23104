"""The workflow sandbox the worker runs workflows in, without the SDK's per-payload `exec`.

temporalio (1.30 and 1.35, the newest, at least) asks a workflow's instance for the
serialization context of every payload an activation decodes and every payload a completion
encodes: three visitor passes each way, one call per payload. The sandboxed instance answers
each call by compiling a code string and running it with `exec` inside the sandbox's importer:
about 30 us a call, and the largest single item of this worker's busy CPU in a burst
(docs/BENCHMARKS.md, "Where the worker's extra CPU goes now"). The answer itself is a few
attribute reads on the in-sandbox instance (`InSandbox.get_serialization_context` and
`get_external_store_context`), which import nothing and call nothing the sandbox restricts.

So this runner keeps the SDK's sandbox as it is (same restrictions, same importer, every
activation still runs through `exec` inside it) and only answers those two calls by calling
the in-sandbox instance directly, under the same restriction context. That reaches into the
SDK's private `_Instance`, which is why it is a library shim and not plain use of the API:
when the private names are not there as this module expects, `workflow_runner` falls back
to the SDK's runner unchanged and logs why. tests/ops/test_sandbox_runner.py checks that the
shortcut is in use and answers exactly as the SDK's own path does.
"""

from __future__ import annotations

import logging
from typing import Any

from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

logger = logging.getLogger(__name__)

# The in-sandbox object the SDK's instance keeps in its globals (temporalio's _runner.py).
_IN_SANDBOX = "__temporal_in_sandbox"

try:
    from temporalio.worker.workflow_sandbox._runner import _Instance as _SdkInstance
except ImportError:  # pragma: no cover - depends on the SDK's private layout
    _SdkInstance = None  # type: ignore[assignment,misc]


def _shortcut_available() -> str | None:
    """None when the SDK's sandbox looks as this module expects; otherwise why not."""
    if _SdkInstance is None:
        return "temporalio.worker.workflow_sandbox._runner._Instance is gone"
    for name in ("get_serialization_context", "get_external_store_context"):
        if not callable(getattr(_SdkInstance, name, None)):
            return f"the SDK's sandbox instance has no {name}()"
    return None


if _SdkInstance is not None:

    class _DirectContextInstance(_SdkInstance):
        """The SDK's sandboxed instance, answering context lookups without `exec`."""

        def _ask(self, lookup: str, command_info: Any) -> Any:
            """The in-sandbox instance's answer, under the restriction context the SDK's
            `exec` path sets (its importer is not needed: the answer imports nothing)."""
            context = self.importer.restriction_context
            context.is_runtime = True
            try:
                return getattr(self.globals_and_locals[_IN_SANDBOX], lookup)(command_info)
            finally:
                context.is_runtime = False

        def get_serialization_context(self, command_info: Any) -> Any:
            return self._ask("get_serialization_context", command_info)

        def get_external_store_context(self, command_info: Any) -> Any:
            return self._ask("get_external_store_context", command_info)


class DirectContextSandboxRunner(SandboxedWorkflowRunner):
    """`SandboxedWorkflowRunner` whose instances answer serialization-context lookups directly."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        instance = super().create_instance(det)
        # The SDK builds its instance as always; the subclass adds no state and changes only
        # the two lookups, so the object takes its class when it holds what they read.
        if type(instance) is _SdkInstance and _IN_SANDBOX in instance.globals_and_locals:
            instance.__class__ = _DirectContextInstance
        return instance


def workflow_runner(passthrough: tuple[str, ...]) -> SandboxedWorkflowRunner:
    """The sandbox with `passthrough` modules imported once; the direct lookups when the
    SDK allows them, else the SDK's runner as it is."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*passthrough)
    why_not = _shortcut_available()
    if why_not is not None:
        logger.warning("workflow sandbox: using the SDK's runner unchanged (%s)", why_not)
        return SandboxedWorkflowRunner(restrictions=restrictions)
    return DirectContextSandboxRunner(restrictions=restrictions)
