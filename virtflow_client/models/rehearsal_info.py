from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.rehearsal_info_outcome import RehearsalInfoOutcome
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="RehearsalInfo")



@_attrs_define
class RehearsalInfo:
    """ A booking's rehearsal: its own spare (a child workflow) on the booked host.

        Attributes:
            spare_id (str):
            host (str):
            outcome (RehearsalInfoOutcome | Unset):  Default: RehearsalInfoOutcome.RUNNING.
            reason (None | str | Unset):
     """

    spare_id: str
    host: str
    outcome: RehearsalInfoOutcome | Unset = RehearsalInfoOutcome.RUNNING
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        spare_id = self.spare_id

        host = self.host

        outcome: str | Unset = UNSET
        if not isinstance(self.outcome, Unset):
            outcome = self.outcome.value


        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "host": host,
        })
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        host = d.pop("host")

        _outcome = d.pop("outcome", UNSET)
        outcome: RehearsalInfoOutcome | Unset
        if isinstance(_outcome,  Unset):
            outcome = UNSET
        else:
            outcome = RehearsalInfoOutcome(_outcome)




        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        rehearsal_info = cls(
            spare_id=spare_id,
            host=host,
            outcome=outcome,
            reason=reason,
        )


        rehearsal_info.additional_properties = d
        return rehearsal_info

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
