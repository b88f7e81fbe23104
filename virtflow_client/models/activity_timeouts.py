from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="ActivityTimeouts")



@_attrs_define
class ActivityTimeouts:
    """ 
        Attributes:
            heartbeat_seconds (float | Unset):  Default: 30.0.
            call_seconds (float | Unset):  Default: 60.0.
            ledger_seconds (float | Unset):  Default: 120.0.
     """

    heartbeat_seconds: float | Unset = 30.0
    call_seconds: float | Unset = 60.0
    ledger_seconds: float | Unset = 120.0





    def to_dict(self) -> dict[str, Any]:
        heartbeat_seconds = self.heartbeat_seconds

        call_seconds = self.call_seconds

        ledger_seconds = self.ledger_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if heartbeat_seconds is not UNSET:
            field_dict["heartbeat_seconds"] = heartbeat_seconds
        if call_seconds is not UNSET:
            field_dict["call_seconds"] = call_seconds
        if ledger_seconds is not UNSET:
            field_dict["ledger_seconds"] = ledger_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        heartbeat_seconds = d.pop("heartbeat_seconds", UNSET)

        call_seconds = d.pop("call_seconds", UNSET)

        ledger_seconds = d.pop("ledger_seconds", UNSET)

        activity_timeouts = cls(
            heartbeat_seconds=heartbeat_seconds,
            call_seconds=call_seconds,
            ledger_seconds=ledger_seconds,
        )

        return activity_timeouts

