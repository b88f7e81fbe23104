"""The Ansible playbooks, shipped inside the package so an installed virtflow finds them
(`playbook_dir`'s default) without a source tree: create, destroy and describe a VM, with
`tasks/<provider>_<action>.yml` per provider and the libvirt domain template."""

from pathlib import Path

PLAYBOOK_DIR = Path(__file__).resolve().parent
