from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.warm_spare_phase import WarmSparePhase
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.reservation import Reservation
  from ..models.vm_facts import VmFacts





T = TypeVar("T", bound="WarmSpare")



@_attrs_define
class WarmSpare:
    """ One spare of a pool, as the pool sees it.

        Attributes:
            spare_id (str):
            generation (str):
            started_at (datetime.datetime):
            phase (WarmSparePhase | Unset):  Default: WarmSparePhase.COMING_UP.
            build_id (None | str | Unset):
            ready_since (datetime.datetime | None | Unset):
            reservation (None | Reservation | Unset):
            vm (None | Unset | VmFacts):
            claimed_by (None | str | Unset):
     """

    spare_id: str
    generation: str
    started_at: datetime.datetime
    phase: WarmSparePhase | Unset = WarmSparePhase.COMING_UP
    build_id: None | str | Unset = UNSET
    ready_since: datetime.datetime | None | Unset = UNSET
    reservation: None | Reservation | Unset = UNSET
    vm: None | Unset | VmFacts = UNSET
    claimed_by: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.reservation import Reservation # noqa: PLC0415
        from ..models.vm_facts import VmFacts # noqa: PLC0415
        spare_id = self.spare_id

        generation = self.generation

        started_at = self.started_at.isoformat()

        phase: str | Unset = UNSET
        if not isinstance(self.phase, Unset):
            phase = self.phase.value


        build_id: None | str | Unset
        if isinstance(self.build_id, Unset):
            build_id = UNSET
        else:
            build_id = self.build_id

        ready_since: None | str | Unset
        if isinstance(self.ready_since, Unset):
            ready_since = UNSET
        elif isinstance(self.ready_since, datetime.datetime):
            ready_since = self.ready_since.isoformat()
        else:
            ready_since = self.ready_since

        reservation: dict[str, Any] | None | Unset
        if isinstance(self.reservation, Unset):
            reservation = UNSET
        elif isinstance(self.reservation, Reservation):
            reservation = self.reservation.to_dict()
        else:
            reservation = self.reservation

        vm: dict[str, Any] | None | Unset
        if isinstance(self.vm, Unset):
            vm = UNSET
        elif isinstance(self.vm, VmFacts):
            vm = self.vm.to_dict()
        else:
            vm = self.vm

        claimed_by: None | str | Unset
        if isinstance(self.claimed_by, Unset):
            claimed_by = UNSET
        else:
            claimed_by = self.claimed_by


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "generation": generation,
            "started_at": started_at,
        })
        if phase is not UNSET:
            field_dict["phase"] = phase
        if build_id is not UNSET:
            field_dict["build_id"] = build_id
        if ready_since is not UNSET:
            field_dict["ready_since"] = ready_since
        if reservation is not UNSET:
            field_dict["reservation"] = reservation
        if vm is not UNSET:
            field_dict["vm"] = vm
        if claimed_by is not UNSET:
            field_dict["claimed_by"] = claimed_by

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reservation import Reservation # noqa: PLC0415
        from ..models.vm_facts import VmFacts # noqa: PLC0415
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        generation = d.pop("generation")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        _phase = d.pop("phase", UNSET)
        phase: WarmSparePhase | Unset
        if isinstance(_phase,  Unset):
            phase = UNSET
        else:
            phase = WarmSparePhase(_phase)




        def _parse_build_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        build_id = _parse_build_id(d.pop("build_id", UNSET))


        def _parse_ready_since(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ready_since_type_0 = datetime.datetime.fromisoformat(data)



                return ready_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ready_since = _parse_ready_since(d.pop("ready_since", UNSET))


        def _parse_reservation(data: object) -> None | Reservation | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                reservation_type_0 = Reservation.from_dict(data)



                return reservation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Reservation | Unset, data)

        reservation = _parse_reservation(d.pop("reservation", UNSET))


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


        def _parse_claimed_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        claimed_by = _parse_claimed_by(d.pop("claimed_by", UNSET))


        warm_spare = cls(
            spare_id=spare_id,
            generation=generation,
            started_at=started_at,
            phase=phase,
            build_id=build_id,
            ready_since=ready_since,
            reservation=reservation,
            vm=vm,
            claimed_by=claimed_by,
        )


        warm_spare.additional_properties = d
        return warm_spare

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
