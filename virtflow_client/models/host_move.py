from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="HostMove")



@_attrs_define
class HostMove:
    """ 
        Attributes:
            from_host (str): The host the booking held its room on.
            to_host (str): The host that holds it now.
     """

    from_host: str
    to_host: str





    def to_dict(self) -> dict[str, Any]:
        from_host = self.from_host

        to_host = self.to_host


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "from_host": from_host,
            "to_host": to_host,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_host = d.pop("from_host")

        to_host = d.pop("to_host")

        host_move = cls(
            from_host=from_host,
            to_host=to_host,
        )

        return host_move

