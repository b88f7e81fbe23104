from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.window import Window





T = TypeVar("T", bound="WindowChanged")



@_attrs_define
class WindowChanged:
    """ 
        Attributes:
            spare_id (str):
            window (Window): When the spare must be Ready and until when it is held (RFC 3339, with an offset).
     """

    spare_id: str
    window: Window
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.window import Window # noqa: PLC0415
        spare_id = self.spare_id

        window = self.window.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "window": window,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.window import Window # noqa: PLC0415
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        window = Window.from_dict(d.pop("window"))




        window_changed = cls(
            spare_id=spare_id,
            window=window,
        )


        window_changed.additional_properties = d
        return window_changed

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
