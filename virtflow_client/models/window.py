from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Window")



@_attrs_define
class Window:
    """ When the spare must be Ready and until when it is held (RFC 3339, with an offset).

        Attributes:
            start (datetime.datetime):
            end (datetime.datetime):
            rehearsal (bool | None | Unset):
     """

    start: datetime.datetime
    end: datetime.datetime
    rehearsal: bool | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        start = self.start.isoformat()

        end = self.end.isoformat()

        rehearsal: bool | None | Unset
        if isinstance(self.rehearsal, Unset):
            rehearsal = UNSET
        else:
            rehearsal = self.rehearsal


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "start": start,
            "end": end,
        })
        if rehearsal is not UNSET:
            field_dict["rehearsal"] = rehearsal

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        start = datetime.datetime.fromisoformat(d.pop("start"))




        end = datetime.datetime.fromisoformat(d.pop("end"))




        def _parse_rehearsal(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        rehearsal = _parse_rehearsal(d.pop("rehearsal", UNSET))


        window = cls(
            start=start,
            end=end,
            rehearsal=rehearsal,
        )

        return window

