from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="WarmInfo")



@_attrs_define
class WarmInfo:
    """ On a spare that came from a warm pool: which, and since when it was Ready.

        Attributes:
            pool (str):
            ready_since (datetime.datetime):
            warm_spare_id (str): The warm spare whose VM and Node this spare took
     """

    pool: str
    ready_since: datetime.datetime
    warm_spare_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        pool = self.pool

        ready_since = self.ready_since.isoformat()

        warm_spare_id = self.warm_spare_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "pool": pool,
            "ready_since": ready_since,
            "warm_spare_id": warm_spare_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        pool = d.pop("pool")

        ready_since = datetime.datetime.fromisoformat(d.pop("ready_since"))




        warm_spare_id = d.pop("warm_spare_id")

        warm_info = cls(
            pool=pool,
            ready_since=ready_since,
            warm_spare_id=warm_spare_id,
        )


        warm_info.additional_properties = d
        return warm_info

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
