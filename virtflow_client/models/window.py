from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

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




        window = cls(
            start=start,
            end=end,
        )

        return window

