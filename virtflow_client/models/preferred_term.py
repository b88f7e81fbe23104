from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.match_expression import MatchExpression





T = TypeVar("T", bound="PreferredTerm")



@_attrs_define
class PreferredTerm:
    """ 
        Attributes:
            weight (int):
            match (list[MatchExpression]):
     """

    weight: int
    match: list[MatchExpression]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.match_expression import MatchExpression # noqa: PLC0415
        weight = self.weight

        match = []
        for match_item_data in self.match:
            match_item = match_item_data.to_dict()
            match.append(match_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "weight": weight,
            "match": match,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.match_expression import MatchExpression # noqa: PLC0415
        d = dict(src_dict)
        weight = d.pop("weight")

        match = []
        _match = d.pop("match")
        for match_item_data in (_match):
            match_item = MatchExpression.from_dict(match_item_data)



            match.append(match_item)


        preferred_term = cls(
            weight=weight,
            match=match,
        )


        preferred_term.additional_properties = d
        return preferred_term

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
