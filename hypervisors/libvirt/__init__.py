"""libvirt hosts, reached over SSH (README.md)."""

from hypervisors import Hypervisor

HYPERVISOR = Hypervisor(
    name="libvirt",
    pip_extra="libvirt",
    python_packages={"libvirt": "libvirt-python", "lxml": "lxml"},
    collections={"community.libvirt": "2.0.0"},
    inventory="hypervisors.libvirt.inventory:LibvirtInventory",
)
