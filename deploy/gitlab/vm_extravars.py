"""Turn a virtflow VM pipeline's variables into the playbooks' extravars (JSON on stdout).

    python3 deploy/gitlab/vm_extravars.py > vm_vars.json
    ansible-playbook playbooks/create_vm.yml -e @vm_vars.json

Reads the trigger variables virtflow sends (VM_NAME, VM_HOST, VM_CPU, ...; see
docs/GITLAB.md) and the project's own VIRTFLOW_PROVIDER and VIRTFLOW_EXTRAVARS (a JSON object
of site extravars such as libvirt_uri_template). Standard library only, so any image with
Python 3 runs it. Request values are tagged unsafe, exactly as virtflow's ansible-runner path
does: `{{ ... }}` in a label or in user data stays data and is never templated.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

# Trigger variable -> extravar, and how to read it.
INTS = {
    "VM_CPU": "vm_cpu",
    "VM_MEMORY_MB": "vm_memory_mb",
    "VM_GPU": "vm_gpu",
    "VM_VMID": "vm_vmid",
}
STRINGS = {
    "VM_NAME": "vm_name",
    "VM_HOST": "vm_host",
    "VM_ANTI_AFFINITY_GROUP": "vm_anti_affinity_group",
    "VM_IMAGE": "vm_image",
    "VM_NETWORK": "vm_network",
    "VM_USER_DATA": "vm_user_data",
}


def as_data(value: Any) -> Any:
    """Ansible's JSON decoder reads {"__ansible_unsafe": s} as s tagged unsafe."""
    if isinstance(value, str):
        return {"__ansible_unsafe": value}
    if isinstance(value, dict):
        return {key: as_data(item) for key, item in value.items()}
    return value


def extravars(env: dict[str, str]) -> dict[str, Any]:
    site = json.loads(env.get("VIRTFLOW_EXTRAVARS") or "{}")
    if not isinstance(site, dict):
        raise ValueError("VIRTFLOW_EXTRAVARS must be a JSON object")
    request: dict[str, Any] = {name: None for name in [*INTS.values(), *STRINGS.values()]}
    request["vm_gpu"] = 0
    for var, name in STRINGS.items():
        if env.get(var):
            request[name] = env[var]
    for var, name in INTS.items():
        if env.get(var):
            request[name] = int(env[var])
    labels = json.loads(env.get("VM_LABELS") or "{}")
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError("VM_LABELS must be a JSON object of strings")
    request["vm_labels"] = labels
    provider = env.get("VIRTFLOW_PROVIDER") or site.get("provider")
    if not provider:
        raise ValueError(
            "set VIRTFLOW_PROVIDER (lab, libvirt or proxmox) in the project's variables"
        )
    return {**site, **as_data(request), "provider": provider}


def main() -> int:
    try:
        json.dump(extravars(dict(os.environ)), sys.stdout)
    except ValueError as err:
        print(f"vm_extravars: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
