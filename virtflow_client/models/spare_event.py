from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.event_type import EventType
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.spare_event_data import SpareEventData





T = TypeVar("T", bound="SpareEvent")



@_attrs_define
class SpareEvent:
    """ The JSON body of every webhook, in the Standard Webhooks shape `{type, timestamp, data}`.

    `type` and `timestamp` stay at the top so a receiver can route and age an event without
    knowing its fields; everything about the spare is under `data`.

        Attributes:
            type_ (EventType):
            timestamp (datetime.datetime): When the event happened (UTC).
            data (SpareEventData): What happened to which spare: the `data` object of every event.
     """

    type_: EventType
    timestamp: datetime.datetime
    data: SpareEventData





    def to_dict(self) -> dict[str, Any]:
        from ..models.spare_event_data import SpareEventData # noqa: PLC0415
        type_ = self.type_.value

        timestamp = self.timestamp.isoformat()

        data = self.data.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "type": type_,
            "timestamp": timestamp,
            "data": data,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.spare_event_data import SpareEventData # noqa: PLC0415
        d = dict(src_dict)
        type_ = EventType(d.pop("type"))




        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))




        data = SpareEventData.from_dict(d.pop("data"))




        spare_event = cls(
            type_=type_,
            timestamp=timestamp,
            data=data,
        )

        return spare_event

