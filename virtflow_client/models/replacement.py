from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Replacement")



@_attrs_define
class Replacement:
    """ 
        Attributes:
            old (str): The unhealthy spare's id.
            new (str): The replacement spare's id (its own events follow).
            new_host (None | str | Unset):
     """

    old: str
    new: str
    new_host: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        old = self.old

        new = self.new

        new_host: None | str | Unset
        if isinstance(self.new_host, Unset):
            new_host = UNSET
        else:
            new_host = self.new_host


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "old": old,
            "new": new,
        })
        if new_host is not UNSET:
            field_dict["new_host"] = new_host

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        old = d.pop("old")

        new = d.pop("new")

        def _parse_new_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        new_host = _parse_new_host(d.pop("new_host", UNSET))


        replacement = cls(
            old=old,
            new=new,
            new_host=new_host,
        )

        return replacement

