from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.phase import Phase
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.booking_info import BookingInfo
  from ..models.drain_node_result import DrainNodeResult
  from ..models.placed_topology import PlacedTopology
  from ..models.step_record import StepRecord
  from ..models.vm_facts import VmFacts
  from ..models.warm_info import WarmInfo





T = TypeVar("T", bound="SpareView")



@_attrs_define
class SpareView:
    """ The status query's answer, plus where to look and what the engine says of the run.

        Attributes:
            spare_id (str):
            cluster (str):
            ui_url (str):
            workflow_status (str):
            pool (None | str | Unset):
            phase (Phase | Unset):
            host (None | str | Unset):
            vmid (int | None | Unset):
            topology (None | PlacedTopology | Unset):
            vm (None | Unset | VmFacts):
            waiting_for (list[str] | Unset):
            error (None | str | Unset):
            disabled_receivers (list[str] | Unset):
            undelivered (list[str] | Unset):
            steps (list[StepRecord] | Unset):
            unhealthy (None | str | Unset):
            unhealthy_since (datetime.datetime | None | Unset):
            replaced_by (None | str | Unset):
            drain (DrainNodeResult | None | Unset):
            warm (None | Unset | WarmInfo):
            handed_to (None | str | Unset):
            booking (BookingInfo | None | Unset):
     """

    spare_id: str
    cluster: str
    ui_url: str
    workflow_status: str
    pool: None | str | Unset = UNSET
    phase: Phase | Unset = UNSET
    host: None | str | Unset = UNSET
    vmid: int | None | Unset = UNSET
    topology: None | PlacedTopology | Unset = UNSET
    vm: None | Unset | VmFacts = UNSET
    waiting_for: list[str] | Unset = UNSET
    error: None | str | Unset = UNSET
    disabled_receivers: list[str] | Unset = UNSET
    undelivered: list[str] | Unset = UNSET
    steps: list[StepRecord] | Unset = UNSET
    unhealthy: None | str | Unset = UNSET
    unhealthy_since: datetime.datetime | None | Unset = UNSET
    replaced_by: None | str | Unset = UNSET
    drain: DrainNodeResult | None | Unset = UNSET
    warm: None | Unset | WarmInfo = UNSET
    handed_to: None | str | Unset = UNSET
    booking: BookingInfo | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.booking_info import BookingInfo # noqa: PLC0415
        from ..models.drain_node_result import DrainNodeResult # noqa: PLC0415
        from ..models.placed_topology import PlacedTopology # noqa: PLC0415
        from ..models.step_record import StepRecord # noqa: PLC0415
        from ..models.vm_facts import VmFacts # noqa: PLC0415
        from ..models.warm_info import WarmInfo # noqa: PLC0415
        spare_id = self.spare_id

        cluster = self.cluster

        ui_url = self.ui_url

        workflow_status = self.workflow_status

        pool: None | str | Unset
        if isinstance(self.pool, Unset):
            pool = UNSET
        else:
            pool = self.pool

        phase: str | Unset = UNSET
        if not isinstance(self.phase, Unset):
            phase = self.phase.value


        host: None | str | Unset
        if isinstance(self.host, Unset):
            host = UNSET
        else:
            host = self.host

        vmid: int | None | Unset
        if isinstance(self.vmid, Unset):
            vmid = UNSET
        else:
            vmid = self.vmid

        topology: dict[str, Any] | None | Unset
        if isinstance(self.topology, Unset):
            topology = UNSET
        elif isinstance(self.topology, PlacedTopology):
            topology = self.topology.to_dict()
        else:
            topology = self.topology

        vm: dict[str, Any] | None | Unset
        if isinstance(self.vm, Unset):
            vm = UNSET
        elif isinstance(self.vm, VmFacts):
            vm = self.vm.to_dict()
        else:
            vm = self.vm

        waiting_for: list[str] | Unset = UNSET
        if not isinstance(self.waiting_for, Unset):
            waiting_for = self.waiting_for



        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        disabled_receivers: list[str] | Unset = UNSET
        if not isinstance(self.disabled_receivers, Unset):
            disabled_receivers = self.disabled_receivers



        undelivered: list[str] | Unset = UNSET
        if not isinstance(self.undelivered, Unset):
            undelivered = self.undelivered



        steps: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.steps, Unset):
            steps = []
            for steps_item_data in self.steps:
                steps_item = steps_item_data.to_dict()
                steps.append(steps_item)



        unhealthy: None | str | Unset
        if isinstance(self.unhealthy, Unset):
            unhealthy = UNSET
        else:
            unhealthy = self.unhealthy

        unhealthy_since: None | str | Unset
        if isinstance(self.unhealthy_since, Unset):
            unhealthy_since = UNSET
        elif isinstance(self.unhealthy_since, datetime.datetime):
            unhealthy_since = self.unhealthy_since.isoformat()
        else:
            unhealthy_since = self.unhealthy_since

        replaced_by: None | str | Unset
        if isinstance(self.replaced_by, Unset):
            replaced_by = UNSET
        else:
            replaced_by = self.replaced_by

        drain: dict[str, Any] | None | Unset
        if isinstance(self.drain, Unset):
            drain = UNSET
        elif isinstance(self.drain, DrainNodeResult):
            drain = self.drain.to_dict()
        else:
            drain = self.drain

        warm: dict[str, Any] | None | Unset
        if isinstance(self.warm, Unset):
            warm = UNSET
        elif isinstance(self.warm, WarmInfo):
            warm = self.warm.to_dict()
        else:
            warm = self.warm

        handed_to: None | str | Unset
        if isinstance(self.handed_to, Unset):
            handed_to = UNSET
        else:
            handed_to = self.handed_to

        booking: dict[str, Any] | None | Unset
        if isinstance(self.booking, Unset):
            booking = UNSET
        elif isinstance(self.booking, BookingInfo):
            booking = self.booking.to_dict()
        else:
            booking = self.booking


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "cluster": cluster,
            "ui_url": ui_url,
            "workflow_status": workflow_status,
        })
        if pool is not UNSET:
            field_dict["pool"] = pool
        if phase is not UNSET:
            field_dict["phase"] = phase
        if host is not UNSET:
            field_dict["host"] = host
        if vmid is not UNSET:
            field_dict["vmid"] = vmid
        if topology is not UNSET:
            field_dict["topology"] = topology
        if vm is not UNSET:
            field_dict["vm"] = vm
        if waiting_for is not UNSET:
            field_dict["waiting_for"] = waiting_for
        if error is not UNSET:
            field_dict["error"] = error
        if disabled_receivers is not UNSET:
            field_dict["disabled_receivers"] = disabled_receivers
        if undelivered is not UNSET:
            field_dict["undelivered"] = undelivered
        if steps is not UNSET:
            field_dict["steps"] = steps
        if unhealthy is not UNSET:
            field_dict["unhealthy"] = unhealthy
        if unhealthy_since is not UNSET:
            field_dict["unhealthy_since"] = unhealthy_since
        if replaced_by is not UNSET:
            field_dict["replaced_by"] = replaced_by
        if drain is not UNSET:
            field_dict["drain"] = drain
        if warm is not UNSET:
            field_dict["warm"] = warm
        if handed_to is not UNSET:
            field_dict["handed_to"] = handed_to
        if booking is not UNSET:
            field_dict["booking"] = booking

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.booking_info import BookingInfo # noqa: PLC0415
        from ..models.drain_node_result import DrainNodeResult # noqa: PLC0415
        from ..models.placed_topology import PlacedTopology # noqa: PLC0415
        from ..models.step_record import StepRecord # noqa: PLC0415
        from ..models.vm_facts import VmFacts # noqa: PLC0415
        from ..models.warm_info import WarmInfo # noqa: PLC0415
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        cluster = d.pop("cluster")

        ui_url = d.pop("ui_url")

        workflow_status = d.pop("workflow_status")

        def _parse_pool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pool = _parse_pool(d.pop("pool", UNSET))


        _phase = d.pop("phase", UNSET)
        phase: Phase | Unset
        if isinstance(_phase,  Unset):
            phase = UNSET
        else:
            phase = Phase(_phase)




        def _parse_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host = _parse_host(d.pop("host", UNSET))


        def _parse_vmid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        vmid = _parse_vmid(d.pop("vmid", UNSET))


        def _parse_topology(data: object) -> None | PlacedTopology | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                topology_type_0 = PlacedTopology.from_dict(data)



                return topology_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PlacedTopology | Unset, data)

        topology = _parse_topology(d.pop("topology", UNSET))


        def _parse_vm(data: object) -> None | Unset | VmFacts:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                vm_type_0 = VmFacts.from_dict(data)



                return vm_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VmFacts, data)

        vm = _parse_vm(d.pop("vm", UNSET))


        waiting_for = cast(list[str], d.pop("waiting_for", UNSET))


        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        disabled_receivers = cast(list[str], d.pop("disabled_receivers", UNSET))


        undelivered = cast(list[str], d.pop("undelivered", UNSET))


        _steps = d.pop("steps", UNSET)
        steps: list[StepRecord] | Unset = UNSET
        if _steps is not UNSET:
            steps = []
            for steps_item_data in _steps:
                steps_item = StepRecord.from_dict(steps_item_data)



                steps.append(steps_item)


        def _parse_unhealthy(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        unhealthy = _parse_unhealthy(d.pop("unhealthy", UNSET))


        def _parse_unhealthy_since(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                unhealthy_since_type_0 = datetime.datetime.fromisoformat(data)



                return unhealthy_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        unhealthy_since = _parse_unhealthy_since(d.pop("unhealthy_since", UNSET))


        def _parse_replaced_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replaced_by = _parse_replaced_by(d.pop("replaced_by", UNSET))


        def _parse_drain(data: object) -> DrainNodeResult | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                drain_type_0 = DrainNodeResult.from_dict(data)



                return drain_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DrainNodeResult | None | Unset, data)

        drain = _parse_drain(d.pop("drain", UNSET))


        def _parse_warm(data: object) -> None | Unset | WarmInfo:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                warm_type_0 = WarmInfo.from_dict(data)



                return warm_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WarmInfo, data)

        warm = _parse_warm(d.pop("warm", UNSET))


        def _parse_handed_to(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        handed_to = _parse_handed_to(d.pop("handed_to", UNSET))


        def _parse_booking(data: object) -> BookingInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                booking_type_0 = BookingInfo.from_dict(data)



                return booking_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BookingInfo | None | Unset, data)

        booking = _parse_booking(d.pop("booking", UNSET))


        spare_view = cls(
            spare_id=spare_id,
            cluster=cluster,
            ui_url=ui_url,
            workflow_status=workflow_status,
            pool=pool,
            phase=phase,
            host=host,
            vmid=vmid,
            topology=topology,
            vm=vm,
            waiting_for=waiting_for,
            error=error,
            disabled_receivers=disabled_receivers,
            undelivered=undelivered,
            steps=steps,
            unhealthy=unhealthy,
            unhealthy_since=unhealthy_since,
            replaced_by=replaced_by,
            drain=drain,
            warm=warm,
            handed_to=handed_to,
            booking=booking,
        )


        spare_view.additional_properties = d
        return spare_view

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
