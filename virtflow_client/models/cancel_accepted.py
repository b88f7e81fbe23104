from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="CancelAccepted")



@_attrs_define
class CancelAccepted:
    """ 
        Attributes:
            spare_id (str):
            ui_url (str):
            cancel_requested (bool | Unset):  Default: True.
     """

    spare_id: str
    ui_url: str
    cancel_requested: bool | Unset = True
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        spare_id = self.spare_id

        ui_url = self.ui_url

        cancel_requested = self.cancel_requested


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "ui_url": ui_url,
        })
        if cancel_requested is not UNSET:
            field_dict["cancel_requested"] = cancel_requested

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        ui_url = d.pop("ui_url")

        cancel_requested = d.pop("cancel_requested", UNSET)

        cancel_accepted = cls(
            spare_id=spare_id,
            ui_url=ui_url,
            cancel_requested=cancel_requested,
        )


        cancel_accepted.additional_properties = d
        return cancel_accepted

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
