"""Worker Versioning: the worker as one version (deployment name + build id) of a Worker
Deployment, and each workflow type's behaviour when a new version becomes current.

Every workflow type is PINNED: it runs to its end on the build it started on.
- PrepareSpare holds for hours, and its release runs as its child (a child of a pinned parent
  on the same task queue starts on the parent's version), so a spare is created, held and
  released by one build, and a new build's workflow code needs no patch to stay compatible.
- ReleaseSpare, ScheduleHost and ReconcileSpares are short: pinned, they finish where they
  began; the schedule starts each new sweep on the then current version.
- InventoryLedger and WarmPool never end. Each continues-as-new with `initial_versioning_behavior
  =AUTO_UPGRADE` (upgrade on continue-as-new), and does so as soon as the target version
  changes, not only when its history grows, so a new build takes it over at its next
  workflow task. Pinned between two continue-as-new, it never replays on code it did not start on.

The behaviour is the worker's default, not each decorator's `versioning_behavior`: the server
refuses a behaviour from an unversioned worker, which the lab and the tests run.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from temporalio.api.workflowservice.v1 import DescribeWorkerDeploymentRequest
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import WorkerDeploymentConfig

from runtime.settings import Settings


def build_id(settings: Settings) -> str:
    """The explicit build id (the image tag), else the installed package's version."""
    if settings.worker_build_id:
        return settings.worker_build_id
    try:
        return version("virtflow")
    except PackageNotFoundError:
        raise ValueError("set worker_build_id: virtflow is not installed as a package") from None


def deployment_version(settings: Settings) -> WorkerDeploymentVersion:
    return WorkerDeploymentVersion(
        deployment_name=settings.worker_deployment_name, build_id=build_id(settings)
    )


def deployment_config(settings: Settings) -> WorkerDeploymentConfig | None:
    """The worker's deployment options; none (an unversioned worker) unless turned on."""
    if not settings.worker_versioning:
        return None
    return WorkerDeploymentConfig(
        version=deployment_version(settings),
        use_worker_versioning=True,
        default_versioning_behavior=VersioningBehavior.PINNED,
    )


async def routing_problem(client: Client, settings: Settings) -> str | None:
    """Why no new workflow reaches any build of this worker's deployment, or None.

    A versioned worker polls only for its version's tasks, and until some version is made
    current the server queues new workflows as unversioned tasks, which no worker takes: a
    site's first deploy polls, yet no spare moves. `/readyz` says so, with the command to run.
    """
    if not settings.worker_versioning:
        return None
    name = settings.worker_deployment_name
    try:
        answer = await client.workflow_service.describe_worker_deployment(
            DescribeWorkerDeploymentRequest(namespace=client.namespace, deployment_name=name)
        )
        current = answer.worker_deployment_info.routing_config.current_deployment_version
    except RPCError as err:
        # Not yet created: the server creates it when the first version's pollers arrive.
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        current = None
    if current is not None and current.build_id:
        return None
    return (
        f"worker deployment {name} has no current version: new workflows wait for an "
        f"unversioned worker; make a build current with `temporal worker deployment "
        f"set-current-version --deployment-name {name} --build-id {build_id(settings)} --yes`"
    )
