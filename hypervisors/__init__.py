"""The hypervisors virtflow drives, one directory each, with everything about it together.

`hypervisors/<name>/` holds `create.yml`, `destroy.yml` and `describe.yml` (the tasks the
playbooks in `playbooks/` include for `provider: <name>`, with their helpers and `templates/`),
optionally `inventory.py` (the `<name>:<site.yaml>` inventory source, read from the
hypervisor's own API and a site file) and `README.md` (the extravars it reads, its site file,
what to install). A fourth hypervisor is a fourth directory, plus a line in `SITE_INVENTORIES`
when it has an inventory reader (read through `hypervisors/inventory.py`).
"""

from __future__ import annotations

from pathlib import Path

HYPERVISORS_DIR = Path(__file__).resolve().parent

# Inventory specs `<name>:<site.yaml>` and the class that reads one: module, class. Imported
# only when a site names one, so a worker needs a hypervisor's client library only if it uses it.
SITE_INVENTORIES = {
    "libvirt": ("hypervisors.libvirt.inventory", "LibvirtInventory"),
    "proxmox": ("hypervisors.proxmox.inventory", "ProxmoxInventory"),
}
