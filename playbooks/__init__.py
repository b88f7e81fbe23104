"""The Ansible playbooks, shipped inside the package so an installed virtflow finds them
(`playbook_dir`'s default) without a source tree: create, destroy and describe a VM, each
including the chosen hypervisor's tasks from `hypervisors/<hypervisor>/` beside this directory."""

from pathlib import Path

PLAYBOOK_DIR = Path(__file__).resolve().parent
