from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.drain_outcome import DrainOutcome
from ..models.drain_policy import DrainPolicy
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.budget_refusal import BudgetRefusal





T = TypeVar("T", bound="DrainNodeResult")



@_attrs_define
class DrainNodeResult:
    """ 
        Attributes:
            outcome (DrainOutcome | Unset):
            policy (DrainPolicy | Unset):
            evicted (list[str] | Unset):
            deleted (list[str] | Unset):
            skipped (list[str] | Unset):
            ignored (list[str] | Unset):
            blocked_by (list[BudgetRefusal] | Unset):
     """

    outcome: DrainOutcome | Unset = UNSET
    policy: DrainPolicy | Unset = UNSET
    evicted: list[str] | Unset = UNSET
    deleted: list[str] | Unset = UNSET
    skipped: list[str] | Unset = UNSET
    ignored: list[str] | Unset = UNSET
    blocked_by: list[BudgetRefusal] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.budget_refusal import BudgetRefusal # noqa: PLC0415
        outcome: str | Unset = UNSET
        if not isinstance(self.outcome, Unset):
            outcome = self.outcome.value


        policy: str | Unset = UNSET
        if not isinstance(self.policy, Unset):
            policy = self.policy.value


        evicted: list[str] | Unset = UNSET
        if not isinstance(self.evicted, Unset):
            evicted = self.evicted



        deleted: list[str] | Unset = UNSET
        if not isinstance(self.deleted, Unset):
            deleted = self.deleted



        skipped: list[str] | Unset = UNSET
        if not isinstance(self.skipped, Unset):
            skipped = self.skipped



        ignored: list[str] | Unset = UNSET
        if not isinstance(self.ignored, Unset):
            ignored = self.ignored



        blocked_by: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = []
            for blocked_by_item_data in self.blocked_by:
                blocked_by_item = blocked_by_item_data.to_dict()
                blocked_by.append(blocked_by_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if policy is not UNSET:
            field_dict["policy"] = policy
        if evicted is not UNSET:
            field_dict["evicted"] = evicted
        if deleted is not UNSET:
            field_dict["deleted"] = deleted
        if skipped is not UNSET:
            field_dict["skipped"] = skipped
        if ignored is not UNSET:
            field_dict["ignored"] = ignored
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.budget_refusal import BudgetRefusal # noqa: PLC0415
        d = dict(src_dict)
        _outcome = d.pop("outcome", UNSET)
        outcome: DrainOutcome | Unset
        if isinstance(_outcome,  Unset):
            outcome = UNSET
        else:
            outcome = DrainOutcome(_outcome)




        _policy = d.pop("policy", UNSET)
        policy: DrainPolicy | Unset
        if isinstance(_policy,  Unset):
            policy = UNSET
        else:
            policy = DrainPolicy(_policy)




        evicted = cast(list[str], d.pop("evicted", UNSET))


        deleted = cast(list[str], d.pop("deleted", UNSET))


        skipped = cast(list[str], d.pop("skipped", UNSET))


        ignored = cast(list[str], d.pop("ignored", UNSET))


        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: list[BudgetRefusal] | Unset = UNSET
        if _blocked_by is not UNSET:
            blocked_by = []
            for blocked_by_item_data in _blocked_by:
                blocked_by_item = BudgetRefusal.from_dict(blocked_by_item_data)



                blocked_by.append(blocked_by_item)


        drain_node_result = cls(
            outcome=outcome,
            policy=policy,
            evicted=evicted,
            deleted=deleted,
            skipped=skipped,
            ignored=ignored,
            blocked_by=blocked_by,
        )


        drain_node_result.additional_properties = d
        return drain_node_result

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
