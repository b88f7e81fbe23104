from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.booked_spare import BookedSpare





T = TypeVar("T", bound="HostBookings")



@_attrs_define
class HostBookings:
    """ 
        Attributes:
            inventory (str):
            host (str):
            bookings (list[BookedSpare]): By lead start
     """

    inventory: str
    host: str
    bookings: list[BookedSpare]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.booked_spare import BookedSpare # noqa: PLC0415
        inventory = self.inventory

        host = self.host

        bookings = []
        for bookings_item_data in self.bookings:
            bookings_item = bookings_item_data.to_dict()
            bookings.append(bookings_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "inventory": inventory,
            "host": host,
            "bookings": bookings,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.booked_spare import BookedSpare # noqa: PLC0415
        d = dict(src_dict)
        inventory = d.pop("inventory")

        host = d.pop("host")

        bookings = []
        _bookings = d.pop("bookings")
        for bookings_item_data in (_bookings):
            bookings_item = BookedSpare.from_dict(bookings_item_data)



            bookings.append(bookings_item)


        host_bookings = cls(
            inventory=inventory,
            host=host,
            bookings=bookings,
        )


        host_bookings.additional_properties = d
        return host_bookings

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
