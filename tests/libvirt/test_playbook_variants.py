"""The hypervisor playbook variants: syntax, module names and module arguments (libvirt and
Proxmox), and no call whose failure is stored as not failed (every variant).

`ansible-playbook --syntax-check` only loads tasks that are imported statically, so the
check imports every variant file into one playbook. Module names resolve against the real
community collections when they are there (`make collections`), else against empty stand-ins
that only make the names resolvable; with the real ones, every argument the tasks pass is
also checked against the module's documented options (`ansible-doc --json`). ~3 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.libvirt.collections import collections_path, installed

HYPERVISORS = Path(__file__).resolve().parents[2] / "hypervisors"
# virtflow's own modules: Ansible finds them beside the playbooks, not beside this check.
LIBRARY = [HYPERVISORS / name / "library" for name in ("libvirt", "proxmox")]
VARIANTS = sorted(p for name in ("libvirt", "proxmox") for p in (HYPERVISORS / name).glob("*.yml"))
MODULES = (
    "community.libvirt.virt",
    "community.proxmox.proxmox_kvm",
    "community.proxmox.proxmox_vm_info",
)
# virtflow's own (hypervisors/libvirt/library), documented as Ansible documents a module.
OWN_MODULES = ("virtflow_host_command", "virtflow_libvirt_domain", "virtflow_pve_api")


def _env(collections: Path) -> dict[str, str]:
    scripts = sysconfig.get_path("scripts")
    return {
        **os.environ,
        "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")]),
        "ANSIBLE_COLLECTIONS_PATH": str(collections),
        "ANSIBLE_LIBRARY": os.pathsep.join(str(d) for d in LIBRARY),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
    }


def _stand_ins(root: Path) -> Path:
    for module in MODULES:
        namespace, collection, name = module.split(".")
        path = root / "ansible_collections" / namespace / collection / "plugins" / "modules"
        path.mkdir(parents=True, exist_ok=True)
        (path / f"{name}.py").write_text("")
    return root


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bool]:
    real = collections_path()
    if installed(real):
        return real, True
    return _stand_ins(tmp_path_factory.mktemp("collections")), False


def test_there_are_three_actions_per_variant() -> None:
    names = {(p.parent.name, p.name) for p in VARIANTS}
    for provider in ("libvirt", "proxmox"):
        assert {(provider, f"{a}.yml") for a in ("create", "destroy", "describe")} <= names


def test_every_variant_passes_the_syntax_check(
    collections: tuple[Path, bool], tmp_path: Path
) -> None:
    playbook = [
        {
            "name": "Import every variant",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"ansible.builtin.import_tasks": str(p)} for p in VARIANTS],
        }
    ]
    check = tmp_path / "check.yml"
    check.write_text(yaml.safe_dump(playbook))
    done = subprocess.run(
        ["ansible-playbook", "--syntax-check", str(check)],
        env=_env(collections[0]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _module_calls(tasks: list[dict[str, Any]]) -> list[tuple[str, str, set[str]]]:
    calls = []
    for task in tasks:
        for inner in ("block", "rescue", "always"):
            calls += _module_calls(task.get(inner, []))
        for key, args in task.items():
            if key in MODULES or key in OWN_MODULES:
                calls.append((task.get("name", "?"), key, set(args)))
    return calls


def test_every_module_argument_is_a_documented_option(collections: tuple[Path, bool]) -> None:
    root, real = collections
    if not real:
        pytest.skip(
            f"the community collections are not in {collections_path()}: run `make collections`"
        )
    docs = json.loads(
        subprocess.run(
            ["ansible-doc", "--json", *MODULES, *OWN_MODULES],
            env=_env(root),
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
    )
    accepted = {
        module: set(doc["doc"]["options"])
        | {alias for opt in doc["doc"]["options"].values() for alias in opt.get("aliases", [])}
        for module, doc in docs.items()
    }
    calls = [
        (path.name, *call)
        for path in VARIANTS
        for call in _module_calls(yaml.safe_load(path.read_text()))
    ]
    # The walk found the module calls, nested blocks included (the Proxmox variant makes its
    # checked calls through the API, so eight module calls are left, some inside blocks).
    top_level = [
        task
        for path in VARIANTS
        for task in yaml.safe_load(path.read_text())
        if set(task) & {*MODULES, *OWN_MODULES}
    ]
    assert len(calls) >= 8
    assert len(calls) > len(top_level)
    unknown = [
        f"{file}: {task}: {module} has no option {sorted(args - accepted[module])}"
        for file, task, module, args in calls
        if args - accepted[module]
    ]
    assert unknown == []


def _tasks_that_never_fail(node: Any) -> list[str]:
    if isinstance(node, list):
        return [name for item in node for name in _tasks_that_never_fail(item)]
    if not isinstance(node, dict):
        return []
    found = [str(node.get("name", "?"))] if node.get("failed_when") is False else []
    return found + [name for value in node.values() for name in _tasks_that_never_fail(value)]


def test_no_task_marks_a_failed_call_as_not_failed() -> None:
    # `failed_when: false` registers a failed call's answer as not failed, so a later
    # `is failed` never fires: a call that may fail keeps its failure (ignore_errors) and
    # the next task classifies it.
    files = sorted(HYPERVISORS.glob("*/*.yml")) + sorted(HYPERVISORS.parent.glob("playbooks/*.yml"))
    assert len(files) > len(VARIANTS)
    offenders = {
        f"{path.parent.name}/{path.name}": names
        for path in files
        if (names := _tasks_that_never_fail(yaml.safe_load(path.read_text())))
    }
    assert offenders == {}
