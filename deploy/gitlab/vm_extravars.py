"""Turn a virtflow VM pipeline's variables into the playbooks' extravars (JSON on stdout).

    python3 deploy/gitlab/vm_extravars.py > vm_vars.json
    ansible-playbook playbooks/create_vm.yml -e @vm_vars.json

Reads the trigger variables virtflow sends (VM_NAME, VM_HOST, VM_CPU, ...; see
docs/GITLAB.md) and the project's own VIRTFLOW_HYPERVISOR and VIRTFLOW_EXTRAVARS (a JSON object
of site extravars such as libvirt_uri_template). Request values are tagged unsafe, exactly as
virtflow's ansible-runner path does: `{{ ... }}` in a label or in user data stays data and is
never templated.

The user data (it holds the VM's join token) arrives sealed, as VM_USER_DATA_SEALED: it opens
with the runner's own key (VIRTFLOW_USER_DATA_KEY_FILE, or VIRTFLOW_USER_DATA_KEY, set on the
runner, never in GitLab), only for the VM named VM_NAME and only within
VIRTFLOW_USER_DATA_TTL seconds (default 3600) of sealing. That needs `cryptography`, which
ansible-core brings; everything else is the standard library.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
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
}
SEALED = "VM_USER_DATA_SEALED"
KEY, KEY_FILE, TTL = (
    "VIRTFLOW_USER_DATA_KEY",
    "VIRTFLOW_USER_DATA_KEY_FILE",
    "VIRTFLOW_USER_DATA_TTL",
)
DEFAULT_TTL_SECONDS = 3600


def as_data(value: Any) -> Any:
    """Ansible's JSON decoder reads {"__ansible_unsafe": s} as s tagged unsafe."""
    if isinstance(value, str):
        return {"__ansible_unsafe": value}
    if isinstance(value, dict):
        return {key: as_data(item) for key, item in value.items()}
    return value


def unsealed_user_data(env: dict[str, str]) -> str | None:
    """The user data of VM_USER_DATA_SEALED, or None when the pipeline carries none."""
    sealed = env.get(SEALED)
    if not sealed:
        return None
    key = env.get(KEY) or (Path(env[KEY_FILE]).read_text().strip() if env.get(KEY_FILE) else "")
    if not key:
        raise ValueError(
            f"{SEALED} is set but this runner holds no key: set {KEY_FILE} (or {KEY}) in the "
            "runner's environment to virtflow's gitlab_user_data_key"
        )
    from cryptography.fernet import Fernet, InvalidToken

    ttl = int(env.get(TTL) or DEFAULT_TTL_SECONDS)
    try:
        sealed_for = json.loads(Fernet(key.encode()).decrypt(sealed.encode(), ttl=ttl))
    except InvalidToken:
        raise ValueError(
            f"{SEALED} does not open with this runner's key, or was sealed more than {ttl} s ago"
        ) from None
    if sealed_for.get("vm_name") != env.get("VM_NAME"):
        raise ValueError(f"{SEALED} was sealed for another VM, not {env.get('VM_NAME')}")
    user_data: str = sealed_for["user_data"]
    return user_data


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
    request["vm_user_data"] = unsealed_user_data(env)
    labels = json.loads(env.get("VM_LABELS") or "{}")
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError("VM_LABELS must be a JSON object of strings")
    request["vm_labels"] = labels
    taints = json.loads(env.get("VM_TAINTS") or "[]")
    if not isinstance(taints, list) or not all(isinstance(t, dict) for t in taints):
        raise ValueError("VM_TAINTS must be a JSON list of {key, value, effect} objects")
    request["vm_taints"] = taints
    hypervisor = env.get("VIRTFLOW_HYPERVISOR") or site.get("hypervisor")
    if not hypervisor:
        raise ValueError(
            "set VIRTFLOW_HYPERVISOR (lab, libvirt or proxmox) in the project's variables"
        )
    return {**site, **as_data(request), "hypervisor": hypervisor}


def main() -> int:
    try:
        json.dump(extravars(dict(os.environ)), sys.stdout)
    except ValueError as err:
        print(f"vm_extravars: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
