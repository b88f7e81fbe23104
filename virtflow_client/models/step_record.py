from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.phase import Phase
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="StepRecord")



@_attrs_define
class StepRecord:
    """ 
        Attributes:
            phase (Phase):
            at (datetime.datetime):
            detail (str | Unset):  Default: ''.
     """

    phase: Phase
    at: datetime.datetime
    detail: str | Unset = ''
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        phase = self.phase.value

        at = self.at.isoformat()

        detail = self.detail


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "phase": phase,
            "at": at,
        })
        if detail is not UNSET:
            field_dict["detail"] = detail

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        phase = Phase(d.pop("phase"))




        at = datetime.datetime.fromisoformat(d.pop("at"))




        detail = d.pop("detail", UNSET)

        step_record = cls(
            phase=phase,
            at=at,
            detail=detail,
        )


        step_record.additional_properties = d
        return step_record

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
