from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.phase import Phase
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.booking_info import BookingInfo
  from ..models.warm_info import WarmInfo





T = TypeVar("T", bound="PrepareAccepted")



@_attrs_define
class PrepareAccepted:
    """ 
        Attributes:
            spare_id (str): The (first) spare
            workflow_id (str):
            ui_url (str):
            spares (list[str] | Unset): Every spare of the request
            warm (None | Unset | WarmInfo): Set when the spare took a warm pool's Ready spare: it is Ready already
            phase (None | Phase | Unset): A booking: `booked` (its room is held for its window)
            booking (BookingInfo | None | Unset): A booking: its window, its lead and when its spare is made
     """

    spare_id: str
    workflow_id: str
    ui_url: str
    spares: list[str] | Unset = UNSET
    warm: None | Unset | WarmInfo = UNSET
    phase: None | Phase | Unset = UNSET
    booking: BookingInfo | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.booking_info import BookingInfo # noqa: PLC0415
        from ..models.warm_info import WarmInfo # noqa: PLC0415
        spare_id = self.spare_id

        workflow_id = self.workflow_id

        ui_url = self.ui_url

        spares: list[str] | Unset = UNSET
        if not isinstance(self.spares, Unset):
            spares = self.spares



        warm: dict[str, Any] | None | Unset
        if isinstance(self.warm, Unset):
            warm = UNSET
        elif isinstance(self.warm, WarmInfo):
            warm = self.warm.to_dict()
        else:
            warm = self.warm

        phase: None | str | Unset
        if isinstance(self.phase, Unset):
            phase = UNSET
        elif isinstance(self.phase, Phase):
            phase = self.phase.value
        else:
            phase = self.phase

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
            "workflow_id": workflow_id,
            "ui_url": ui_url,
        })
        if spares is not UNSET:
            field_dict["spares"] = spares
        if warm is not UNSET:
            field_dict["warm"] = warm
        if phase is not UNSET:
            field_dict["phase"] = phase
        if booking is not UNSET:
            field_dict["booking"] = booking

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.booking_info import BookingInfo # noqa: PLC0415
        from ..models.warm_info import WarmInfo # noqa: PLC0415
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        workflow_id = d.pop("workflow_id")

        ui_url = d.pop("ui_url")

        spares = cast(list[str], d.pop("spares", UNSET))


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


        def _parse_phase(data: object) -> None | Phase | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                phase_type_0 = Phase(data)



                return phase_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Phase | Unset, data)

        phase = _parse_phase(d.pop("phase", UNSET))


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


        prepare_accepted = cls(
            spare_id=spare_id,
            workflow_id=workflow_id,
            ui_url=ui_url,
            spares=spares,
            warm=warm,
            phase=phase,
            booking=booking,
        )


        prepare_accepted.additional_properties = d
        return prepare_accepted

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
