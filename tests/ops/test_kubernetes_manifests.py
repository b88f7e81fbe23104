"""deploy/kubernetes: the base and every overlay render with `kubectl kustomize`, every object
is valid against the Kubernetes schemas (offline, kubernetes-validate; the custom resources of
KEDA and the Prometheus Operator, whose schemas are not at hand offline, are checked field by
field against the settings), the settings they carry load, each build of the worker is a
Deployment of its own, and the worker's RBAC covers every Kubernetes call the product makes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from runtime.encryption import new_key
from runtime.settings import CONFIG_ENV, REPO_ROOT, SECRETS_DIR_ENV, Settings
from tests.ops.kube_calls import ApiCall, product_calls
from webhooks.signing import generate_secret

KUSTOMIZE_ROOT = REPO_ROOT / "deploy" / "kubernetes"
KUSTOMIZATIONS = [
    KUSTOMIZE_ROOT / "base",
    *sorted(p for p in (KUSTOMIZE_ROOT / "overlays").iterdir() if p.is_dir()),
]
# Packages of the product (never lab/, tests/, bench/): any Kubernetes call in them is the
# worker's, since the API's service account has no token.
PRODUCT_PACKAGES = sorted(
    p.name
    for p in REPO_ROOT.iterdir()
    if (p / "__init__.py").is_file() and p.name not in {"lab", "tests", "bench"}
)
SETTINGS_FILE = "virtflow.yaml"
WORKER_SA, API_SA = "virtflow-worker", "virtflow-api"
# The keys the Secret virtflow-secrets holds (deploy/kubernetes/base/kustomization.yaml).
SECRET_KEYS = {
    "virtflow_receivers__upgradectrl__secrets": json.dumps([generate_secret()]),
    "virtflow_api_tokens": json.dumps({"t-4f0c2b7d9e": "upgrade-controller"}),
    # The encryption component's key (components/encryption).
    "virtflow_payload_keys__k1": new_key(),
}


# Custom resources: their operators' schemas are not installed here (see the tests below).
CUSTOM_KINDS = {"ScaledObject", "PrometheusRule"}


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(KUSTOMIZE_ROOT)) for p in paths]


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl not found: `make kubectl` installs Debian's kubernetes-client")
    return found


_RENDERED: dict[Path, list[dict[str, Any]]] = {}


def render(directory: Path) -> list[dict[str, Any]]:
    if directory not in _RENDERED:
        done = subprocess.run(
            [kubectl(), "kustomize", str(directory)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        _RENDERED[directory] = [d for d in yaml.safe_load_all(done.stdout) if d]
    return _RENDERED[directory]


def one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].startswith(name)]
    assert len(found) == 1, f"{kind} {name}: {len(found)} found"
    return found[0]


def pod_spec(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    spec: dict[str, Any] = one(docs, "Deployment", name)["spec"]["template"]["spec"]
    return spec


def containers(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for doc in docs:
        if doc["kind"] == "Deployment":
            for container in doc["spec"]["template"]["spec"]["containers"]:
                yield doc["metadata"]["name"], container


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_every_object_is_valid_against_the_kubernetes_schemas(directory: Path) -> None:
    docs = render(directory)
    version = kubernetes_validate.latest_version()
    for doc in docs:
        if doc["kind"] in CUSTOM_KINDS:
            continue
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as err:
            pytest.fail(f"{doc['kind']} {doc['metadata']['name']}: {err.message}")
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "Service", "ServiceAccount", "ConfigMap"} <= kinds
    # The seed grants nothing cluster-wide: its rules are the clusters' kubeconfig Secrets.
    assert {"Role", "PodDisruptionBudget"} <= kinds
    assert ("ClusterRole" in kinds) == (directory.name != "seed")


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_containers_run_as_non_root_on_a_read_only_root_with_requests(directory: Path) -> None:
    docs = render(directory)
    for deployment, container in containers(docs):
        pod = pod_spec(docs, deployment)
        assert pod["securityContext"]["runAsNonRoot"] is True, deployment
        security = container["securityContext"]
        assert security["readOnlyRootFilesystem"] is True, deployment
        assert security["allowPrivilegeEscalation"] is False, deployment
        assert security["capabilities"]["drop"] == ["ALL"], deployment
        assert {"cpu", "memory"} <= set(container["resources"]["requests"]), deployment


def _settings(docs: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Load the ConfigMap's settings the way a Pod does: the file, plus the Secret's keys."""
    configmap = one(docs, "ConfigMap", "virtflow-settings")
    (tmp_path / SETTINGS_FILE).write_text(configmap["data"][SETTINGS_FILE])
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    # Each receiver the file names has its secrets in the Secret (the seed's are its own).
    keys = {k: v for k, v in SECRET_KEYS.items() if not k.startswith("virtflow_receivers__")}
    for name in yaml.safe_load(configmap["data"][SETTINGS_FILE]).get("receivers", {}):
        keys[f"virtflow_receivers__{name}__secrets"] = json.dumps([generate_secret()])
    for key, value in keys.items():
        (secrets / key).write_text(value)
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / SETTINGS_FILE))
    monkeypatch.setenv(SECRETS_DIR_ENV, str(secrets))
    return Settings(), configmap


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def _mounted(pod: dict[str, Any], container: dict[str, Any], path: str) -> dict[str, Any]:
    """The volume mounted at `path` in this container."""
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert path in mounts, f"nothing mounted at {path}"
    return next(v for v in pod["volumes"] if v["name"] == mounts[path])


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_settings_come_from_the_configmap_and_secrets_from_the_secret(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = render(directory)
    settings, configmap = _settings(docs, tmp_path, monkeypatch)
    assert settings.kubeconfig is None  # in a Pod: the service account
    for deployment, container in containers(docs):
        pod, env = pod_spec(docs, deployment), _env(container)
        config = Path(env[CONFIG_ENV])
        volume = _mounted(pod, container, str(config.parent))
        assert volume["configMap"]["name"] == configmap["metadata"]["name"]
        assert config.name in configmap["data"]
        secret = _mounted(pod, container, env[SECRETS_DIR_ENV])
        assert secret["secret"]["secretName"] == "virtflow-secrets"
        # Files the settings name under the ConfigMap's mount are in the ConfigMap.
        for source in settings.inventories.values():
            if source.startswith(f"{config.parent}/"):
                assert Path(source).name in configmap["data"], source


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_probes_and_ports_match_the_settings(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = render(directory)
    settings, _ = _settings(docs, tmp_path, monkeypatch)
    expected_ports = {
        "virtflow-worker": settings.health_port,
        "virtflow-api": settings.api_port,
        "virtflow-codec-server": settings.codec_server_port,
    }
    for deployment, container in containers(docs):
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        expected = next(v for k, v in expected_ports.items() if deployment.startswith(k))
        for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
            get = container[probe]["httpGet"]
            assert get["path"] == path, (deployment, probe)
            assert ports[get["port"]] == expected, (deployment, probe)
    worker = pod_spec(docs, "virtflow-worker")
    assert worker["containers"][0]["args"] == ["worker"]
    assert {p["containerPort"] for p in worker["containers"][0]["ports"]} >= {settings.metrics_port}
    # Kubernetes kills the Pod only after the worker's own grace period has run out.
    assert worker["terminationGracePeriodSeconds"] > settings.graceful_shutdown_seconds


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_the_api_has_a_service_and_a_disruption_budget(directory: Path) -> None:
    docs = render(directory)
    api = one(docs, "Deployment", "virtflow-api")
    labels = api["spec"]["template"]["metadata"]["labels"]
    service = one(docs, "Service", "virtflow-api")
    budget = one(docs, "PodDisruptionBudget", "virtflow-api")
    assert service["spec"]["selector"].items() <= labels.items()
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert api["spec"]["replicas"] > budget["spec"]["minAvailable"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    # The API makes no Kubernetes call: no token in its Pods.
    assert pod_spec(docs, "virtflow-api")["automountServiceAccountToken"] is False


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_every_process_loads_its_settings_with_its_environment(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ConfigMap's file, the Secret's keys and the container's own variables together."""
    docs = render(directory)
    _settings(docs, tmp_path, monkeypatch)
    for deployment, container in containers(docs):
        with monkeypatch.context() as env:
            for name, value in _env(container).items():
                # The file and the secrets are this test's copies (see `_settings`).
                if name not in (CONFIG_ENV, SECRETS_DIR_ENV, "HOME"):
                    env.setenv(name, value)
            settings = Settings()
        if any(name == "VIRTFLOW_PAYLOAD_ENCRYPTION_KEY_ID" for name in _env(container)):
            assert settings.payload_encryption_key_id in settings.payload_keys, deployment


def test_the_encrypted_overlay_seals_every_process_and_serves_the_codec() -> None:
    docs = render(KUSTOMIZE_ROOT / "overlays" / "encrypted")
    for deployment, container in containers(docs):
        assert "VIRTFLOW_PAYLOAD_ENCRYPTION_KEY_ID" in _env(container), deployment
    codec = pod_spec(docs, "virtflow-codec-server")
    assert codec["containers"][0]["args"] == ["codec-server"]
    assert codec["automountServiceAccountToken"] is False
    service = one(docs, "Service", "virtflow-codec-server")
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def _image_tag(docs: list[dict[str, Any]]) -> str:
    worker = pod_spec(docs, "virtflow-worker")["containers"][0]
    tag: str = worker["image"].rpartition(":")[2]
    return tag


# A Kubernetes object name (RFC 1123 subdomain, as Deployments and budgets need).
DNS_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
BUILD_LABEL = "virtflow.io/build-id"
# What the doc's retire command deletes: `kubectl delete <these> -l virtflow.io/build-id=A`.
RETIRED_KINDS = {"Deployment", "PodDisruptionBudget", "ScaledObject", "ConfigMap"}


def build_objects(docs: list[dict[str, Any]], build_id: str) -> dict[str, dict[str, Any]]:
    """Kind -> the object of that kind `-l virtflow.io/build-id=<build_id>` selects."""
    selected: dict[str, dict[str, Any]] = {}
    for doc in docs:
        if doc["metadata"].get("labels", {}).get(BUILD_LABEL) == build_id:
            assert doc["kind"] not in selected, f"two {doc['kind']} of build {build_id}"
            selected[doc["kind"]] = doc
    return selected


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_each_build_of_the_worker_is_a_deployment_of_its_own(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rainbow deployment: name, labels and the build id the worker runs as follow the tag."""
    docs = render(directory)
    tag = _image_tag(docs)
    worker = one(docs, "Deployment", "virtflow-worker")
    assert worker["metadata"]["labels"][BUILD_LABEL] == tag
    pod_labels = worker["spec"]["template"]["metadata"]["labels"]
    assert pod_labels[BUILD_LABEL] == tag
    assert worker["spec"]["selector"]["matchLabels"][BUILD_LABEL] == tag
    assert "replicas" not in worker["spec"], "the ScaledObject owns the replicas"
    # The settings the Pod gets: its file and its environment, as a version of the deployment.
    _, _ = _settings(docs, tmp_path, monkeypatch)
    for name, value in _env(worker["spec"]["template"]["spec"]["containers"][0]).items():
        if name.startswith("VIRTFLOW_WORKER_"):
            monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.worker_versioning is True
    assert settings.worker_build_id == tag
    # Everything the retire command deletes for this build, and nothing else.
    objects = build_objects(docs, tag)
    assert set(objects) == RETIRED_KINDS
    assert {o["metadata"]["name"] for o in objects.values()} == {worker["metadata"]["name"]}


def set_image(tmp_path: Path, image: str) -> Path:
    """A copy of deploy/kubernetes with the base's image set as `kustomize edit set image
    virtflow=<image>` writes it."""
    copy = tmp_path / "kubernetes"
    shutil.copytree(KUSTOMIZE_ROOT, copy)
    kustomization = copy / "base" / "kustomization.yaml"
    doc = yaml.safe_load(kustomization.read_text())
    name, _, tag = image.rpartition(":")
    (entry,) = doc["images"]
    entry.update(newName=name, newTag=tag)
    kustomization.write_text(yaml.safe_dump(doc))
    return copy


@pytest.mark.parametrize("overlay", ["base", "overlays/libvirt", "overlays/encrypted"])
def test_a_registry_with_a_port_and_an_upper_case_tag_make_a_build_of_their_own(
    tmp_path: Path, overlay: str
) -> None:
    rendered = {}
    for build_id in ("A", "B", "b2"):
        image = f"registry.local:5000/virtflow/virtflow:{build_id}"
        copy = set_image(tmp_path / build_id, image)
        docs = [d for d in yaml.safe_load_all(kustomize(copy / overlay)) if d]
        objects = build_objects(docs, build_id)
        assert set(objects) == RETIRED_KINDS, build_id
        worker = objects["Deployment"]
        name = worker["metadata"]["name"]
        assert DNS_NAME.fullmatch(name) and name.startswith("virtflow-worker-"), name
        assert {o["metadata"]["name"] for o in objects.values()} == {name}
        container = worker["spec"]["template"]["spec"]["containers"][0]
        assert container["image"] == image
        assert _env(container)["VIRTFLOW_WORKER_BUILD_ID"] == build_id
        assert worker["spec"]["template"]["metadata"]["labels"][BUILD_LABEL] == build_id
        assert worker["spec"]["selector"]["matchLabels"][BUILD_LABEL] == build_id
        budget = objects["PodDisruptionBudget"]["spec"]["selector"]
        assert budget["matchLabels"] == worker["spec"]["selector"]["matchLabels"]
        scaler = objects["ScaledObject"]["spec"]
        assert scaler["scaleTargetRef"] == {"name": name}
        assert scaler["triggers"][0]["metadata"]["workerDeploymentBuildId"] == build_id
        assert objects["ConfigMap"]["data"]["image"] == image
        for doc in objects.values():
            if doc["kind"] not in CUSTOM_KINDS:
                kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)
        rendered[build_id] = name
    # Three builds, three Deployments side by side.
    assert len(set(rendered.values())) == 3, rendered


def kustomize(directory: Path) -> str:
    done = subprocess.run(
        [kubectl(), "kustomize", str(directory)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_the_workers_have_a_disruption_budget_and_scale_on_their_backlog(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = render(directory)
    settings, _ = _settings(docs, tmp_path, monkeypatch)
    tag = _image_tag(docs)
    worker = one(docs, "Deployment", "virtflow-worker")
    labels = worker["spec"]["template"]["metadata"]["labels"]
    budget = one(docs, "PodDisruptionBudget", "virtflow-worker")
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["selector"]["matchLabels"]["virtflow.io/build-id"] == tag

    scaled = one(docs, "ScaledObject", "virtflow-worker")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["metadata"]["namespace"] == worker["metadata"]["namespace"]
    spec = scaled["spec"]
    assert spec["scaleTargetRef"] == {"name": worker["metadata"]["name"]}
    assert 0 < budget["spec"]["maxUnavailable"] < spec["minReplicaCount"]
    assert spec["minReplicaCount"] <= spec["maxReplicaCount"]
    # Scaling in lets a leaving worker finish its activities first.
    assert spec["cooldownPeriod"] >= settings.graceful_shutdown_seconds
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "temporal"
    meta = trigger["metadata"]
    assert all(isinstance(value, str) for value in meta.values()), "KEDA metadata are strings"
    assert meta["endpoint"] == settings.temporal_address
    assert meta["namespace"] == settings.temporal_namespace
    assert meta["taskQueue"] == settings.task_queue
    assert meta["workerDeploymentName"] == settings.worker_deployment_name
    assert meta["workerDeploymentBuildId"] == tag
    assert set(meta["queueTypes"].split(",")) == {"workflow", "activity"}
    assert int(meta["targetQueueSize"]) > 0


def _rules_of(docs: list[dict[str, Any]], account: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(namespace or None for cluster-wide, rule) granted to this service account."""
    granted: list[tuple[str | None, dict[str, Any]]] = []
    for binding in docs:
        if binding["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(
            s["kind"] == "ServiceAccount" and s["name"] == account and s["namespace"] == "virtflow"
            for s in binding["subjects"]
        ):
            continue
        ref = binding["roleRef"]
        role = one(docs, ref["kind"], ref["name"])
        scope = binding["metadata"].get("namespace")  # a ClusterRoleBinding has none
        granted += [(scope, rule) for rule in role["rules"]]
    return granted


def allowed(granted: list[tuple[str | None, dict[str, Any]]], call: ApiCall) -> bool:
    return any(
        (scope is None or scope == call.namespace)
        and call.group in rule["apiGroups"]
        and call.resource in rule["resources"]
        and call.verb in rule["verbs"]
        for scope, rule in granted
    )


def test_the_scan_finds_the_calls_the_activities_are_known_to_make() -> None:
    calls = {(c.verb, c.resource, c.namespace) for c in product_calls(REPO_ROOT, ["activities"])}
    assert ("watch", "nodes", None) in calls
    assert ("create", "pods/eviction", None) in calls
    assert ("list", "pods", None) in calls


# The one call virtflow makes to the seed cluster it runs in (never to a workload cluster):
# the read of a cluster's kubeconfig Secret. Only the seed overlay grants it.
SEED_CALLS = "activities/kubeconfig_secrets.py"
SEED = KUSTOMIZE_ROOT / "overlays" / "seed"
WORKLOAD = [d for d in KUSTOMIZATIONS if d != SEED]


@pytest.mark.parametrize("directory", WORKLOAD, ids=_ids(WORKLOAD))
def test_the_workers_rbac_covers_every_kubernetes_call_of_the_product(directory: Path) -> None:
    docs = render(directory)
    granted = _rules_of(docs, WORKER_SA)
    calls = product_calls(REPO_ROOT, PRODUCT_PACKAGES)
    assert calls, "no Kubernetes call found: the scan is broken"
    workload = [c for c in calls if not c.where.startswith(SEED_CALLS)]
    missing = [str(c) for c in workload if not allowed(granted, c)]
    assert missing == [], "calls the worker's RBAC does not allow:\n" + "\n".join(missing)
    assert _rules_of(docs, API_SA) == []


def test_in_the_seed_both_processes_read_only_their_clusters_kubeconfig_secrets() -> None:
    docs = render(SEED)
    settings = yaml.safe_load(
        next(
            d["data"]["virtflow.yaml"]
            for d in docs
            if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("virtflow-settings")
        )
    )
    wanted = {
        (cluster["kubeconfig_secret_namespace"], f"{name}-kubeconfig")
        for name, cluster in settings["clusters"].items()
    }
    assert len(wanted) == 2
    seed_calls = [
        c for c in product_calls(REPO_ROOT, PRODUCT_PACKAGES) if c.where.startswith(SEED_CALLS)
    ]
    assert [(c.verb, c.resource) for c in seed_calls] == [("get", "secrets")]
    for account in (WORKER_SA, API_SA):
        granted = _rules_of(docs, account)
        # Nothing cluster-wide, nothing but those Secrets, each by name and only read.
        assert all(scope is not None for scope, _ in granted), account
        readable = {
            (scope, name)
            for scope, rule in granted
            for name in rule.get("resourceNames", [])
            if rule["resources"] == ["secrets"] and rule["verbs"] == ["get"]
        }
        assert readable == wanted, account
        assert len(granted) == len(wanted), granted


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=_ids(KUSTOMIZATIONS))
def test_the_workers_rbac_is_narrow(directory: Path) -> None:
    granted = _rules_of(render(directory), WORKER_SA)
    for scope, rule in granted:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in rule[field], rule
        # Secrets in kube-system only (bootstrap tokens), each reached by name: never listed
        # or watched, which would read every Secret there; in the seed, only the clusters'
        # kubeconfig Secrets, read by name.
        if "secrets" in rule["resources"]:
            if directory == SEED:
                assert rule["verbs"] == ["get"] and rule["resourceNames"], rule
                continue
            assert scope == "kube-system", rule
            assert sorted(rule["verbs"]) == ["create", "delete", "get"], rule
