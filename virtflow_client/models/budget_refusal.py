from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="BudgetRefusal")



@_attrs_define
class BudgetRefusal:
    """ A PodDisruptionBudget that refused an eviction, as last seen.

        Attributes:
            namespace (str):
            name (str):
            disruptions_allowed (int | None | Unset):
            message (str | Unset):  Default: ''.
            pods (list[str] | Unset):
     """

    namespace: str
    name: str
    disruptions_allowed: int | None | Unset = UNSET
    message: str | Unset = ''
    pods: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        namespace = self.namespace

        name = self.name

        disruptions_allowed: int | None | Unset
        if isinstance(self.disruptions_allowed, Unset):
            disruptions_allowed = UNSET
        else:
            disruptions_allowed = self.disruptions_allowed

        message = self.message

        pods: list[str] | Unset = UNSET
        if not isinstance(self.pods, Unset):
            pods = self.pods




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "namespace": namespace,
            "name": name,
        })
        if disruptions_allowed is not UNSET:
            field_dict["disruptions_allowed"] = disruptions_allowed
        if message is not UNSET:
            field_dict["message"] = message
        if pods is not UNSET:
            field_dict["pods"] = pods

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        namespace = d.pop("namespace")

        name = d.pop("name")

        def _parse_disruptions_allowed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        disruptions_allowed = _parse_disruptions_allowed(d.pop("disruptions_allowed", UNSET))


        message = d.pop("message", UNSET)

        pods = cast(list[str], d.pop("pods", UNSET))


        budget_refusal = cls(
            namespace=namespace,
            name=name,
            disruptions_allowed=disruptions_allowed,
            message=message,
            pods=pods,
        )


        budget_refusal.additional_properties = d
        return budget_refusal

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
