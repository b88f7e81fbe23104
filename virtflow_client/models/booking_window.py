from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="BookingWindow")



@_attrs_define
class BookingWindow:
    """ A booked spare's window: Ready from `start`, released at `end`.

        Attributes:
            start (datetime.datetime):
            end (datetime.datetime):
     """

    start: datetime.datetime
    end: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        start = self.start.isoformat()

        end = self.end.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "start": start,
            "end": end,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        start = datetime.datetime.fromisoformat(d.pop("start"))




        end = datetime.datetime.fromisoformat(d.pop("end"))




        booking_window = cls(
            start=start,
            end=end,
        )

        return booking_window

