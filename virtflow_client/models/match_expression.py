from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.match_expression_operator import MatchExpressionOperator
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="MatchExpression")



@_attrs_define
class MatchExpression:
    """ A Kubernetes NodeSelectorRequirement; `values: null` is no values.

    The shape is checked as the Kubernetes API checks a Pod (values for In/NotIn, none for
    Exists/DoesNotExist, exactly one for Gt/Lt). A key or value that is not label syntax, or a
    Gt/Lt value that is not an integer, is accepted and matches no host, as kube-scheduler's
    nodeaffinity does with a requirement it cannot parse.

        Attributes:
            key (str):
            operator (MatchExpressionOperator):
            values (list[str] | Unset):
     """

    key: str
    operator: MatchExpressionOperator
    values: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        key = self.key

        operator = self.operator.value

        values: list[str] | Unset = UNSET
        if not isinstance(self.values, Unset):
            values = self.values




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "key": key,
            "operator": operator,
        })
        if values is not UNSET:
            field_dict["values"] = values

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key")

        operator = MatchExpressionOperator(d.pop("operator"))




        values = cast(list[str], d.pop("values", UNSET))


        match_expression = cls(
            key=key,
            operator=operator,
            values=values,
        )


        match_expression.additional_properties = d
        return match_expression

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
