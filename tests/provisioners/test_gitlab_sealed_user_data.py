"""No join token reaches GitLab: a spare created through the lab GitLab from a template whose
user data carries a fresh bootstrap token, with the real python-gitlab and the real lab
playbook. The VM gets the token; nothing GitLab stored or serves (pipeline variables, job
logs, artifacts, its files) holds it. The job's opening of the sealed user data refuses a
wrong VM, a wrong key and a stale seal. About 5 s.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import gitlab
import pytest
from cryptography.fernet import Fernet
from lightkube import AsyncClient, KubeConfig
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from activities.vm_join import ClusterEndpoint, Joiner
from contracts.vm import CreateVmInput, VmSpec
from lab.gitlab import PROJECT_PATH, LabGitLab
from lab.hypervisor import LabHypervisor
from lab.kube_testing import KubeLab, kube_lab
from provisioners.gitlab_pipeline import SEALED_USER_DATA, GitLabProvisioner, seal_user_data
from runtime.vm_templates import SiteTemplates, VmTemplate
from tests.helpers import load_module
from tests.lab_gitlab import running_lab_gitlab

REPO = Path(__file__).resolve().parents[2]
USER_DATA = "#cloud-config\nnode: {{ node_name }}\ntoken: {{ join_token }}\n"
TOKEN = re.compile(r"^token: ([a-z0-9]{6})\.([a-z0-9]{16})$", re.MULTILINE)


@pytest.fixture
async def kube(tmp_path: Path) -> AsyncIterator[tuple[KubeLab, AsyncClient]]:
    async with kube_lab(tmp_path / "kube") as lab:
        client = AsyncClient(config=KubeConfig.from_file(lab.kubeconfig))
        yield lab, client
        await client.close()


@pytest.fixture
async def gitlab_lab(tmp_path: Path) -> AsyncIterator[tuple[LabGitLab, LabHypervisor]]:
    async with running_lab_gitlab(tmp_path / "gitlab") as servers:
        yield servers


def provisioning(server: LabGitLab, kube: AsyncClient, key: str | None) -> ProvisioningActivities:
    provisioner = GitLabProvisioner(
        url=server.url,
        project=PROJECT_PATH,
        ref="main",
        trigger_token=SecretStr(server.trigger_token),
        api_token=SecretStr(server.api_token),
        poll_seconds=0.1,
        user_data_key=SecretStr(key) if key else None,
    )
    joiner = Joiner.for_one(
        SiteTemplates({"default": VmTemplate(user_data=USER_DATA)}),
        kube,
        ClusterEndpoint(server="https://127.0.0.1:6443", ca_data="Q0E="),
    )
    return ProvisioningActivities(provisioner, joiner)


def spec(name: str) -> VmSpec:
    return VmSpec(name=name, host="bm-1", cpu=2, memory_mb=2048)


async def everything_gitlab_serves(server: LabGitLab) -> list[str]:
    """Through python-gitlab, as anyone who may read the project's pipelines sees it."""
    project = gitlab.Gitlab(server.url, private_token=server.api_token).projects.get(
        PROJECT_PATH, lazy=True
    )

    def read() -> list[str]:
        seen: list[str] = []
        for pipeline_id in server.pipelines:
            pipeline = project.pipelines.get(pipeline_id)
            seen.append(json.dumps(pipeline.attributes))
            seen += [json.dumps(v.attributes) for v in pipeline.variables.list(get_all=True)]
            for job in pipeline.jobs.list(get_all=True):
                seen.append(json.dumps(job.attributes))
                served = project.jobs.get(job.id, lazy=True)
                seen.append(served.trace().decode())
                seen.append(served.artifact("vm.json").decode())
                with pytest.raises(gitlab.GitlabGetError):
                    served.artifact("vm_vars.json")  # the opened user data is no artifact
        return seen

    return await asyncio.to_thread(read)


async def test_the_vm_gets_its_join_token_and_gitlab_never_sees_it(
    gitlab_lab: tuple[LabGitLab, LabHypervisor], kube: tuple[KubeLab, AsyncClient]
) -> None:
    server, hv = gitlab_lab
    kube_api, kube_client = kube
    activities = provisioning(server, kube_client, server.user_data_key)
    await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-gl-t")))

    # The VM got the user data, with the token the cluster knows.
    received = hv.vms["spare-gl-t"].user_data
    assert received is not None
    found = TOKEN.search(received)
    assert found is not None, received
    token_id, token_secret = found.groups()
    secret = kube_api.api.store.get("secrets", "kube-system", f"bootstrap-token-{token_id}")
    assert secret is not None and secret["stringData"]["token-secret"] == token_secret
    token = f"{token_id}.{token_secret}"

    (pipeline,) = server.pipelines.values()
    assert pipeline.variables[SEALED_USER_DATA] and "VM_USER_DATA" not in pipeline.variables
    stored = [json.dumps(pipeline.variables), "\n".join(pipeline.job.trace)]
    stored += [p.read_bytes().decode(errors="replace") for p in server.workdir.rglob("*")
               if p.is_file()]  # fmt: skip
    served = await everything_gitlab_serves(server)
    for text in stored + served:
        assert token_secret not in text and token not in text


async def test_without_a_key_the_user_data_is_not_sent_at_all(
    gitlab_lab: tuple[LabGitLab, LabHypervisor], kube: tuple[KubeLab, AsyncClient]
) -> None:
    server, _ = gitlab_lab
    activities = provisioning(server, kube[1], key=None)
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(activities.create_vm, CreateVmInput(spec=spec("spare-k")))
    assert refused.value.non_retryable and "gitlab_user_data_key" in refused.value.message
    assert server.pipelines == {}


def job_script() -> ModuleType:
    return load_module(REPO / "deploy" / "gitlab" / "vm_extravars.py")


def job_env(sealed: str, key: str, vm: str = "spare-a", **extra: str) -> dict[str, str]:
    return {
        "VIRTFLOW_HYPERVISOR": "lab",
        "VM_NAME": vm,
        SEALED_USER_DATA: sealed,
        "VIRTFLOW_USER_DATA_KEY": key,
        **extra,
    }


def stale_seal(key: str, age_seconds: int) -> str:
    plain = json.dumps({"vm_name": "spare-a", "user_data": "token: x"}).encode()
    return Fernet(key.encode()).encrypt_at_time(plain, int(time.time()) - age_seconds).decode()


@pytest.mark.parametrize(
    ("case", "env", "reason"),
    [
        (
            "sealed for another VM",
            lambda key: job_env(seal_user_data(SecretStr(key), "spare-b", "x"), key),
            "sealed for another VM",
        ),
        (
            "another key",
            lambda key: job_env(
                seal_user_data(SecretStr(Fernet.generate_key().decode()), "spare-a", "x"), key
            ),
            "does not open",
        ),
        ("older than the TTL", lambda key: job_env(stale_seal(key, 3700), key), "3600 s ago"),
        (
            "no key on the runner",
            lambda key: {**job_env(seal_user_data(SecretStr(key), "spare-a", "x"), "")},
            "holds no key",
        ),
    ],
)
def test_the_job_refuses_sealed_user_data_it_must_not_open(
    case: str, env: Callable[[str], dict[str, str]], reason: str
) -> None:
    key = Fernet.generate_key().decode()
    with pytest.raises(ValueError, match=reason):
        job_script().extravars(env(key))


def test_the_job_opens_user_data_sealed_for_its_vm_from_a_key_file(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()
    (tmp_path / "key").write_text(key + "\n")
    env: dict[str, Any] = job_env(
        seal_user_data(SecretStr(key), "spare-a", "#cloud-config\n"),
        "",
        VIRTFLOW_USER_DATA_KEY_FILE=str(tmp_path / "key"),
    )
    assert job_script().extravars(env)["vm_user_data"] == {"__ansible_unsafe": "#cloud-config\n"}
