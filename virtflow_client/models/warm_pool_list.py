from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.warm_pool_view import WarmPoolView





T = TypeVar("T", bound="WarmPoolList")



@_attrs_define
class WarmPoolList:
    """ 
        Attributes:
            warm_pools (list[WarmPoolView]):
     """

    warm_pools: list[WarmPoolView]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.warm_pool_view import WarmPoolView # noqa: PLC0415
        warm_pools = []
        for warm_pools_item_data in self.warm_pools:
            warm_pools_item = warm_pools_item_data.to_dict()
            warm_pools.append(warm_pools_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "warm_pools": warm_pools,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.warm_pool_view import WarmPoolView # noqa: PLC0415
        d = dict(src_dict)
        warm_pools = []
        _warm_pools = d.pop("warm_pools")
        for warm_pools_item_data in (_warm_pools):
            warm_pools_item = WarmPoolView.from_dict(warm_pools_item_data)



            warm_pools.append(warm_pools_item)


        warm_pool_list = cls(
            warm_pools=warm_pools,
        )


        warm_pool_list.additional_properties = d
        return warm_pool_list

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
