from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.spare_summary import SpareSummary





T = TypeVar("T", bound="SparePage")



@_attrs_define
class SparePage:
    """ 
        Attributes:
            spares (list[SpareSummary]):
            next_page_token (None | str | Unset): Pass as `page_token` for the next page; absent on the last
     """

    spares: list[SpareSummary]
    next_page_token: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.spare_summary import SpareSummary # noqa: PLC0415
        spares = []
        for spares_item_data in self.spares:
            spares_item = spares_item_data.to_dict()
            spares.append(spares_item)



        next_page_token: None | str | Unset
        if isinstance(self.next_page_token, Unset):
            next_page_token = UNSET
        else:
            next_page_token = self.next_page_token


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spares": spares,
        })
        if next_page_token is not UNSET:
            field_dict["next_page_token"] = next_page_token

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.spare_summary import SpareSummary # noqa: PLC0415
        d = dict(src_dict)
        spares = []
        _spares = d.pop("spares")
        for spares_item_data in (_spares):
            spares_item = SpareSummary.from_dict(spares_item_data)



            spares.append(spares_item)


        def _parse_next_page_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_page_token = _parse_next_page_token(d.pop("next_page_token", UNSET))


        spare_page = cls(
            spares=spares,
            next_page_token=next_page_token,
        )


        spare_page.additional_properties = d
        return spare_page

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
