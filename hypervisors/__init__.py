"""The hypervisors virtflow drives, one directory each, with everything about it together.

`hypervisors/<name>/` holds `create.yml`, `destroy.yml` and `describe.yml` (the tasks the
playbooks in `playbooks/` include for `hypervisor: <name>`, with their helpers and `templates/`),
optionally `inventory.py` (the `<name>:<site.yaml>` inventory source, read from the
hypervisor's own API and a site file) and its own Ansible plugins (`action_plugins/`,
`library/`), a `README.md` (the extravars it reads, its site file, what to install), and its
declaration in `__init__.py`: a `HYPERVISOR = Hypervisor(...)` naming its pip extra, the
Python packages and Ansible collections it needs, and its inventory reader. The shared lists
read the declarations (the inventory sources, the hints for a missing module, the collections
the tests extract, the plugin paths of a playbook run); what cannot read them (pyproject's
extras, the image's collections file and pip extras) is checked against them by
`tests/ops/test_image.py`. A fourth hypervisor is a fourth directory.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

HYPERVISORS_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Hypervisor:
    """What a hypervisor declares about itself (`hypervisors/<name>/__init__.py`).

    Nothing here imports the hypervisor's client library: the inventory reader is named, and
    imported only when a site's inventory names it, so a worker needs a hypervisor's library
    only if it uses it."""

    name: str
    # The pip extra (pyproject's optional-dependencies) a worker for it installs, if any.
    pip_extra: str | None = None
    # The Python modules its collections and inventory reader import, by the pip package that
    # provides each: the hint a missing module fails with.
    python_packages: Mapping[str, str] = field(default_factory=dict)
    # The Ansible collections its tasks use, by name, at the version the image and tests pin.
    collections: Mapping[str, str] = field(default_factory=dict)
    # `module:Class` of its inventory reader (`<name>:<site.yaml>` in the settings), if any.
    inventory: str | None = None


@functools.cache
def hypervisors() -> dict[str, Hypervisor]:
    """Every hypervisor, by name: each directory here with a declaration."""
    found: dict[str, Hypervisor] = {}
    for directory in sorted(HYPERVISORS_DIR.iterdir()):
        if not (directory / "__init__.py").is_file():
            continue
        declared = importlib.import_module(f"{__name__}.{directory.name}").HYPERVISOR
        if not isinstance(declared, Hypervisor) or declared.name != directory.name:
            raise TypeError(f"hypervisors/{directory.name}: HYPERVISOR must declare its own name")
        found[declared.name] = declared
    return found


def plugin_dirs(kind: str) -> list[Path]:
    """The hypervisors' own Ansible plugins of `kind` (`action_plugins`, `library`), each in
    its hypervisor's directory: every playbook run names them (ANSIBLE_ACTION_PLUGINS,
    ANSIBLE_LIBRARY), since Ansible looks beside the playbook only."""
    dirs = (HYPERVISORS_DIR / name / kind for name in hypervisors())
    return [d for d in dirs if d.is_dir()]


def python_packages() -> dict[str, str]:
    """Every hypervisor's Python modules, by the pip package that provides each."""
    return {m: p for h in hypervisors().values() for m, p in h.python_packages.items()}


def ansible_collections() -> dict[str, str]:
    """Every hypervisor's Ansible collections, by name, at their pinned versions."""
    return {c: v for h in hypervisors().values() for c, v in h.collections.items()}
