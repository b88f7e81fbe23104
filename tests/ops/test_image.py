"""The Dockerfile builds an image that can provision (no Docker engine runs here, so this reads
what it installs): tini as PID 1, the provider extras at versions the bounds allow, the
collections the playbooks' tests use, and a non-root user."""

from __future__ import annotations

import json
import tomllib

import yaml
from packaging.requirements import Requirement

from hypervisors import ansible_collections, hypervisors
from runtime.settings import REPO_ROOT
from tests.libvirt.collections import COLLECTIONS, collections_path

DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()
IMAGE = REPO_ROOT / "deploy" / "image"


def _instructions(name: str) -> list[str]:
    return [line for line in DOCKERFILE.splitlines() if line.startswith(f"{name} ")]


def _pins() -> dict[str, str]:
    lines = (IMAGE / "constraints.txt").read_text().splitlines()
    pins = [Requirement(line) for line in lines if line and not line.startswith("#")]
    return {p.name.lower(): str(p.specifier).removeprefix("==") for p in pins}


def test_tini_is_pid_one_and_the_user_is_not_root() -> None:
    (entrypoint,) = _instructions("ENTRYPOINT")
    assert json.loads(entrypoint.removeprefix("ENTRYPOINT "))[:3] == ["tini", "--", "virtflow"]
    assert "tini" in DOCKERFILE.split("apt-get install")[-1]
    assert _instructions("USER")[-1] == "USER 10001:10001"


def test_every_package_the_wheel_holds_is_copied_into_the_build() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    packages = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    copied = {line.split()[1] for line in _instructions("COPY")}
    for pattern in packages:
        assert pattern.rstrip("*") in copied, f"{pattern} is not copied into the image"


def test_the_provider_extras_are_installed_at_pins_the_bounds_allow() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    wanted = [
        Requirement(r)
        for r in [
            *project["dependencies"],
            *project["optional-dependencies"]["libvirt"],
            *project["optional-dependencies"]["proxmox"],
            *project["optional-dependencies"]["encryption"],
        ]
    ]
    assert '".[libvirt,proxmox,encryption]"' in DOCKERFILE
    assert "--constraint deploy/image/constraints.txt" in DOCKERFILE
    pins = _pins()
    for extra in (
        "libvirt-python",
        "lxml",
        "proxmoxer",
        "ansible-core",
        "ansible-runner",
        "cryptography",
    ):
        assert extra in pins, f"{extra} is not pinned"
    for requirement in wanted:
        pinned = pins.get(requirement.name.lower())
        if pinned is not None:
            assert requirement.specifier.contains(pinned), f"{requirement}: pinned {pinned}"


def test_the_image_and_the_extras_carry_what_each_hypervisor_declares() -> None:
    """pyproject's extras, the image's pip extras and its collections file cannot read the
    declarations in hypervisors/<name>/__init__.py: they must agree with them."""
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    (install,) = [line for line in DOCKERFILE.splitlines() if '".[' in line]
    image_extras = install.split('".[')[1].split("]")[0].split(",")
    doc = yaml.safe_load((IMAGE / "collections.yml").read_text())
    pinned = {c["name"]: c["version"] for c in doc["collections"]}
    assert pinned == ansible_collections()
    pins = _pins()
    for declared in hypervisors().values():
        if declared.pip_extra is None:
            assert not declared.python_packages, declared.name
            continue
        assert declared.pip_extra in image_extras, f"{declared.name}: not in the image"
        required = {Requirement(r).name.lower() for r in extras[declared.pip_extra]}
        for package in declared.python_packages.values():
            assert package.lower() in required, f"{declared.name}: {package} not in its extra"
            assert package.lower() in pins, f"{declared.name}: {package} not pinned"


def test_the_collections_are_pinned_to_the_versions_the_tests_run() -> None:
    doc = yaml.safe_load((IMAGE / "collections.yml").read_text())
    pinned = {c["name"]: c["version"] for c in doc["collections"]}
    assert set(pinned) == {name.replace("/", ".") for name in COLLECTIONS}
    assert "ANSIBLE_COLLECTIONS_PATH=/opt/virtflow/collections" in DOCKERFILE
    root = collections_path() / "ansible_collections"
    for name in COLLECTIONS:
        manifest = root / name / "MANIFEST.json"
        if manifest.is_file():  # extracted by `make collections` (part of `make test`)
            version = json.loads(manifest.read_text())["collection_info"]["version"]
            assert pinned[name.replace("/", ".")] == version, name
