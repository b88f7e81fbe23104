"""Why a playbook run failed, and whether trying again may help: decided here, once.

A task's own message is final, unless the playbook marked it TRANSIENT (the hypervisor said
5xx, or did not answer) or it says the worker or the site lacks something (a Python module,
an Ansible collection, a variable): then it names what to install or set, and no retry runs.
An unreachable host, or a run killed before any task said why, may heal.
"""

from __future__ import annotations

import re
from typing import Any

from hypervisors import python_packages

from .contract import TRANSIENT_MARKER, ProvisioningFailed

# Messages of problems no retry can heal: the worker's environment or the site settings lack
# something. Each pattern's group names the missing piece.
_MISSING_MODULE = (
    re.compile(r"`?([\w.]+)`? (?:module|library) is not importable"),
    re.compile(r"Failed to import the required Python library \(([\w.-]+)\)"),
    re.compile(r"No module named '([\w.]+)'"),
)
_MISSING_COLLECTION = re.compile(r"couldn't resolve module/action '(\w+\.\w+)\.\w+'")
_UNDEFINED = re.compile(r"'(\w+)' is undefined")


def configuration_problem(message: str) -> str | None:
    """What to install or set, when `message` says the worker or the site lacks something."""
    for pattern in _MISSING_MODULE:
        if found := pattern.search(message):
            module = found.group(1).split(".")[0]
            # The hypervisors declare which package provides each module they need.
            package = python_packages().get(module, module)
            return (
                f"the Python module '{module}' is missing where the playbooks run: "
                f"install it into the worker's environment (pip install {package})"
            )
    if found := _MISSING_COLLECTION.search(message):
        return (
            f"the Ansible collection {found.group(1)} is not installed: install it "
            "(`make collections` extracts it) and point ANSIBLE_COLLECTIONS_PATH at it"
        )
    if found := _UNDEFINED.search(message):
        return f"the playbook variable '{found.group(1)}' is not set: add it to ansible_extravars"
    return None


def task_failure(data: dict[str, Any]) -> str:
    """The failed task's message; for a command, which task and the last line it wrote."""
    res = data.get("res") or {}
    message = str(res.get("msg") or f"task '{data.get('task', '?')}' failed")
    stderr = str(res.get("stderr") or "").strip()
    if stderr:
        message += f" ({data.get('task', 'command')}: {stderr.splitlines()[-1][:300]})"
    return message


def last_error(runner: Any) -> str | None:
    """The ERROR! line ansible-playbook prints when it stops before any task (no event)."""
    try:
        text = runner.stdout.read()
    except (AttributeError, OSError, ValueError):
        return None
    # ansible-core 2.19 writes "[ERROR]: ...", earlier releases "ERROR! ...".
    errors = [line for line in text.splitlines() if line.startswith(("ERROR!", "[ERROR]:"))]
    return errors[-1].split(maxsplit=1)[-1].strip() if errors else None


def first_line(message: str) -> str:
    return message.removeprefix(TRANSIENT_MARKER).strip().splitlines()[0][:300]


def run_failure(
    playbook: str, status: str, failure: str | None, stopped: str | None, *, unreachable: bool
) -> ProvisioningFailed:
    """The failure of a run that did not succeed: `failure` is the failed task's message,
    `stopped` the error ansible-playbook printed when it stopped before any task."""
    message = failure or stopped or f"{playbook} ended with status {status}"
    if hint := configuration_problem(message):
        # However the playbook labelled it, a missing piece does not appear by waiting.
        return ProvisioningFailed(f"{hint} ({first_line(message)})", transient=False)
    if message.startswith(TRANSIENT_MARKER):
        return ProvisioningFailed(message.removeprefix(TRANSIENT_MARKER).strip(), transient=True)
    # An unreachable host or a run that stopped before any task without saying why (a
    # killed process) may heal; a task that failed with its own message will not.
    transient = unreachable or (failure is None and stopped is None)
    return ProvisioningFailed(message, transient=transient)
