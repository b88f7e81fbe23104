from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.host_bookings import HostBookings
  from ..models.unanswered_ledger import UnansweredLedger





T = TypeVar("T", bound="BookingsView")



@_attrs_define
class BookingsView:
    """ 
        Attributes:
            from_ (datetime.datetime):
            to (datetime.datetime):
            hosts (list[HostBookings]): Hosts holding bookings, by inventory and name
            unanswered (list[UnansweredLedger] | Unset): Inventories whose bookings are missing: their ledger did not answer
     """

    from_: datetime.datetime
    to: datetime.datetime
    hosts: list[HostBookings]
    unanswered: list[UnansweredLedger] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.host_bookings import HostBookings # noqa: PLC0415
        from ..models.unanswered_ledger import UnansweredLedger # noqa: PLC0415
        from_ = self.from_.isoformat()

        to = self.to.isoformat()

        hosts = []
        for hosts_item_data in self.hosts:
            hosts_item = hosts_item_data.to_dict()
            hosts.append(hosts_item)



        unanswered: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.unanswered, Unset):
            unanswered = []
            for unanswered_item_data in self.unanswered:
                unanswered_item = unanswered_item_data.to_dict()
                unanswered.append(unanswered_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "from": from_,
            "to": to,
            "hosts": hosts,
        })
        if unanswered is not UNSET:
            field_dict["unanswered"] = unanswered

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.host_bookings import HostBookings # noqa: PLC0415
        from ..models.unanswered_ledger import UnansweredLedger # noqa: PLC0415
        d = dict(src_dict)
        from_ = datetime.datetime.fromisoformat(d.pop("from"))




        to = datetime.datetime.fromisoformat(d.pop("to"))




        hosts = []
        _hosts = d.pop("hosts")
        for hosts_item_data in (_hosts):
            hosts_item = HostBookings.from_dict(hosts_item_data)



            hosts.append(hosts_item)


        _unanswered = d.pop("unanswered", UNSET)
        unanswered: list[UnansweredLedger] | Unset = UNSET
        if _unanswered is not UNSET:
            unanswered = []
            for unanswered_item_data in _unanswered:
                unanswered_item = UnansweredLedger.from_dict(unanswered_item_data)



                unanswered.append(unanswered_item)


        bookings_view = cls(
            from_=from_,
            to=to,
            hosts=hosts,
            unanswered=unanswered,
        )


        bookings_view.additional_properties = d
        return bookings_view

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
