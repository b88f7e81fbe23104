"""A site that lacks a piece fails the libvirt playbooks at once, saying what to install or set.

Each case runs the real playbook with the real community.libvirt; the missing Python module
is made missing for ansible-playbook and the modules it runs (a package on PYTHONPATH whose
import fails), so no libvirtd is needed: the create stops before it connects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, DescribeVmInput, VmSpec
from provisioners.ansible import AnsibleProvisioner

REPO = Path(__file__).resolve().parents[2]
SPEC = VmSpec(name="spare-x-r1", host="localhost", cpu=1, memory_mb=64)


def python_path_without(module: str, tmp_path: Path) -> Path:
    """A PYTHONPATH entry under which importing `module` fails as it does where it is missing."""
    blocked = tmp_path / "blocked" / module
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text(f'raise ImportError("No module named {module!r}")\n')
    return blocked.parent


def activities(tmp_path: Path, **extravars: str) -> ProvisioningActivities:
    return ProvisioningActivities(
        AnsibleProvisioner(
            playbook_dir=REPO / "playbooks",
            hypervisor="libvirt",
            extravars={"libvirt_uri_template": "qemu:///system", **extravars},
            artifacts_root=tmp_path / "runs",
        )
    )


async def failure(call: object) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        await call  # type: ignore[misc]
    return raised.value


@pytest.mark.parametrize(("module", "package"), [("lxml", "lxml"), ("libvirt", "libvirt-python")])
async def test_a_missing_python_module_is_a_configuration_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    libvirt_collections: Path,
    module: str,
    package: str,
) -> None:
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    # The domain is made from within ansible-playbook, community.libvirt in the modules it runs.
    monkeypatch.setenv("PYTHONPATH", str(python_path_without(module, tmp_path)))
    err = await failure(
        ActivityEnvironment().run(activities(tmp_path).create_vm, CreateVmInput(spec=SPEC))
    )
    assert err.non_retryable
    assert err.type == "ProvisioningFailed"
    assert f"pip install {package}" in str(err)


async def test_a_missing_collection_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-collections"
    empty.mkdir()
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(empty))
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_SCAN_SYS_PATH", "false")
    err = await failure(
        ActivityEnvironment().run(activities(tmp_path).create_vm, CreateVmInput(spec=SPEC))
    )
    assert err.non_retryable
    assert "community.libvirt" in str(err)
    assert "ANSIBLE_COLLECTIONS_PATH" in str(err)


async def test_describe_without_hosts_to_look_on_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, libvirt_collections: Path
) -> None:
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    err = await failure(
        ActivityEnvironment().run(activities(tmp_path).describe_vm, DescribeVmInput(name=SPEC.name))
    )
    assert err.non_retryable
    assert "libvirt_hosts" in str(err)
    assert os.fspath(tmp_path) not in str(err)


@pytest.mark.libvirt
async def test_a_missing_base_image_fails_the_create_in_qemu_imgs_words_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, libvirt_collections: Path, libvirt_uri: str
) -> None:
    import libvirt

    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    images = tmp_path / "images"
    images.mkdir()
    acts = activities(tmp_path, libvirt_image_dir=str(images), libvirt_domain_type="qemu")
    spec = SPEC.model_copy(
        update={"image": str(tmp_path / "no-such-base.qcow2"), "user_data": "#cloud-config\n"}
    )
    err = await failure(ActivityEnvironment().run(acts.create_vm, CreateVmInput(spec=spec)))
    assert err.non_retryable
    # The task that carries the user data hides its own result; its error still gets out.
    assert "no-such-base.qcow2" in str(err)
    assert "Could not open" in str(err)
    assert list(images.iterdir()) == []
    conn = libvirt.openReadOnly(libvirt_uri)
    try:
        assert SPEC.name not in [d.name() for d in conn.listAllDomains()]
    finally:
        conn.close()
