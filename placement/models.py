"""The placement input in its JSON form (PLACEMENT.md), as pydantic models.

Hosts ignore unknown fields because sites add their own (ip, serial, ...); the request and the
policy forbid them so that a typo is an error, not a silently ignored constraint.
"""

from __future__ import annotations

import itertools
import re
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .labels import check_device_name, check_label_key, check_label_value
from .names import DEFAULT_PLUGIN_WEIGHTS

# Large enough for any real host, small enough that `amount * 100` stays inside int64.
MAX_AMOUNT = 10**12
MAX_RATIO = 1000.0
MAX_VMID = 999_999_999
# The largest VM anyone may ask for: 4096 vCPUs, 64 TiB of memory, 64 GPUs, 1 PiB of disk,
# 64 of each device and 16 kinds of device.
MAX_VM_CPU = 4096
MAX_VM_MEMORY_MB = 64 * 1024 * 1024
MAX_VM_GPU = 64
MAX_VM_DISK_GB = 1024 * 1024
MAX_VM_DEVICES = 64
MAX_DEVICE_KINDS = 16

Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
Resource = Literal["cpu", "memory_mb", "gpu"]
Amount = Field(default=0, ge=0, le=MAX_AMOUNT)


def _unset_nulls(data: Any) -> Any:
    """Explicit null means "not set", as the Kubernetes Python client's `to_dict()` writes."""
    if isinstance(data, dict):
        return {key: value for key, value in data.items() if value is not None}
    return data


def _null_is_empty(empty: type[list[Any]] | type[dict[Any, Any]]) -> BeforeValidator:
    return BeforeValidator(lambda value: empty() if value is None else value)


# Kubernetes label syntax; a pydantic error names the offending key in its location.
LabelKey = Annotated[str, AfterValidator(check_label_key)]
LabelValue = Annotated[str, AfterValidator(check_label_value)]
# A label map as Kubernetes clients write it: null is an empty map.
LabelMap = Annotated[dict[LabelKey, LabelValue], _null_is_empty(dict)]
# `host`, `rack` or a label key: both names are valid label keys too.
TopologyKey = LabelKey
# A device (FPGA, SmartNIC, passed-through NVMe, ...) in extended-resource style, never `gpu`.
DeviceName = Annotated[str, AfterValidator(check_device_name)]
# Devices by name, as a host has them or a VM asks for them: null is none.
DeviceCounts = Annotated[
    dict[DeviceName, Annotated[int, Field(ge=0, le=MAX_AMOUNT)]], _null_is_empty(dict)
]


class Taint(BaseModel):
    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    key: str = Field(min_length=1)
    value: str = ""
    effect: Effect


class Toleration(BaseModel):
    """Kubernetes semantics: an empty key with Exists tolerates every taint.

    Accepts a Kubernetes client's toleration as it serialises it: null for unset fields, and
    `tolerationSeconds` (either spelling), which placement has no use for, ignored.
    """

    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    key: Annotated[str, AfterValidator(lambda key: key and check_label_key(key))] = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: LabelValue = ""
    effect: Effect | None = None

    _nulls = model_validator(mode="before")(_unset_nulls)

    @field_validator("effect", mode="before")
    @classmethod
    def _empty_effect_is_any(cls, value: Any) -> Any:
        return None if value == "" else value

    @model_validator(mode="after")
    def _check_operator(self) -> Toleration:
        if not self.key and self.operator != "Exists":
            raise ValueError("an empty key needs operator Exists")
        if self.operator == "Exists" and self.value:
            raise ValueError("operator Exists takes no value")
        return self

    def tolerates(self, taint: Taint) -> bool:
        if self.effect is not None and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


class MatchExpression(BaseModel):
    """A Kubernetes NodeSelectorRequirement; `values: null` is no values.

    The shape is checked as the Kubernetes API checks a Pod (values for In/NotIn, none for
    Exists/DoesNotExist, exactly one for Gt/Lt). A key or value that is not label syntax, or a
    Gt/Lt value that is not an integer, is accepted and matches no host, as kube-scheduler's
    nodeaffinity does with a requirement it cannot parse.
    """

    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    key: str = Field(max_length=1024)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[Annotated[str, Field(max_length=1024)]] = Field(
        default_factory=list, max_length=1024
    )

    _nulls = model_validator(mode="before")(_unset_nulls)

    @model_validator(mode="after")
    def _check_values(self) -> MatchExpression:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        if self.operator in ("Gt", "Lt") and len(self.values) != 1:
            raise ValueError(f"operator {self.operator} needs exactly one value")
        return self

    @cached_property
    def valid(self) -> bool:
        """Whether Kubernetes could parse it: label syntax, and an integer for Gt/Lt."""
        try:
            check_label_key(self.key)
            for value in self.values:
                check_label_value(value)
        except ValueError:
            return False
        return self.operator not in ("Gt", "Lt") or _as_int(self.values[0]) is not None

    def matches(self, labels: dict[str, str]) -> bool:
        if not self.valid:
            return False
        value = labels.get(self.key)
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        have = _as_int(value) if value is not None else None
        if have is None:
            return False
        want = int(self.values[0])
        return have > want if self.operator == "Gt" else have < want


_INT64 = re.compile(r"[+-]?[0-9]+")


def _as_int(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): no spaces, no underscores, 64 bits."""
    if not _INT64.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


# A toleration list as Kubernetes clients write it: null is no tolerations.
Tolerations = Annotated[list[Toleration], _null_is_empty(list)]


class PreferredTerm(BaseModel):
    model_config = ConfigDict(frozen=True)

    weight: int = Field(ge=1, le=100)
    match: list[MatchExpression] = Field(min_length=1)


class NodeAffinity(BaseModel):
    """`required`: OR of terms, each an AND of expressions; an empty term matches no host (as in
    Kubernetes, where a Pod with only such terms stays Pending)."""

    required: list[list[MatchExpression]] = Field(default_factory=list)
    preferred: list[PreferredTerm] = Field(default_factory=list)

    _nulls = model_validator(mode="before")(_unset_nulls)


class Host(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    name: str = Field(min_length=1)
    pool: str | None = None
    dedicated: bool = False
    cpu_capacity: int = Field(ge=0, le=MAX_AMOUNT)
    cpu_allocated: int = Amount
    # None: the policy's default allocation ratio applies.
    cpu_allocation_ratio: float | None = Field(default=None, gt=0, le=MAX_RATIO)
    memory_mb_capacity: int = Field(ge=0, le=MAX_AMOUNT)
    memory_mb_allocated: int = Amount
    memory_allocation_ratio: float | None = Field(default=None, gt=0, le=MAX_RATIO)
    gpu_capacity: int = Amount
    gpu_allocated: int = Amount
    # Storage for VM disks; thin-provisioned storage overcommits like CPU (1.0: it does not).
    disk_gb_capacity: int = Amount
    disk_gb_allocated: int = Amount
    disk_allocation_ratio: float = Field(default=1.0, gt=0, le=MAX_RATIO)
    # Devices are never overcommitted; an absent name counts 0.
    devices_capacity: DeviceCounts = Field(default_factory=dict)
    devices_allocated: DeviceCounts = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    rack: str | None = None
    vm_count: int = Amount
    vm_quota: int | None = Field(default=None, ge=0, le=MAX_AMOUNT)
    unschedulable: bool = False

    @field_validator("taints")
    @classmethod
    def _one_of_each_taint(cls, taints: list[Taint]) -> list[Taint]:
        # A Node holds a taint once; an inventory that repeats one means the same taint, and
        # counting it twice would weigh the host down in TaintToleration.
        return list(dict.fromkeys(taints))


class ExistingVm(BaseModel):
    # Frozen: a host table keeps the last VMs it saw per group and knows the same objects
    # hold the same group and host (`HostTable.group_rows`).
    model_config = ConfigDict(frozen=True)

    name: str
    host: str
    group: str | None = None
    # The Kubernetes Node this VM runs as, when it differs from the VM's name.
    node: str | None = None

    @property
    def node_name(self) -> str:
        return self.node or self.name


class TopologySpreadConstraint(BaseModel):
    """Kubernetes' PodTopologySpread over the VMs of a group: at most `max_skew` more VMs in a
    domain than in the emptiest one. DoNotSchedule is a filter, ScheduleAnyway a score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topology_key: TopologyKey
    max_skew: int = Field(ge=1, le=MAX_AMOUNT)
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    # None: the request's anti_affinity_group.
    group: str | None = Field(default=None, min_length=1)


class Near(BaseModel):
    """Place the VM in the domain of the host of an existing VM (the node it replaces), named
    by the VM or by its Kubernetes Node (an existing VM whose `node`, else whose name, it is)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vm: str | None = Field(default=None, min_length=1)
    node: str | None = Field(default=None, min_length=1)
    topology_key: TopologyKey
    required: bool = True

    @model_validator(mode="after")
    def _one_target(self) -> Near:
        if (self.vm is None) == (self.node is None):
            raise ValueError("name either vm or node (exactly one)")
        return self

    @property
    def target(self) -> str:
        """`vm x` or `node x`, for messages."""
        return f"vm {self.vm!r}" if self.vm is not None else f"node {self.node!r}"


def spread_constraints_have_a_group(
    constraints: list[TopologySpreadConstraint], info: ValidationInfo
) -> list[TopologySpreadConstraint]:
    """Field validator of a request's `topology_spread`: a constraint without a group (its
    own, or the request's `anti_affinity_group`) would count nothing and spread nothing."""
    for i, constraint in enumerate(constraints):
        if constraint.group is None and info.data.get("anti_affinity_group") is None:
            raise ValueError(
                f"constraint {i} names no group and the request has no anti_affinity_group"
            )
    return constraints


class VmShape(BaseModel):
    """The size of one VM: the one place its fields and their bounds are declared.

    Every model that carries a VM's size (the spare request, the placement request, the
    reservation, the provisioner's VM spec, the lab hypervisor's body) extends it.
    """

    cpu: int = Field(gt=0, le=MAX_VM_CPU)
    memory_mb: int = Field(gt=0, le=MAX_VM_MEMORY_MB)
    gpu: int = Field(default=0, ge=0, le=MAX_VM_GPU)
    disk_gb: int = Field(default=0, ge=0, le=MAX_VM_DISK_GB)
    # Devices other than GPUs, by extended-resource name: {"xilinx.com/u250": 1}.
    devices: Annotated[
        dict[DeviceName, Annotated[int, Field(ge=0, le=MAX_VM_DEVICES)]], _null_is_empty(dict)
    ] = Field(default_factory=dict, max_length=MAX_DEVICE_KINDS)

    def shape(self) -> dict[str, Any]:
        """Only the size, as keyword arguments for another model that extends VmShape."""
        return {name: getattr(self, name) for name in VmShape.model_fields}


def parse_vmid_range(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if match is None:
        raise ValueError(f"expected 'a-b' with integers, got {text!r}")
    low, high = int(match[1]), int(match[2])
    if low > high:
        raise ValueError(f"range start {low} is above its end {high}")
    if high > MAX_VMID:
        raise ValueError(f"range end {high} is above {MAX_VMID}")
    return low, high


def compiled_regex(pattern: str) -> str:
    """Field validator of a regular expression: it must compile."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return pattern


def checked_vmid_range(text: str) -> str:
    """Field validator of a VM id range, "a-b" (parse_vmid_range)."""
    parse_vmid_range(text)
    return text


# A request's fields that say more than their type; each checked by one validator, wherever
# it is declared (the spare's request, the placement request).
REGEX = AfterValidator(compiled_regex)
VMID_RANGE = AfterValidator(checked_vmid_range)
Regex = Annotated[str, REGEX]
VmidRange = Annotated[str, VMID_RANGE]
TopologySpread = Annotated[
    list[TopologySpreadConstraint], AfterValidator(spread_constraints_have_a_group)
]


class VmRequest(VmShape):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    pool: str | None = None
    dedicated: bool = False
    tolerations: Tolerations = Field(default_factory=list)
    node_selector: LabelMap = Field(default_factory=dict)
    node_affinity: NodeAffinity | None = None
    anti_affinity_group: str | None = None
    # Any topology key; a host that lacks it falls back to host scope.
    anti_affinity_scope: TopologyKey = "host"
    topology_spread: TopologySpread = Field(default_factory=list, max_length=16)
    near: Near | None = None
    node_name: str | None = None
    node_name_regex: Regex | None = None
    vmid_range: VmidRange | None = None
    vmid_regex: Regex | None = None

    @classmethod
    def asked_by(cls, source: BaseModel, **given: Any) -> VmRequest:
        """The placement request of a model that declares its fields under the same names (a
        spare's request, a placement-only task): every field of both taken from `source`,
        what `given` names taken from there instead."""
        own = type(source).model_fields
        shared = {name: getattr(source, name) for name in cls.model_fields if name in own}
        return cls(**{**shared, **given})

    def spread_group(self, constraint: TopologySpreadConstraint) -> str:
        """The group whose VMs the constraint counts."""
        group = constraint.group or self.anti_affinity_group
        assert group is not None  # checked by TopologySpread's validator
        return group

    @property
    def vmid_bounds(self) -> tuple[int, int] | None:
        return parse_vmid_range(self.vmid_range) if self.vmid_range else None


class ShapePoint(BaseModel):
    """One point of the RequestedToCapacityRatio shape: utilisation % -> score (0..100)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    utilization: int = Field(ge=0, le=100)
    score: int = Field(ge=0, le=100)


class ResourceWeights(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpu: int = Field(default=1, ge=0, le=1000)
    memory_mb: int = Field(default=1, ge=0, le=1000)
    # 0: disk is filtered but not scored (a positive weight adds it to the resource scores).
    disk_gb: int = Field(default=0, ge=0, le=1000)

    @model_validator(mode="after")
    def _not_all_zero(self) -> ResourceWeights:
        if self.cpu + self.memory_mb + self.disk_gb == 0:
            raise ValueError("at least one resource weight must be positive")
        return self


class AllocationRatios(BaseModel):
    """Defaults for hosts that do not set their own overcommit ratio."""

    model_config = ConfigDict(extra="forbid")

    cpu: float = Field(default=1.0, gt=0, le=MAX_RATIO)
    memory_mb: float = Field(default=1.0, gt=0, le=MAX_RATIO)


class Thresholds(BaseModel):
    """Resource thresholds: a preference (score) and a requirement (filter)."""

    model_config = ConfigDict(extra="forbid")

    # Prefer hosts whose use after placement stays at or under this percentage.
    prefer_below_percent: dict[Resource, int] = Field(default_factory=dict)
    # Reject hosts that would keep less than this free after placement.
    min_free: dict[Resource, int] = Field(default_factory=dict)

    @field_validator("prefer_below_percent")
    @classmethod
    def _percent(cls, value: dict[Resource, int]) -> dict[Resource, int]:
        for key, pct in value.items():
            if not 0 <= pct <= 100:
                raise ValueError(f"{key}: {pct} is not a percentage (0..100)")
        return value

    @field_validator("min_free")
    @classmethod
    def _non_negative(cls, value: dict[Resource, int]) -> dict[Resource, int]:
        for key, amount in value.items():
            if not 0 <= amount <= MAX_AMOUNT:
                raise ValueError(f"{key}: {amount} must be between 0 and {MAX_AMOUNT}")
        return value


def _default_shape() -> list[ShapePoint]:
    # kube-scheduler's default: an empty host scores best (spread).
    return [ShapePoint(utilization=0, score=100), ShapePoint(utilization=100, score=0)]


class Policy(BaseModel):
    """How the engine chooses. Plugin names are checked against the registry when loaded."""

    model_config = ConfigDict(extra="forbid")

    scoring_strategy: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = (
        "LeastAllocated"
    )
    ratio_shape: list[ShapePoint] = Field(default_factory=_default_shape, min_length=1)
    resource_weights: ResourceWeights = Field(default_factory=ResourceWeights)
    # Merged over the defaults: name a plugin to change its weight, 0 to leave it out.
    plugin_weights: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_PLUGIN_WEIGHTS))
    tie_break: Literal["name_asc"] = "name_asc"
    allow_shared_on_dedicated: bool = False
    enabled_plugins: list[str] = Field(default_factory=list)
    disabled_plugins: list[str] = Field(default_factory=list)
    plugin_args: dict[str, dict[str, Any]] = Field(default_factory=dict)
    allocation_ratios: AllocationRatios = Field(default_factory=AllocationRatios)
    thresholds: Thresholds = Field(default_factory=Thresholds)

    @field_validator("plugin_weights", mode="after")
    @classmethod
    def _merge_weights(cls, value: dict[str, int]) -> dict[str, int]:
        for name, weight in value.items():
            if not 0 <= weight <= 1000:
                raise ValueError(f"{name}: weight {weight} must be between 0 and 1000")
        return {**DEFAULT_PLUGIN_WEIGHTS, **value}

    @field_validator("ratio_shape")
    @classmethod
    def _increasing(cls, shape: list[ShapePoint]) -> list[ShapePoint]:
        for before, after in itertools.pairwise(shape):
            if after.utilization <= before.utilization:
                raise ValueError("utilization must strictly increase from point to point")
        return shape


class PlacementInput(BaseModel):
    policy: Policy = Field(default_factory=Policy)
    hosts: list[Host]
    existing_vms: list[ExistingVm] = Field(default_factory=list)
    used_vmids: list[int] = Field(default_factory=list)
    next_vmid: int | None = Field(default=None, ge=0, le=MAX_VMID)
    request: VmRequest

    @field_validator("hosts")
    @classmethod
    def _unique_names(cls, hosts: list[Host]) -> list[Host]:
        seen: dict[str, int] = {}
        for i, host in enumerate(hosts):
            if host.name in seen:
                raise ValueError(f"hosts.{i}.name: duplicate host name {host.name!r}")
            seen[host.name] = i
        return hosts
