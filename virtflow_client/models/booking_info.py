from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.rehearsal_info import RehearsalInfo
  from ..models.window import Window





T = TypeVar("T", bound="BookingInfo")



@_attrs_define
class BookingInfo:
    """ What a booked spare shows: its window, its lead and when its spare is made.

        Attributes:
            window (Window): When the spare must be Ready and until when it is held (RFC 3339, with an offset).
            lead_seconds (int):
            lead_start (datetime.datetime):
            measured (int | Unset):  Default: 0.
            moved_from (list[str] | Unset):
            rehearsal (None | RehearsalInfo | Unset):
     """

    window: Window
    lead_seconds: int
    lead_start: datetime.datetime
    measured: int | Unset = 0
    moved_from: list[str] | Unset = UNSET
    rehearsal: None | RehearsalInfo | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.rehearsal_info import RehearsalInfo # noqa: PLC0415
        from ..models.window import Window # noqa: PLC0415
        window = self.window.to_dict()

        lead_seconds = self.lead_seconds

        lead_start = self.lead_start.isoformat()

        measured = self.measured

        moved_from: list[str] | Unset = UNSET
        if not isinstance(self.moved_from, Unset):
            moved_from = self.moved_from



        rehearsal: dict[str, Any] | None | Unset
        if isinstance(self.rehearsal, Unset):
            rehearsal = UNSET
        elif isinstance(self.rehearsal, RehearsalInfo):
            rehearsal = self.rehearsal.to_dict()
        else:
            rehearsal = self.rehearsal


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "window": window,
            "lead_seconds": lead_seconds,
            "lead_start": lead_start,
        })
        if measured is not UNSET:
            field_dict["measured"] = measured
        if moved_from is not UNSET:
            field_dict["moved_from"] = moved_from
        if rehearsal is not UNSET:
            field_dict["rehearsal"] = rehearsal

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.rehearsal_info import RehearsalInfo # noqa: PLC0415
        from ..models.window import Window # noqa: PLC0415
        d = dict(src_dict)
        window = Window.from_dict(d.pop("window"))




        lead_seconds = d.pop("lead_seconds")

        lead_start = datetime.datetime.fromisoformat(d.pop("lead_start"))




        measured = d.pop("measured", UNSET)

        moved_from = cast(list[str], d.pop("moved_from", UNSET))


        def _parse_rehearsal(data: object) -> None | RehearsalInfo | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rehearsal_type_0 = RehearsalInfo.from_dict(data)



                return rehearsal_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RehearsalInfo | Unset, data)

        rehearsal = _parse_rehearsal(d.pop("rehearsal", UNSET))


        booking_info = cls(
            window=window,
            lead_seconds=lead_seconds,
            lead_start=lead_start,
            measured=measured,
            moved_from=moved_from,
            rehearsal=rehearsal,
        )


        booking_info.additional_properties = d
        return booking_info

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
