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
  workflow task. Pinned between hand-overs, it never replays on code it did not start on.

The behaviour is the worker's default, not each decorator's `versioning_behavior`: the server
refuses a behaviour from an unversioned worker, which the lab and the tests run.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
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
