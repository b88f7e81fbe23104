"""Process settings: environment (VIRTFLOW_*) over an optional YAML file (VIRTFLOW_CONFIG), over
the secrets directory, over Temporal's standard connection settings (TEMPORAL_*, temporal.toml).

The defaults run the embedded lab, so `virtflow dev` needs no configuration at all. Secrets are
`SecretStr`: they show as `**********` in reprs and logs and are read only where they are used.
"""

from __future__ import annotations

import base64
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FilePath,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NestedSecretsSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from contracts.booking import REHEARSAL_AHEAD_SECONDS, WINDOW_ENDING_SECONDS, LeadPolicy
from contracts.common import TASK_QUEUE
from contracts.drain import DrainPolicy
from contracts.warm import WarmPoolSpec
from playbooks import PLAYBOOK_DIR
from runtime.clusters import ClusterConfig, ClusterRegistry
from runtime.event_bus import EventBusConfig
from runtime.receivers import ReceiverConfig
from runtime.vm_templates import SiteTemplates, VmTemplate
from webhooks.bounded import RequestLimits

from .encryption import parse_key
from .temporal_profile import TemporalProfileSource

CONFIG_ENV = "VIRTFLOW_CONFIG"
# A directory of one-file-per-setting secrets (Docker/Kubernetes secrets), named like the
# environment variable: /run/secrets/virtflow_temporal_api_key,
# /run/secrets/virtflow_receivers__upgradectrl__secrets.
SECRETS_DIR_ENV = "VIRTFLOW_SECRETS_DIR"
DEFAULT_SECRETS_DIR = Path("/run/secrets")
# Set by the kubelet in every container: the worker then runs in a Pod.
IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"
REPO_ROOT = Path(__file__).resolve().parents[1]

Role = Literal["operator", "upgrade-controller"]
# A cluster name as a request's `cluster` may spell it (contracts.spare.SpareRequest).
CLUSTER_NAME = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$"

# Values people paste from examples; a deployment that keeps them has no secret at all.
_PLACEHOLDERS = {"", "changeme", "change-me", "secret", "password", "token", "xxx", "todo"}


class TokenGrant(BaseModel):
    """What one API token may do: its role, and the clusters it acts for (None: all)."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    clusters: list[str] | None = Field(default=None, min_length=1)


# The settings that hold secrets, and what each is called when it holds a placeholder.
_SECRET_SETTINGS = {
    "receiver_secrets": "a receiver secret",
    "api_tokens": "an API token",
    "codec_server_tokens": "a codec server token",
    "gitlab_trigger_token": "a GitLab token",
    "gitlab_api_token": "a GitLab token",
}


def _reject_placeholder(value: str, what: str) -> None:
    if value.strip().lower() in _PLACEHOLDERS or value.startswith("<"):
        raise ValueError(f"{what} is a placeholder, set a real value")


class Settings(BaseSettings):
    """Everything a virtflow process (worker, API, receiver, dev, demo) reads at start-up."""

    model_config = SettingsConfigDict(
        env_prefix="VIRTFLOW_",
        env_nested_delimiter="__",
        extra="forbid",
        use_attribute_docstrings=True,
    )

    temporal_address: str = "localhost:7233"
    """Temporal frontend `host:port`; `TEMPORAL_ADDRESS` or the `temporal.toml` profile when
    unset here (likewise every `temporal_*` connection setting)."""
    temporal_namespace: str = "default"
    """Temporal namespace the spares run in (`TEMPORAL_NAMESPACE`)."""
    task_queue: str = TASK_QUEUE
    """Task queue the workers poll and the API starts workflows on."""
    temporal_ui_url: str = "http://localhost:8233"
    """Temporal web UI base URL, for the history links virtflow prints."""
    max_concurrent_activities: int = Field(default=1000, ge=10)
    """Activities one worker runs at once. Each spare waiting for the ledger holds one slot
    while the ledger needs a free slot for its placement, so keep this well above the number
    of spares requested at the same moment. Activities are asyncio tasks: a slot is cheap."""
    max_cached_workflows: int = Field(default=200, ge=1)
    """Workflows one worker keeps in memory between their tasks; each held spare is one (about
    0.3 MB). Past this number the least recently active one is evicted and, at its next task
    (a held spare: its release), rebuilt by replaying its history: CPU, not correctness. 0
    is refused: every task of every workflow, the ledger's too, would replay its history."""
    temporal_tls: bool | None = None
    """TLS to Temporal with the system's root CAs; unset means on with an API key or TLS file,
    off otherwise."""
    temporal_tls_server_root_ca: FilePath | None = None
    """PEM file of the CA that signed the Temporal server's certificate."""
    temporal_tls_client_cert: FilePath | None = None
    """PEM client certificate for mTLS (needs `temporal_tls_client_key`)."""
    temporal_tls_client_key: FilePath | None = None
    """PEM private key of the mTLS client certificate (a secret: keep the file 0600)."""
    temporal_tls_server_name: str | None = None
    """Server name to verify in the server's certificate, when it differs from the address."""
    temporal_api_key: SecretStr | None = None
    """API key sent as a bearer token (Temporal Cloud); enables TLS."""

    worker_versioning: bool = False
    """Run the worker as a version of the Worker Deployment `worker_deployment_name`, build
    `worker_build_id` (docs/OPERATIONS.md, Deploying a new build). Off in the lab: a versioned
    worker gets no task until its version is made current."""
    worker_deployment_name: str = "virtflow"
    """Worker Deployment the workers belong to (`TEMPORAL_DEPLOYMENT_NAME` when unset here)."""
    worker_build_id: str | None = None
    """This build's id, best the image tag (`TEMPORAL_WORKER_BUILD_ID` when unset here); unset:
    the installed package's version."""

    payload_encryption_key_id: str | None = None
    """Encrypt every payload (inputs, results, failure messages) with this key of
    `payload_keys` (AES-GCM); unset: payloads are written in clear. To rotate, add a key,
    point this at it and keep the old one while histories sealed with it are kept."""
    payload_keys: dict[str, SecretStr] = Field(default_factory=dict)
    """Payload keys by id, each the base64 of 16, 24 or 32 random bytes, best one file per
    key in the secrets directory (`virtflow_payload_keys__<id>`). Payloads sealed with any of
    them decode, so keep them while encrypted histories may still be read."""
    codec_server_port: int = Field(default=8094, ge=1, le=65535)
    """Port of the codec server (`virtflow codec-server`) the web UI and `temporal` CLI call
    to decode payloads."""
    codec_server_tokens: list[SecretStr] = Field(default_factory=list)
    """Bearer tokens the codec server accepts; empty lets anyone who reaches it decode (the
    lab), which it logs."""
    codec_server_cors_origins: list[str] = Field(default_factory=list)
    """Browser origins allowed to call the codec server; empty: the origin of
    `temporal_ui_url`."""

    state_dir: Path = Path(".virtflow")
    """Local state: Ansible artifacts, the lab's files, the receiver's event store."""
    inventories: dict[str, str] = Field(
        default_factory=lambda: {"default": "http://127.0.0.1:8091/inventory"}
    )
    """Inventory name -> file path or URL of the placement JSON form."""
    policy_path: Path | None = None
    """Placement policy YAML (filters, scores, weights); the built-in policy when unset."""
    kubeconfig: Path | None = None
    """Kubeconfig of the cluster the spares join; unset means the in-cluster service account
    when running in a Pod, else the file named by `KUBECONFIG` (then `~/.kube/config`).
    `virtflow dev` and `demo` point it at the lab's."""
    join_api_server: str | None = None
    """The Kubernetes API server as the spares' VMs reach it (`https://host:port`), rendered
    into their join by the VM templates; unset: the server of the worker's own kubeconfig. It
    must be set when the worker runs in a Pod on its service account and a template renders a
    join: the Service address the worker uses is seldom reachable from a VM. A template's own
    `api_server` wins over it."""
    join_api_server_ca: FilePath | None = None
    """PEM file of the CA that signs `join_api_server`'s certificate, rendered into the join
    beside it; unset: the CA of the worker's kubeconfig or service account."""
    cluster_name: str = Field(default="lab", pattern=CLUSTER_NAME)
    """The name requests use for the one cluster `kubeconfig`, `join_api_server` and
    `join_api_server_ca` describe, registered as such while `clusters` is empty (a
    single-cluster site's settings, unchanged)."""
    clusters: dict[str, ClusterConfig] = Field(default_factory=dict)
    """The workload clusters spares are prepared for, by name: each with its kubeconfig (a
    file, or Cluster API's Secret `<cluster>-kubeconfig`, key `value`, in a namespace of
    the cluster virtflow runs in), `join_api_server` and `join_api_server_ca`, the
    `receivers` its events go to, the `inventories` and `pools` it may use, and
    `max_spares`, its surge budget. A request for a cluster not here is refused
    (`unknown_cluster`). Empty: the one cluster `cluster_name` (above)."""
    seed_kubeconfig: Path | None = None
    """Kubeconfig of the cluster virtflow runs in, where clusters' kubeconfig Secrets are
    read; unset: the in-cluster service account in a Pod, else `KUBECONFIG`."""
    drain_policy: DrainPolicy = DrainPolicy.FAIL
    """A release's drain that cannot finish in time: fail (stop, keep the VM cordoned, report
    spare.failed), force (delete the remaining pods past their budgets) or leave (keep the VM
    cordoned, report spare.released). A request's `drain_policy` overrides it."""

    provisioner: Literal["ansible", "gitlab", "http"] = "ansible"
    """How VMs are created: an Ansible playbook, a GitLab pipeline, or straight calls to a
    hypervisor HTTP API (`hypervisor_api_url`, the lab hypervisor's contract)."""
    hypervisor_api_url: str = "http://127.0.0.1:8091"
    """Base URL of the hypervisor HTTP API, for `provisioner: http`."""
    hypervisor: str = "lab"
    """What makes the VMs, where `provisioner` says how: the hypervisor whose tasks the
    playbooks include, a directory of `hypervisors/` (`lab`, `libvirt`, `proxmox`)."""
    playbook_dir: Path = PLAYBOOK_DIR
    """Directory of the create/destroy playbooks; they include the hypervisor's tasks from
    `hypervisors/` beside it."""
    ansible_extravars: dict[str, str] = Field(
        default_factory=lambda: {"lab_hypervisor_url": "http://127.0.0.1:8091"}
    )
    """Site variables passed to every playbook run."""
    ansible_inventory: Path | None = None
    """An Ansible inventory (file or directory) for every playbook run: how the hosts that
    tasks are delegated to (a libvirt host's disk and seed) are reached over SSH, e.g.
    `ansible_host`, `ansible_user`, `ansible_ssh_common_args`. None: by name, with the
    worker's own SSH configuration."""

    vm_templates: dict[str, VmTemplate] = Field(default_factory=dict)
    """The kinds of VM the site offers, by name: base image, network, cloud-init user-data
    template, Node labels and taints, the API server as VMs reach it. A request may choose
    one by name (`template`); `default` (or the pool's) otherwise. Empty: no user data, the
    provider's defaults (the lab)."""
    pool_templates: dict[str, str] = Field(default_factory=dict)
    """Pool -> template name, for requests of that pool that name no template."""

    gitlab_url: str = "http://127.0.0.1:8093"
    """GitLab base URL (provisioner `gitlab`); the default is the lab GitLab of `virtflow dev`."""
    gitlab_project: str = "virtflow/vm-pipelines"
    """Project (id or `group/name`) whose pipeline is `deploy/gitlab/.gitlab-ci.yml`."""
    gitlab_ref: str = "main"
    """Branch or tag the VM pipeline runs on."""
    gitlab_trigger_token: SecretStr | None = None
    """Pipeline trigger token of that project (required with provisioner `gitlab`)."""
    gitlab_api_token: SecretStr | None = None
    """API token (`read_api` + pipeline cancel) to follow pipelines and read `vm.json`."""
    gitlab_user_data_key: SecretStr | None = None
    """Fernet key sealing the user data (it holds the join token) for the VM pipeline; the
    project's runners hold the same key (docs/GITLAB.md). Required with provisioner `gitlab`
    when a VM template has user data."""
    gitlab_poll_seconds: float = Field(default=5.0, gt=0)
    """How often a running pipeline's status is read."""

    booking_horizon_days: int = Field(default=30, ge=1, le=366)
    """How far ahead a booking's window may start (a request's `window`)."""
    booking_lead_default_seconds: int = Field(default=900, ge=0)
    """How long before its window a booking's spare is made while the inventory has no
    create-to-Ready time of the template measured yet."""
    booking_lead_floor_seconds: int = Field(default=60, ge=0)
    """The shortest lead: a booking's spare is never made later than this before its window."""
    booking_lead_margin_seconds: int = Field(default=120, ge=0)
    """Added to the p90 of the recent create-to-Ready times to make a booking's lead."""
    booking_window_ending_seconds: int = Field(default=WINDOW_ENDING_SECONDS, ge=0)
    """How long before a booking's window ends `spare.window_ending` is sent (at once when the
    spare is Ready later than that; 0: never)."""
    booking_rehearsal_ahead_seconds: int = Field(default=REHEARSAL_AHEAD_SECONDS, ge=0)
    """A booking whose window starts more than this far ahead is rehearsed unless its request
    says `window.rehearsal: false`: a spare of its shape made Ready and released on its host
    at once, so a broken template or host path shows while there is time to fix it."""
    booking_check_seconds: int = Field(default=300, ge=10, le=24 * 3600)
    """How often an inventory's ledger looks at the hosts of its bookings that have not
    started: one cordoned, gone or out of room is left for another host at once (or the
    booking fails then, saying why)."""

    warm_pools: list[WarmPoolSpec] = Field(default_factory=list)
    """Spares kept Ready ahead of demand (`VIRTFLOW_WARM_POOLS` as JSON): each `{name, cluster,
    cpu, memory_mb, gpu, inventory, pool, template, size, max_age_seconds}`. A request of that
    cluster, inventory, shape, pool and template that a warm spare's host satisfies takes the
    warm spare at once. Each holds its capacity while idle; `size: 0` drains a pool."""
    receivers: dict[str, ReceiverConfig] = Field(default_factory=dict)
    """Webhook receivers by name; a request may only pick among these, never give a URL."""
    receiver_secrets: list[SecretStr] = Field(default_factory=list)
    """Secrets the reference receiver (`virtflow receiver`) verifies signatures with."""
    event_bus: EventBusConfig | None = None
    """Also publish every spare event to NATS (`url`, `subject_prefix`, `stream`, credentials);
    off when unset. See docs/webhooks/README.md."""

    api_host: str = "127.0.0.1"
    """Address the HTTP API and the reference receiver listen on."""
    api_port: int = Field(default=8080, ge=1, le=65535)
    """Port of the HTTP API."""
    receiver_port: int = Field(default=8090, ge=1, le=65535)
    """Port of the reference webhook receiver."""
    http_header_timeout_seconds: float = Field(default=10.0, gt=0)
    """API and receiver: a request's headers must arrive within this long of the connection
    (or of its previous answer), else 408 and the connection is closed."""
    http_body_timeout_seconds: float = Field(default=30.0, gt=0)
    """API and receiver: a request's body must arrive within this long of its headers, else
    408 and the connection is closed."""
    http_keep_alive_seconds: float = Field(default=75.0, gt=0)
    """API and receiver: an idle kept-alive connection is closed after this long. Longer than
    a load balancer's usual 60 s idle timeout (nginx's own default is 75 s), so the balancer
    closes first, and long enough that a busy server's late timer does not close a connection
    whose next request is already on its way; a stalled next request is the header deadline's."""
    http_max_connections: int = Field(default=2048, ge=1)
    """API and receiver: connections (and requests in flight) per process; past it a request
    is answered 503 at once, never dropped. Far above a burst of 1,000 concurrent requests."""
    api_tokens: dict[SecretStr, Role | TokenGrant] = Field(default_factory=dict)
    """Bearer token -> role (`operator`, `upgrade-controller`), acting for every cluster, or
    `{"role": ..., "clusters": [...]}`, acting only for those: another cluster's spare is
    404 to it, a request for another cluster 403, lists and views show only its clusters.
    Empty disables authentication (the lab); the API logs it."""
    api_url: str | None = None
    """Where the `virtflow` spare commands reach the HTTP API; unset: `http://api_host:api_port`."""
    api_token: SecretStr | None = None
    """Bearer token the `virtflow` spare commands send to the API (one of its `api_tokens`)."""

    reconcile_every_seconds: int = Field(default=600, ge=10)
    """How often the orphan sweep (schedule `virtflow-reconcile-spares`) runs."""
    reconcile_grace_seconds: int = Field(default=300, ge=0)
    """An orphan is released only when seen in two scans this far apart."""

    health_port: int | None = Field(default=None, ge=1, le=65535)
    """Serve the worker's `/healthz` (the process answers) and `/readyz` (Temporal reachable,
    polling, not shutting down) on this port, for Kubernetes probes; off when unset."""
    graceful_shutdown_seconds: float = Field(default=300, ge=0)
    """On SIGTERM a worker stops polling and gives running activities (a playbook creating a
    VM) this long to finish before cancelling them; keep the Pod's
    terminationGracePeriodSeconds above it."""

    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """Serve Prometheus metrics (SDK and virtflow's own) at `/metrics` on this port; off
    when unset."""
    census_every_seconds: float = Field(default=30, ge=1)
    """How often a worker with `metrics_port` counts the running spares per phase of each
    registered cluster in Temporal visibility (the gauge `virtflow_spares`; one count per
    phase and cluster)."""
    metrics_host: str = "0.0.0.0"
    """Address the metrics endpoint listens on."""
    otel_endpoint: str | None = None
    """OTLP/HTTP endpoint for traces (for example `http://otel-collector:4318`), over the
    standard `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`; tracing is off when neither is set. The
    other `OTEL_*` variables (headers, sampler, resource attributes) apply as usual."""
    otel_service_name: str | None = None
    """`service.name` of the exported spans, over `OTEL_SERVICE_NAME`; `virtflow` when
    neither is set."""
    log_format: Literal["console", "json"] = "console"
    """Log lines for people (`console`) or one JSON object per line (`json`)."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Lowest level logged."""

    @field_validator(*_SECRET_SETTINGS)
    @classmethod
    def _real_secrets(cls, value: Any, info: ValidationInfo) -> Any:
        """No placeholder among a setting's secrets: one, a list, or a dict's keys."""
        what = _SECRET_SETTINGS.get(info.field_name or "", "a secret")
        secrets = [] if value is None else [value] if isinstance(value, SecretStr) else value
        for secret in secrets:
            _reject_placeholder(secret.get_secret_value(), what)
        return value

    @model_validator(mode="after")
    def _token_clusters(self) -> Settings:
        registered = self.cluster_registry
        for i, grant in enumerate(self.api_tokens.values()):
            if not isinstance(grant, TokenGrant):
                continue
            for name in grant.clusters or []:
                if name not in registered:
                    # The token itself is a secret: the entry is named by its position.
                    raise ValueError(
                        f"api_tokens (entry {i + 1}).clusters: unknown cluster '{name}' "
                        f"(registered: {', '.join(registered.names)})"
                    )
        return self

    @model_validator(mode="after")
    def _payload_keys(self) -> Settings:
        for key_id, key in self.payload_keys.items():
            parse_key(key_id, key)
        active = self.payload_encryption_key_id
        if active is not None and active not in self.payload_keys:
            raise ValueError(
                f"payload_encryption_key_id {active!r} is not among payload_keys: add the "
                f"file virtflow_payload_keys__{active} to the secrets directory"
            )
        return self

    @field_validator("gitlab_user_data_key")
    @classmethod
    def _fernet_key(cls, key: SecretStr | None) -> SecretStr | None:
        if key is not None:
            try:
                if len(base64.urlsafe_b64decode(key.get_secret_value().encode())) != 32:
                    raise ValueError
            except ValueError:
                raise ValueError(
                    "gitlab_user_data_key must be a Fernet key (32 bytes, url-safe base64): "
                    "make one with `python3 -c 'from cryptography.fernet import Fernet; "
                    "print(Fernet.generate_key().decode())'`"
                ) from None
        return key

    @model_validator(mode="after")
    def _client_cert_and_key(self) -> Settings:
        if (self.temporal_tls_client_cert is None) != (self.temporal_tls_client_key is None):
            raise ValueError(
                "temporal_tls_client_cert and temporal_tls_client_key must be set together"
            )
        return self

    @model_validator(mode="after")
    def _templates(self) -> Settings:
        SiteTemplates(self.vm_templates, self.pool_templates)  # raises on a broken one
        return self

    @model_validator(mode="after")
    def _join_api_server(self) -> Settings:
        # In a Pod without a kubeconfig the worker talks to the API server's Service address,
        # which a VM outside the cluster network may not reach: the join needs its own.
        in_cluster = self.kubeconfig is None and bool(os.environ.get(IN_CLUSTER_ENV))
        joining = [
            name
            for name, template in self.vm_templates.items()
            if template.api_server is None
            and (template.user_data is not None or template.user_data_file is not None)
        ]
        for name, cluster in self.clusters.items():
            on_service_account = (
                cluster.kubeconfig is None and cluster.kubeconfig_secret_namespace is None
            )
            in_pod = bool(os.environ.get(IN_CLUSTER_ENV))
            if in_pod and on_service_account and joining and cluster.join_api_server is None:
                raise ValueError(
                    f"clusters.{name}.join_api_server: must be set for a cluster reached "
                    "on the Pod's service account when VM templates render a join "
                    f"({', '.join(sorted(joining))}): the Service address "
                    f"{os.environ.get(IN_CLUSTER_ENV)} is seldom reachable from a VM"
                )
        if in_cluster and joining and self.join_api_server is None and not self.clusters:
            raise ValueError(
                "join_api_server: must be set when the worker runs in a Pod on its service "
                f"account (VM templates {', '.join(sorted(joining))} render a join): set it "
                "(VIRTFLOW_JOIN_API_SERVER) to the API server's address as the VMs reach it, "
                "e.g. the control plane's load balancer, not the Service address "
                f"{os.environ.get(IN_CLUSTER_ENV)}"
            )
        if self.join_api_server is not None and not self.join_api_server.startswith("https://"):
            raise ValueError(f"join_api_server: {self.join_api_server!r} is not an https:// URL")
        return self

    @model_validator(mode="after")
    def _clusters(self) -> Settings:
        if not self.clusters:
            return self
        legacy = [
            name
            for name in ("kubeconfig", "join_api_server", "join_api_server_ca")
            if getattr(self, name) is not None
        ]
        if legacy:
            raise ValueError(
                f"{', '.join(legacy)}: describe the one cluster of a site without `clusters`; "
                "with `clusters` set, give each cluster its own"
            )
        pattern = re.compile(CLUSTER_NAME)
        for name, cluster in self.clusters.items():
            if not pattern.match(name):
                raise ValueError(
                    f"clusters.{name}: a cluster name is a DNS label of at most 40 characters"
                )
            for field, known in (
                ("receivers", self.receivers),
                ("inventories", self.inventories),
            ):
                for wanted in getattr(cluster, field) or []:
                    if wanted not in known:
                        configured = ", ".join(sorted(known)) or "none"
                        raise ValueError(
                            f"clusters.{name}.{field}: unknown name '{wanted}' "
                            f"(configured: {configured})"
                        )
            usable = cluster.inventories if cluster.inventories is not None else self.inventories
            if cluster.max_spares is not None and len(usable) != 1:
                # One ledger counts the budget under its lock; two could each let one more in.
                raise ValueError(
                    f"clusters.{name}.max_spares: the surge budget is kept by one inventory's "
                    f"ledger; give the cluster one inventory (`inventories: [name]`), not "
                    f"{len(usable)}"
                )
        return self

    @property
    def cluster_registry(self) -> ClusterRegistry:
        """The registered clusters; a site without `clusters` has its one cluster."""
        if self.clusters:
            return ClusterRegistry(self.clusters)
        return ClusterRegistry(
            {
                self.cluster_name: ClusterConfig(
                    kubeconfig=self.kubeconfig,
                    join_api_server=self.join_api_server,
                    join_api_server_ca=self.join_api_server_ca,
                )
            }
        )

    @model_validator(mode="after")
    def _warm_pools(self) -> Settings:
        names = [p.name for p in self.warm_pools]
        for name in sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"warm_pools: two pools are named '{name}'")
        registered = self.cluster_registry
        for spec in self.warm_pools:
            if spec.cluster not in registered:
                known = ", ".join(registered.names)
                raise ValueError(
                    f"warm_pools.{spec.name}.cluster: unknown cluster '{spec.cluster}' "
                    f"(registered: {known})"
                )
            if spec.inventory not in self.inventories:
                known = ", ".join(sorted(self.inventories)) or "none"
                raise ValueError(
                    f"warm_pools.{spec.name}.inventory: unknown inventory '{spec.inventory}' "
                    f"(configured: {known})"
                )
            if spec.template is not None and spec.template not in self.vm_templates:
                known = ", ".join(sorted(self.vm_templates)) or "none"
                raise ValueError(
                    f"warm_pools.{spec.name}.template: unknown VM template '{spec.template}' "
                    f"(configured: {known})"
                )
        return self

    @property
    def http_limits(self) -> RequestLimits:
        return RequestLimits(
            header_seconds=self.http_header_timeout_seconds,
            body_seconds=self.http_body_timeout_seconds,
            keep_alive_seconds=self.http_keep_alive_seconds,
            max_connections=self.http_max_connections,
        )

    def under(self, prefix: str) -> dict[str, Any]:
        """The settings named `prefix…`, keyed by the rest of their name: the keyword arguments
        of what is made from one group of settings, read in one place, not copied one by one."""
        fields = type(self).model_fields
        return {n.removeprefix(prefix): getattr(self, n) for n in fields if n.startswith(prefix)}

    @property
    def booking_lead(self) -> LeadPolicy:
        # The lead's own settings are `booking_lead_…`; the two about a window's end and its
        # rehearsal are named for the booking, not the lead.
        return LeadPolicy(
            **self.under("booking_lead_"),
            window_ending_seconds=self.booking_window_ending_seconds,
            rehearsal_ahead_seconds=self.booking_rehearsal_ahead_seconds,
        )

    @property
    def api_base_url(self) -> str:
        return (self.api_url or f"http://{self.api_host}:{self.api_port}").rstrip("/")

    @property
    def codec_origins(self) -> list[str]:
        if self.codec_server_cors_origins:
            return self.codec_server_cors_origins
        ui = urlsplit(self.temporal_ui_url)
        return [f"{ui.scheme}://{ui.netloc}"]

    def workflow_ui_url(self, workflow_id: str) -> str:
        """Where an operator sees this workflow's history in the Temporal web UI."""
        base = self.temporal_ui_url.rstrip("/")
        return f"{base}/namespaces/{self.temporal_namespace}/workflows/{workflow_id}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Read when settings are built, not at import, so tests can point VIRTFLOW_CONFIG anywhere.
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = os.environ.get(CONFIG_ENV)
        if config_file:
            if not Path(config_file).is_file():
                raise FileNotFoundError(f"{CONFIG_ENV}={config_file}: no such file")
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=config_file))
        secrets_dir = os.environ.get(SECRETS_DIR_ENV) or (
            DEFAULT_SECRETS_DIR if DEFAULT_SECRETS_DIR.is_dir() else None
        )
        if secrets_dir is not None:
            sources.append(
                NestedSecretsSettingsSource(
                    file_secret_settings, secrets_dir=secrets_dir, secrets_nested_delimiter="__"
                )
            )
        sources.append(TemporalProfileSource(settings_cls))
        return tuple(sources)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, built once on first use."""
    return Settings()
