"""The Temporal worker: every workflow and activity of virtflow on one task queue.

Activities get their dependencies (inventory sources, clients, secrets) here, from the
settings; workflows never see configuration, so history never holds a secret.

Integrations a site may not use (the GitLab provisioner and its python-gitlab and requests)
are imported only when configured: a worker pays neither their import time nor their memory
for a provisioner it does not run.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.runtime import Runtime
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from activities.event_bus import EventBusActivities
from activities.hosts import HostActivities
from activities.kube_clusters import ClusterClients
from activities.kubernetes import KubernetesActivities
from activities.ledger import LedgerActivities
from activities.notify import NotifyActivities
from activities.placement import PlacementActivities
from activities.provisioning import ProvisioningActivities
from activities.reconcile import ReconcileActivities
from activities.spare_ids import SpareIdActivities
from activities.vm_join import Joiner, cluster_join_endpoint
from activities.warm_pools import WarmActivities
from contracts import metrics
from hypervisors.inventory import inventory_source
from placement.policy import load_policy
from provisioners.ansible import AnsibleProvisioner
from provisioners.contract import Provisioner
from provisioners.http_api import HttpProvisioner
from runtime.http_client import HttpClient
from runtime.settings import Settings
from runtime.telemetry import process_runtime
from runtime.vm_templates import SiteTemplates
from workflows.compensate_spare import CompensateSpare
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare
from workflows.reconcile_spares import ReconcileSpares
from workflows.release_spare import ReleaseSpare
from workflows.schedule_host import ScheduleHost
from workflows.warm_pool import WarmPool

from . import sandbox
from .activity_metrics import ActivityMetrics
from .cluster_probes import cluster_probe_loop
from .health import WorkerHealth, WorkerState, serving_health
from .input_arity import InputArityCheck
from .schedules import apply_reconcile_schedule, apply_warm_pools
from .spare_census import census_loop
from .unregistered_clusters import warn_of_orphaned_spares
from .versioning import deployment_config, routing_problem

WORKFLOWS = [
    PrepareSpare,
    ReleaseSpare,
    InventoryLedger,
    ScheduleHost,
    ReconcileSpares,
    CompensateSpare,
    WarmPool,
]


def build_provisioner(settings: Settings, http: HttpClient) -> Provisioner:
    if settings.provisioner == "http":
        return HttpProvisioner(settings.hypervisor_api_url, http=http)
    if settings.provisioner == "gitlab":
        if settings.gitlab_trigger_token is None or settings.gitlab_api_token is None:
            raise ValueError(
                "provisioner gitlab needs gitlab_trigger_token and gitlab_api_token "
                "(VIRTFLOW_GITLAB_TRIGGER_TOKEN, VIRTFLOW_GITLAB_API_TOKEN)"
            )
        from provisioners.gitlab_pipeline import GitLabProvisioner

        with_user_data = [n for n, t in settings.vm_templates.items() if t.user_data_text()]
        if with_user_data and settings.gitlab_user_data_key is None:
            # Their join tokens are sealed for the runners, never sent to GitLab in the clear.
            raise ValueError(
                f"provisioner gitlab with user data (vm_templates {', '.join(with_user_data)}) "
                "needs gitlab_user_data_key (VIRTFLOW_GITLAB_USER_DATA_KEY), the Fernet key "
                "the project's runners hold too: docs/GITLAB.md"
            )
        # Every `gitlab_…` setting is one of its arguments, by the same name.
        return GitLabProvisioner(**settings.under("gitlab_"))
    if settings.ansible_inventory is not None and not settings.ansible_inventory.exists():
        # Ansible would warn and go on without it, reaching the hosts the wrong way.
        raise ValueError(
            f"ansible_inventory {settings.ansible_inventory} does not exist "
            "(VIRTFLOW_ANSIBLE_INVENTORY): write the inventory there or unset it"
        )
    return AnsibleProvisioner(
        playbook_dir=settings.playbook_dir,
        hypervisor=settings.hypervisor,
        extravars=settings.ansible_extravars,
        artifacts_root=settings.state_dir / "ansible",
        inventory=settings.ansible_inventory,
    )


def cluster_clients(settings: Settings) -> ClusterClients:
    """One client per registered cluster, each built on first use."""
    return ClusterClients.from_registry(settings.cluster_registry, settings.seed_kubeconfig)


def build_activities(
    settings: Settings,
    client: Client,
    http: HttpClient,
    closers: list[Callable[[], Awaitable[None]]] | None = None,
) -> list[Callable[..., Any]]:
    """The activity callables, each bound to the dependencies it needs; what must be closed
    once the worker has stopped is added to `closers`."""
    inventories = {
        name: inventory_source(spec, http) for name, spec in settings.inventories.items()
    }
    placement = PlacementActivities(
        inventories=inventories,
        policy=load_policy(settings.policy_path) if settings.policy_path else None,
        booking_check_seconds=settings.booking_check_seconds,
    )
    clusters = cluster_clients(settings)
    kube = KubernetesActivities(clusters, drain_policy=settings.drain_policy)
    if closers is not None:
        # Its shared Node watches and every cluster's pooled connections end with the worker.
        closers.append(kube.close)
    joiner = None
    if settings.vm_templates:
        # Spares join from the site's templates: a bootstrap token per spare, the Node adopted.
        joiner = Joiner(
            SiteTemplates(settings.vm_templates, settings.pool_templates),
            kube=kube.client,
            endpoint=lambda cluster: cluster_join_endpoint(clusters, cluster),
            clusters=clusters.names,
        )
        kube.adopter = joiner
    provisioning = ProvisioningActivities(build_provisioner(settings, http), joiner)
    bus = settings.event_bus
    notify = NotifyActivities(
        settings.receivers,
        http,
        event_bus=bus.route if bus else None,
        clusters=settings.cluster_registry,
    )
    event_bus = EventBusActivities(bus)
    ledger = LedgerActivities(client, settings.booking_lead)
    hosts = HostActivities(inventories)
    reconcile = ReconcileActivities(client, inventories)
    spare_ids = SpareIdActivities(client)
    warm = WarmActivities(
        client,
        settings.warm_pools,
        SiteTemplates(settings.vm_templates, settings.pool_templates),
        placement,
        kube,
    )
    return [
        spare_ids.earlier_run,
        placement.place_vms,
        placement.check_booked_hosts,
        placement.room_to_extend,
        ledger.reserve_capacity,
        ledger.free_capacity,
        ledger.booking_lead,
        ledger.transfer_capacity,
        ledger.change_hold,
        ledger.spare_runs,
        warm.warm_candidates,
        warm.claim_warm_spare,
        warm.fit_warm_hosts,
        warm.hand_over_spare,
        warm.give_way,
        warm.mark_warm_node,
        warm.claim_warm_node,
        provisioning.create_vm,
        provisioning.destroy_vm,
        provisioning.describe_vm,
        kube.check_node_ready,
        kube.wait_node_ready,
        kube.cordon_node,
        kube.drain_node,
        kube.delete_node,
        kube.list_spare_nodes,
        kube.watch_node_health,
        kube.count_unhealthy_spares,
        notify.plan_notifications,
        notify.deliver_webhook,
        event_bus.publish_event,
        hosts.host_address,
        reconcile.find_orphans,
        reconcile.find_terminated,
        reconcile.find_stale_reservations,
    ]


# Imported once rather than once per workflow instance: the sandbox otherwise rebuilds every
# pydantic class and function of these modules for each workflow it runs. Only data models,
# constants and stateless deterministic helpers belong here; a workflow's own module must not.
SANDBOX_PASSTHROUGH = (
    "contracts",
    "workflows.booked_hosts",
    "workflows.booking",
    "workflows.capacity",
    "workflows.event_shapes",
    "workflows.held_spare",
    "workflows.hold",
    "workflows.ledger_calls",
    "workflows.lookups",
    "workflows.notifier",
    "workflows.progress",
    "workflows.readiness",
    "workflows.rehearsal",
    "workflows.side_effects",
    "workflows.spare_ids",
    "workflows.spare_release",
    "workflows.step_failure",
    "workflows.vm_create",
    "workflows.warm_claim",
)


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandbox the worker runs workflows in; replay tests replay in the same one."""
    return sandbox.workflow_runner(SANDBOX_PASSTHROUGH)


# The SDK warns when a cancel reaches the worker after the activity ended: a held spare's
# watch ends by itself once the release cordons its Node, while the spare's cancel of it
# travels with the watch's last heartbeat. Nothing is left to cancel, and nothing is wrong.
_CANCEL_AFTER_THE_END = r"Cannot find activity to cancel"


def quiet_benign_sdk_warnings() -> None:
    """Silence the one SDK warning that normal operation raises (above), and only it."""
    warnings.filterwarnings(
        "ignore", message=_CANCEL_AFTER_THE_END, module=r"temporalio\.worker\._activity"
    )


def build_worker(
    settings: Settings,
    client: Client,
    http: HttpClient,
    task_queue: str | None = None,
    extra_workflows: Sequence[type] = (),
    extra_activities: Sequence[Callable[..., Any]] = (),
    closers: list[Callable[[], Awaitable[None]]] | None = None,
) -> Worker:
    quiet_benign_sdk_warnings()
    return Worker(
        client,
        task_queue=task_queue or settings.task_queue,
        workflows=[*WORKFLOWS, *extra_workflows],
        activities=[*build_activities(settings, client, http, closers), *extra_activities],
        interceptors=[ActivityMetrics(), InputArityCheck()],
        workflow_runner=workflow_runner(),
        max_concurrent_activities=settings.max_concurrent_activities,
        max_cached_workflows=settings.max_cached_workflows,
        # Leaving the worker's block stops polling at once; running activities (a playbook
        # half-way through a VM) get this long to finish before they are cancelled.
        graceful_shutdown_timeout=timedelta(seconds=settings.graceful_shutdown_seconds),
        deployment_config=deployment_config(settings),
    )


@asynccontextmanager
async def running_worker(
    settings: Settings,
    client: Client,
    task_queue: str | None = None,
    extra_workflows: Sequence[type] = (),
    extra_activities: Sequence[Callable[..., Any]] = (),
) -> AsyncIterator[Worker]:
    """The worker polls while the block runs and finishes its in-flight tasks on the way out;
    then the activities' HTTP and Kubernetes connections close. Before it polls it says which
    running spares of its task queue belong to a cluster its settings do not register."""
    await warn_of_orphaned_spares(client, settings, task_queue or settings.task_queue)
    http = HttpClient()
    metrics.declare(
        (client.service_client.config.runtime or Runtime.default()).metric_meter,
        settings.cluster_registry.names,
    )
    closers: list[Callable[[], Awaitable[None]]] = []
    try:
        worker = build_worker(
            settings, client, http, task_queue, extra_workflows, extra_activities, closers
        )
        async with worker:
            yield worker
    finally:
        for close in closers:
            await close()
        await http.aclose()


async def run_worker(settings: Settings, client: Client, stop: asyncio.Event) -> None:
    """Run until `stop` is set, then stop polling, let running activities finish (within
    `graceful_shutdown_seconds`) and return; `/readyz` says so meanwhile."""
    health = WorkerHealth(client, lambda: routing_problem(client, settings))
    async with serving_health(health, settings.metrics_host, settings.health_port):
        await apply_reconcile_schedule(client, settings)
        await apply_warm_pools(client, settings)
        loops: list[asyncio.Task[None]] = []
        if settings.metrics_port is not None:
            meter = process_runtime(settings).metric_meter
            every = settings.census_every_seconds
            clusters = settings.cluster_registry.names
            census = census_loop(client, meter, settings.task_queue, clusters, every)
            loops.append(asyncio.create_task(census))
            probes = cluster_probe_loop(cluster_clients(settings), meter, every)
            loops.append(asyncio.create_task(probes))
        try:
            async with running_worker(settings, client):
                health.state = WorkerState.POLLING
                await stop.wait()
                health.state = WorkerState.STOPPING
        finally:
            for loop in loops:
                loop.cancel()
