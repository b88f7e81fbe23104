"""Plugin names and rejection keywords, defined once: policies, explanations and tests use these."""

from typing import Final

# Plugin names (kube-scheduler spelling where one exists).
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
NODE_NAME: Final = "NodeName"
POOL: Final = "Pool"
DEDICATED: Final = "Dedicated"
VM_QUOTA: Final = "VmQuota"
TAINT_TOLERATION: Final = "TaintToleration"
NODE_AFFINITY: Final = "NodeAffinity"
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
ANTI_AFFINITY: Final = "AntiAffinity"
BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
MIN_FREE_RESOURCES: Final = "MinFreeResources"
RESOURCE_THRESHOLD: Final = "ResourceThreshold"
RESOURCE_ALIGNMENT: Final = "ResourceAlignment"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
NEAR: Final = "Near"

# Topology keys with a meaning of their own; any other key is a host label.
TOPOLOGY_HOST: Final = "host"
TOPOLOGY_RACK: Final = "rack"

# Rejection keywords, in the order the filters run (PLACEMENT.md, table of filters).
UNSCHEDULABLE: Final = "unschedulable"
NODE_NAME_MISMATCH: Final = "node_name_mismatch"
NODE_NAME_REGEX_MISMATCH: Final = "node_name_regex_mismatch"
POOL_MISMATCH: Final = "pool_mismatch"
DEDICATED_REQUIRED: Final = "dedicated_required"
DEDICATED_HOST_RESERVED: Final = "dedicated_host_reserved"
DEDICATED_HOST_OCCUPIED: Final = "dedicated_host_occupied"
VM_QUOTA_EXCEEDED: Final = "vm_quota_exceeded"
UNTOLERATED_TAINT: Final = "untolerated_taint"
NODE_SELECTOR_MISMATCH: Final = "node_selector_mismatch"
NODE_AFFINITY_MISMATCH: Final = "node_affinity_mismatch"
INSUFFICIENT_CPU: Final = "insufficient_cpu"
INSUFFICIENT_MEMORY: Final = "insufficient_memory"
INSUFFICIENT_GPU: Final = "insufficient_gpu"
INSUFFICIENT_DISK: Final = "insufficient_disk"
INSUFFICIENT_DEVICE: Final = "insufficient_device"
ANTI_AFFINITY_CONFLICT: Final = "anti_affinity_conflict"
TOPOLOGY_SPREAD_VIOLATION: Final = "topology_spread_violation"
NOT_NEAR: Final = "not_near"
# Policy-configured minimum free resources after placement.
BELOW_MIN_FREE_CPU: Final = "below_min_free_cpu"
BELOW_MIN_FREE_MEMORY: Final = "below_min_free_memory"
BELOW_MIN_FREE_GPU: Final = "below_min_free_gpu"

# Decision errors.
NO_HOST_FITS: Final = "no_host_fits"
NO_VMID_AVAILABLE: Final = "no_vmid_available"
NEAR_UNKNOWN: Final = "near_unknown"

# Entry-point group through which a site adds plugins.
ENTRY_POINT_GROUP: Final = "virtflow.placement.plugins"

# Default plugin weights (PLACEMENT.md, Policy).
DEFAULT_PLUGIN_WEIGHTS: Final[dict[str, int]] = {
    NODE_RESOURCES_FIT: 1,
    BALANCED_ALLOCATION: 1,
    TAINT_TOLERATION: 3,
    NODE_AFFINITY: 2,
    POD_TOPOLOGY_SPREAD: 2,
    NEAR: 2,
}

# The filters that judge a request's own constraints, not its host's state: what a VM placed
# already has passed, and what is not kept with its reservation (booked_hosts, extension).
REQUEST_FILTERS: Final = (
    NODE_NAME,
    POOL,
    DEDICATED,
    TAINT_TOLERATION,
    NODE_AFFINITY,
    ANTI_AFFINITY,
    POD_TOPOLOGY_SPREAD,
    NEAR,
)
