from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.drain_policy import DrainPolicy
from ..models.prepare_body_on_unhealthy import PrepareBodyOnUnhealthy
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.activity_timeouts import ActivityTimeouts
  from ..models.near import Near
  from ..models.node_affinity import NodeAffinity
  from ..models.prepare_body_annotations import PrepareBodyAnnotations
  from ..models.prepare_body_devices import PrepareBodyDevices
  from ..models.prepare_body_node_selector import PrepareBodyNodeSelector
  from ..models.toleration import Toleration
  from ..models.topology_spread_constraint import TopologySpreadConstraint
  from ..models.window import Window





T = TypeVar("T", bound="PrepareBody")



@_attrs_define
class PrepareBody:
    """ The request of `POST /spare/prepare`: a spare request, `count` times.

        Attributes:
            cpu (int):
            memory_mb (int):
            request_id (str):
            cluster (str):
            gpu (int | Unset):  Default: 0.
            disk_gb (int | Unset):  Default: 0.
            devices (PrepareBodyDevices | Unset):
            inventory (str | Unset):  Default: 'default'.
            pool (None | str | Unset):
            dedicated (bool | Unset):  Default: False.
            tolerations (list[Toleration] | Unset):
            node_selector (PrepareBodyNodeSelector | Unset):
            node_affinity (NodeAffinity | None | Unset):
            anti_affinity_group (None | str | Unset):
            anti_affinity_scope (str | Unset):  Default: 'host'.
            topology_spread (list[TopologySpreadConstraint] | Unset):
            near (Near | None | Unset):
            template (None | str | Unset):
            create_timeout_seconds (int | Unset):  Default: 1200.
            ready_timeout_seconds (int | Unset):  Default: 900.
            drain_timeout_seconds (int | Unset):  Default: 600.
            drain_policy (DrainPolicy | None | Unset):
            unhealthy_after_seconds (int | Unset):  Default: 300.
            on_unhealthy (PrepareBodyOnUnhealthy | Unset):  Default: PrepareBodyOnUnhealthy.NOTIFY.
            max_unhealthy (int | Unset):  Default: 1.
            avoid_hosts (list[str] | Unset):
            vmid_range (None | str | Unset):
            vmid_regex (None | str | Unset):
            annotations (PrepareBodyAnnotations | Unset):
            replaces (None | str | Unset):
            ttl_seconds (int | Unset):  Default: 21600.
            receivers (list[str] | None | Unset):
            wait_for_capacity (bool | Unset):  Default: False.
            capacity_deadline_seconds (int | Unset):  Default: 1800.
            priority (int | Unset):  Default: 0.
            timeouts (ActivityTimeouts | Unset):
            warm_pool (None | str | Unset):
            window (None | Unset | Window):
            rehearsal_of (None | str | Unset):
            count (int | Unset): How many spares; more than one form a group (`anti_affinity_group`, default the request_id,
                scope host) that anti-affinity and `topology_spread` count Default: 1.
            partial (bool | Unset): With `count` > 1: false (default) reserves all N spares together or none (409
                `no_capacity` saying how many could be placed); true starts all N and each takes a host if one is free, so some
                may fail with no_capacity Default: False.
     """

    cpu: int
    memory_mb: int
    request_id: str
    cluster: str
    gpu: int | Unset = 0
    disk_gb: int | Unset = 0
    devices: PrepareBodyDevices | Unset = UNSET
    inventory: str | Unset = 'default'
    pool: None | str | Unset = UNSET
    dedicated: bool | Unset = False
    tolerations: list[Toleration] | Unset = UNSET
    node_selector: PrepareBodyNodeSelector | Unset = UNSET
    node_affinity: NodeAffinity | None | Unset = UNSET
    anti_affinity_group: None | str | Unset = UNSET
    anti_affinity_scope: str | Unset = 'host'
    topology_spread: list[TopologySpreadConstraint] | Unset = UNSET
    near: Near | None | Unset = UNSET
    template: None | str | Unset = UNSET
    create_timeout_seconds: int | Unset = 1200
    ready_timeout_seconds: int | Unset = 900
    drain_timeout_seconds: int | Unset = 600
    drain_policy: DrainPolicy | None | Unset = UNSET
    unhealthy_after_seconds: int | Unset = 300
    on_unhealthy: PrepareBodyOnUnhealthy | Unset = PrepareBodyOnUnhealthy.NOTIFY
    max_unhealthy: int | Unset = 1
    avoid_hosts: list[str] | Unset = UNSET
    vmid_range: None | str | Unset = UNSET
    vmid_regex: None | str | Unset = UNSET
    annotations: PrepareBodyAnnotations | Unset = UNSET
    replaces: None | str | Unset = UNSET
    ttl_seconds: int | Unset = 21600
    receivers: list[str] | None | Unset = UNSET
    wait_for_capacity: bool | Unset = False
    capacity_deadline_seconds: int | Unset = 1800
    priority: int | Unset = 0
    timeouts: ActivityTimeouts | Unset = UNSET
    warm_pool: None | str | Unset = UNSET
    window: None | Unset | Window = UNSET
    rehearsal_of: None | str | Unset = UNSET
    count: int | Unset = 1
    partial: bool | Unset = False





    def to_dict(self) -> dict[str, Any]:
        from ..models.activity_timeouts import ActivityTimeouts # noqa: PLC0415
        from ..models.near import Near # noqa: PLC0415
        from ..models.node_affinity import NodeAffinity # noqa: PLC0415
        from ..models.prepare_body_annotations import PrepareBodyAnnotations # noqa: PLC0415
        from ..models.prepare_body_devices import PrepareBodyDevices # noqa: PLC0415
        from ..models.prepare_body_node_selector import PrepareBodyNodeSelector # noqa: PLC0415
        from ..models.toleration import Toleration # noqa: PLC0415
        from ..models.topology_spread_constraint import TopologySpreadConstraint # noqa: PLC0415
        from ..models.window import Window # noqa: PLC0415
        cpu = self.cpu

        memory_mb = self.memory_mb

        request_id = self.request_id

        cluster = self.cluster

        gpu = self.gpu

        disk_gb = self.disk_gb

        devices: dict[str, Any] | Unset = UNSET
        if not isinstance(self.devices, Unset):
            devices = self.devices.to_dict()

        inventory = self.inventory

        pool: None | str | Unset
        if isinstance(self.pool, Unset):
            pool = UNSET
        else:
            pool = self.pool

        dedicated = self.dedicated

        tolerations: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.tolerations, Unset):
            tolerations = []
            for tolerations_item_data in self.tolerations:
                tolerations_item = tolerations_item_data.to_dict()
                tolerations.append(tolerations_item)



        node_selector: dict[str, Any] | Unset = UNSET
        if not isinstance(self.node_selector, Unset):
            node_selector = self.node_selector.to_dict()

        node_affinity: dict[str, Any] | None | Unset
        if isinstance(self.node_affinity, Unset):
            node_affinity = UNSET
        elif isinstance(self.node_affinity, NodeAffinity):
            node_affinity = self.node_affinity.to_dict()
        else:
            node_affinity = self.node_affinity

        anti_affinity_group: None | str | Unset
        if isinstance(self.anti_affinity_group, Unset):
            anti_affinity_group = UNSET
        else:
            anti_affinity_group = self.anti_affinity_group

        anti_affinity_scope = self.anti_affinity_scope

        topology_spread: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.topology_spread, Unset):
            topology_spread = []
            for topology_spread_item_data in self.topology_spread:
                topology_spread_item = topology_spread_item_data.to_dict()
                topology_spread.append(topology_spread_item)



        near: dict[str, Any] | None | Unset
        if isinstance(self.near, Unset):
            near = UNSET
        elif isinstance(self.near, Near):
            near = self.near.to_dict()
        else:
            near = self.near

        template: None | str | Unset
        if isinstance(self.template, Unset):
            template = UNSET
        else:
            template = self.template

        create_timeout_seconds = self.create_timeout_seconds

        ready_timeout_seconds = self.ready_timeout_seconds

        drain_timeout_seconds = self.drain_timeout_seconds

        drain_policy: None | str | Unset
        if isinstance(self.drain_policy, Unset):
            drain_policy = UNSET
        elif isinstance(self.drain_policy, DrainPolicy):
            drain_policy = self.drain_policy.value
        else:
            drain_policy = self.drain_policy

        unhealthy_after_seconds = self.unhealthy_after_seconds

        on_unhealthy: str | Unset = UNSET
        if not isinstance(self.on_unhealthy, Unset):
            on_unhealthy = self.on_unhealthy.value


        max_unhealthy = self.max_unhealthy

        avoid_hosts: list[str] | Unset = UNSET
        if not isinstance(self.avoid_hosts, Unset):
            avoid_hosts = self.avoid_hosts



        vmid_range: None | str | Unset
        if isinstance(self.vmid_range, Unset):
            vmid_range = UNSET
        else:
            vmid_range = self.vmid_range

        vmid_regex: None | str | Unset
        if isinstance(self.vmid_regex, Unset):
            vmid_regex = UNSET
        else:
            vmid_regex = self.vmid_regex

        annotations: dict[str, Any] | Unset = UNSET
        if not isinstance(self.annotations, Unset):
            annotations = self.annotations.to_dict()

        replaces: None | str | Unset
        if isinstance(self.replaces, Unset):
            replaces = UNSET
        else:
            replaces = self.replaces

        ttl_seconds = self.ttl_seconds

        receivers: list[str] | None | Unset
        if isinstance(self.receivers, Unset):
            receivers = UNSET
        elif isinstance(self.receivers, list):
            receivers = self.receivers


        else:
            receivers = self.receivers

        wait_for_capacity = self.wait_for_capacity

        capacity_deadline_seconds = self.capacity_deadline_seconds

        priority = self.priority

        timeouts: dict[str, Any] | Unset = UNSET
        if not isinstance(self.timeouts, Unset):
            timeouts = self.timeouts.to_dict()

        warm_pool: None | str | Unset
        if isinstance(self.warm_pool, Unset):
            warm_pool = UNSET
        else:
            warm_pool = self.warm_pool

        window: dict[str, Any] | None | Unset
        if isinstance(self.window, Unset):
            window = UNSET
        elif isinstance(self.window, Window):
            window = self.window.to_dict()
        else:
            window = self.window

        rehearsal_of: None | str | Unset
        if isinstance(self.rehearsal_of, Unset):
            rehearsal_of = UNSET
        else:
            rehearsal_of = self.rehearsal_of

        count = self.count

        partial = self.partial


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "cpu": cpu,
            "memory_mb": memory_mb,
            "request_id": request_id,
            "cluster": cluster,
        })
        if gpu is not UNSET:
            field_dict["gpu"] = gpu
        if disk_gb is not UNSET:
            field_dict["disk_gb"] = disk_gb
        if devices is not UNSET:
            field_dict["devices"] = devices
        if inventory is not UNSET:
            field_dict["inventory"] = inventory
        if pool is not UNSET:
            field_dict["pool"] = pool
        if dedicated is not UNSET:
            field_dict["dedicated"] = dedicated
        if tolerations is not UNSET:
            field_dict["tolerations"] = tolerations
        if node_selector is not UNSET:
            field_dict["node_selector"] = node_selector
        if node_affinity is not UNSET:
            field_dict["node_affinity"] = node_affinity
        if anti_affinity_group is not UNSET:
            field_dict["anti_affinity_group"] = anti_affinity_group
        if anti_affinity_scope is not UNSET:
            field_dict["anti_affinity_scope"] = anti_affinity_scope
        if topology_spread is not UNSET:
            field_dict["topology_spread"] = topology_spread
        if near is not UNSET:
            field_dict["near"] = near
        if template is not UNSET:
            field_dict["template"] = template
        if create_timeout_seconds is not UNSET:
            field_dict["create_timeout_seconds"] = create_timeout_seconds
        if ready_timeout_seconds is not UNSET:
            field_dict["ready_timeout_seconds"] = ready_timeout_seconds
        if drain_timeout_seconds is not UNSET:
            field_dict["drain_timeout_seconds"] = drain_timeout_seconds
        if drain_policy is not UNSET:
            field_dict["drain_policy"] = drain_policy
        if unhealthy_after_seconds is not UNSET:
            field_dict["unhealthy_after_seconds"] = unhealthy_after_seconds
        if on_unhealthy is not UNSET:
            field_dict["on_unhealthy"] = on_unhealthy
        if max_unhealthy is not UNSET:
            field_dict["max_unhealthy"] = max_unhealthy
        if avoid_hosts is not UNSET:
            field_dict["avoid_hosts"] = avoid_hosts
        if vmid_range is not UNSET:
            field_dict["vmid_range"] = vmid_range
        if vmid_regex is not UNSET:
            field_dict["vmid_regex"] = vmid_regex
        if annotations is not UNSET:
            field_dict["annotations"] = annotations
        if replaces is not UNSET:
            field_dict["replaces"] = replaces
        if ttl_seconds is not UNSET:
            field_dict["ttl_seconds"] = ttl_seconds
        if receivers is not UNSET:
            field_dict["receivers"] = receivers
        if wait_for_capacity is not UNSET:
            field_dict["wait_for_capacity"] = wait_for_capacity
        if capacity_deadline_seconds is not UNSET:
            field_dict["capacity_deadline_seconds"] = capacity_deadline_seconds
        if priority is not UNSET:
            field_dict["priority"] = priority
        if timeouts is not UNSET:
            field_dict["timeouts"] = timeouts
        if warm_pool is not UNSET:
            field_dict["warm_pool"] = warm_pool
        if window is not UNSET:
            field_dict["window"] = window
        if rehearsal_of is not UNSET:
            field_dict["rehearsal_of"] = rehearsal_of
        if count is not UNSET:
            field_dict["count"] = count
        if partial is not UNSET:
            field_dict["partial"] = partial

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.activity_timeouts import ActivityTimeouts # noqa: PLC0415
        from ..models.near import Near # noqa: PLC0415
        from ..models.node_affinity import NodeAffinity # noqa: PLC0415
        from ..models.prepare_body_annotations import PrepareBodyAnnotations # noqa: PLC0415
        from ..models.prepare_body_devices import PrepareBodyDevices # noqa: PLC0415
        from ..models.prepare_body_node_selector import PrepareBodyNodeSelector # noqa: PLC0415
        from ..models.toleration import Toleration # noqa: PLC0415
        from ..models.topology_spread_constraint import TopologySpreadConstraint # noqa: PLC0415
        from ..models.window import Window # noqa: PLC0415
        d = dict(src_dict)
        cpu = d.pop("cpu")

        memory_mb = d.pop("memory_mb")

        request_id = d.pop("request_id")

        cluster = d.pop("cluster")

        gpu = d.pop("gpu", UNSET)

        disk_gb = d.pop("disk_gb", UNSET)

        _devices = d.pop("devices", UNSET)
        devices: PrepareBodyDevices | Unset
        if isinstance(_devices,  Unset):
            devices = UNSET
        else:
            devices = PrepareBodyDevices.from_dict(_devices)




        inventory = d.pop("inventory", UNSET)

        def _parse_pool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pool = _parse_pool(d.pop("pool", UNSET))


        dedicated = d.pop("dedicated", UNSET)

        _tolerations = d.pop("tolerations", UNSET)
        tolerations: list[Toleration] | Unset = UNSET
        if _tolerations is not UNSET:
            tolerations = []
            for tolerations_item_data in _tolerations:
                tolerations_item = Toleration.from_dict(tolerations_item_data)



                tolerations.append(tolerations_item)


        _node_selector = d.pop("node_selector", UNSET)
        node_selector: PrepareBodyNodeSelector | Unset
        if isinstance(_node_selector,  Unset):
            node_selector = UNSET
        else:
            node_selector = PrepareBodyNodeSelector.from_dict(_node_selector)




        def _parse_node_affinity(data: object) -> NodeAffinity | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                node_affinity_type_0 = NodeAffinity.from_dict(data)



                return node_affinity_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NodeAffinity | None | Unset, data)

        node_affinity = _parse_node_affinity(d.pop("node_affinity", UNSET))


        def _parse_anti_affinity_group(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        anti_affinity_group = _parse_anti_affinity_group(d.pop("anti_affinity_group", UNSET))


        anti_affinity_scope = d.pop("anti_affinity_scope", UNSET)

        _topology_spread = d.pop("topology_spread", UNSET)
        topology_spread: list[TopologySpreadConstraint] | Unset = UNSET
        if _topology_spread is not UNSET:
            topology_spread = []
            for topology_spread_item_data in _topology_spread:
                topology_spread_item = TopologySpreadConstraint.from_dict(topology_spread_item_data)



                topology_spread.append(topology_spread_item)


        def _parse_near(data: object) -> Near | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                near_type_0 = Near.from_dict(data)



                return near_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Near | None | Unset, data)

        near = _parse_near(d.pop("near", UNSET))


        def _parse_template(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        template = _parse_template(d.pop("template", UNSET))


        create_timeout_seconds = d.pop("create_timeout_seconds", UNSET)

        ready_timeout_seconds = d.pop("ready_timeout_seconds", UNSET)

        drain_timeout_seconds = d.pop("drain_timeout_seconds", UNSET)

        def _parse_drain_policy(data: object) -> DrainPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                drain_policy_type_0 = DrainPolicy(data)



                return drain_policy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DrainPolicy | None | Unset, data)

        drain_policy = _parse_drain_policy(d.pop("drain_policy", UNSET))


        unhealthy_after_seconds = d.pop("unhealthy_after_seconds", UNSET)

        _on_unhealthy = d.pop("on_unhealthy", UNSET)
        on_unhealthy: PrepareBodyOnUnhealthy | Unset
        if isinstance(_on_unhealthy,  Unset):
            on_unhealthy = UNSET
        else:
            on_unhealthy = PrepareBodyOnUnhealthy(_on_unhealthy)




        max_unhealthy = d.pop("max_unhealthy", UNSET)

        avoid_hosts = cast(list[str], d.pop("avoid_hosts", UNSET))


        def _parse_vmid_range(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        vmid_range = _parse_vmid_range(d.pop("vmid_range", UNSET))


        def _parse_vmid_regex(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        vmid_regex = _parse_vmid_regex(d.pop("vmid_regex", UNSET))


        _annotations = d.pop("annotations", UNSET)
        annotations: PrepareBodyAnnotations | Unset
        if isinstance(_annotations,  Unset):
            annotations = UNSET
        else:
            annotations = PrepareBodyAnnotations.from_dict(_annotations)




        def _parse_replaces(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replaces = _parse_replaces(d.pop("replaces", UNSET))


        ttl_seconds = d.pop("ttl_seconds", UNSET)

        def _parse_receivers(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                receivers_type_0 = cast(list[str], data)

                return receivers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        receivers = _parse_receivers(d.pop("receivers", UNSET))


        wait_for_capacity = d.pop("wait_for_capacity", UNSET)

        capacity_deadline_seconds = d.pop("capacity_deadline_seconds", UNSET)

        priority = d.pop("priority", UNSET)

        _timeouts = d.pop("timeouts", UNSET)
        timeouts: ActivityTimeouts | Unset
        if isinstance(_timeouts,  Unset):
            timeouts = UNSET
        else:
            timeouts = ActivityTimeouts.from_dict(_timeouts)




        def _parse_warm_pool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        warm_pool = _parse_warm_pool(d.pop("warm_pool", UNSET))


        def _parse_window(data: object) -> None | Unset | Window:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                window_type_0 = Window.from_dict(data)



                return window_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | Window, data)

        window = _parse_window(d.pop("window", UNSET))


        def _parse_rehearsal_of(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        rehearsal_of = _parse_rehearsal_of(d.pop("rehearsal_of", UNSET))


        count = d.pop("count", UNSET)

        partial = d.pop("partial", UNSET)

        prepare_body = cls(
            cpu=cpu,
            memory_mb=memory_mb,
            request_id=request_id,
            cluster=cluster,
            gpu=gpu,
            disk_gb=disk_gb,
            devices=devices,
            inventory=inventory,
            pool=pool,
            dedicated=dedicated,
            tolerations=tolerations,
            node_selector=node_selector,
            node_affinity=node_affinity,
            anti_affinity_group=anti_affinity_group,
            anti_affinity_scope=anti_affinity_scope,
            topology_spread=topology_spread,
            near=near,
            template=template,
            create_timeout_seconds=create_timeout_seconds,
            ready_timeout_seconds=ready_timeout_seconds,
            drain_timeout_seconds=drain_timeout_seconds,
            drain_policy=drain_policy,
            unhealthy_after_seconds=unhealthy_after_seconds,
            on_unhealthy=on_unhealthy,
            max_unhealthy=max_unhealthy,
            avoid_hosts=avoid_hosts,
            vmid_range=vmid_range,
            vmid_regex=vmid_regex,
            annotations=annotations,
            replaces=replaces,
            ttl_seconds=ttl_seconds,
            receivers=receivers,
            wait_for_capacity=wait_for_capacity,
            capacity_deadline_seconds=capacity_deadline_seconds,
            priority=priority,
            timeouts=timeouts,
            warm_pool=warm_pool,
            window=window,
            rehearsal_of=rehearsal_of,
            count=count,
            partial=partial,
        )

        return prepare_body

