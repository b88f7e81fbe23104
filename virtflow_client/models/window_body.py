from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="WindowBody")



@_attrs_define
class WindowBody:
    """ The window's new end (RFC 3339 with an offset); its start stays.

        Attributes:
            end (datetime.datetime): When the booking ends now (its spare is released)
     """

    end: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        end = self.end.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "end": end,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        end = datetime.datetime.fromisoformat(d.pop("end"))




        window_body = cls(
            end=end,
        )

        return window_body

