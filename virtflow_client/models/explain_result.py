from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.explain_result_decision import ExplainResultDecision





T = TypeVar("T", bound="ExplainResult")



@_attrs_define
class ExplainResult:
    """ 
        Attributes:
            decision (ExplainResultDecision): host, vmid, error, rejected (host -> reason), scores (host -> plugin -> score)
            summary (str):
            table (str):
     """

    decision: ExplainResultDecision
    summary: str
    table: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.explain_result_decision import ExplainResultDecision # noqa: PLC0415
        decision = self.decision.to_dict()

        summary = self.summary

        table = self.table


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "decision": decision,
            "summary": summary,
            "table": table,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.explain_result_decision import ExplainResultDecision # noqa: PLC0415
        d = dict(src_dict)
        decision = ExplainResultDecision.from_dict(d.pop("decision"))




        summary = d.pop("summary")

        table = d.pop("table")

        explain_result = cls(
            decision=decision,
            summary=summary,
            table=table,
        )


        explain_result.additional_properties = d
        return explain_result

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
