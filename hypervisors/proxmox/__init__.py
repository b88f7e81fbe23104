"""A Proxmox VE cluster, through its API (README.md)."""

from hypervisors import Hypervisor

HYPERVISOR = Hypervisor(
    name="proxmox",
    pip_extra="proxmox",
    python_packages={"proxmoxer": "proxmoxer"},
    collections={"community.proxmox": "1.4.0"},
    inventory="hypervisors.proxmox.inventory:ProxmoxInventory",
)
