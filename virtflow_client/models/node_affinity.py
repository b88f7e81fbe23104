from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.match_expression import MatchExpression
  from ..models.preferred_term import PreferredTerm





T = TypeVar("T", bound="NodeAffinity")



@_attrs_define
class NodeAffinity:
    """ `required`: OR of terms, each an AND of expressions; an empty term matches no host (as in
    Kubernetes, where a Pod with only such terms stays Pending).

        Attributes:
            required (list[list[MatchExpression]] | Unset):
            preferred (list[PreferredTerm] | Unset):
     """

    required: list[list[MatchExpression]] | Unset = UNSET
    preferred: list[PreferredTerm] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.match_expression import MatchExpression # noqa: PLC0415
        from ..models.preferred_term import PreferredTerm # noqa: PLC0415
        required: list[list[dict[str, Any]]] | Unset = UNSET
        if not isinstance(self.required, Unset):
            required = []
            for required_item_data in self.required:
                required_item = []
                for required_item_item_data in required_item_data:
                    required_item_item = required_item_item_data.to_dict()
                    required_item.append(required_item_item)


                required.append(required_item)



        preferred: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.preferred, Unset):
            preferred = []
            for preferred_item_data in self.preferred:
                preferred_item = preferred_item_data.to_dict()
                preferred.append(preferred_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if required is not UNSET:
            field_dict["required"] = required
        if preferred is not UNSET:
            field_dict["preferred"] = preferred

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.match_expression import MatchExpression # noqa: PLC0415
        from ..models.preferred_term import PreferredTerm # noqa: PLC0415
        d = dict(src_dict)
        _required = d.pop("required", UNSET)
        required: list[list[MatchExpression]] | Unset = UNSET
        if _required is not UNSET:
            required = []
            for required_item_data in _required:
                required_item = []
                _required_item = required_item_data
                for required_item_item_data in (_required_item):
                    required_item_item = MatchExpression.from_dict(required_item_item_data)



                    required_item.append(required_item_item)

                required.append(required_item)


        _preferred = d.pop("preferred", UNSET)
        preferred: list[PreferredTerm] | Unset = UNSET
        if _preferred is not UNSET:
            preferred = []
            for preferred_item_data in _preferred:
                preferred_item = PreferredTerm.from_dict(preferred_item_data)



                preferred.append(preferred_item)


        node_affinity = cls(
            required=required,
            preferred=preferred,
        )


        node_affinity.additional_properties = d
        return node_affinity

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
