"""The lab hypervisor: a loopback HTTP service of `virtflow dev` (lab/hypervisor.py)."""

from hypervisors import Hypervisor

HYPERVISOR = Hypervisor(name="lab")
