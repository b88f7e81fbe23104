from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.drain_info_outcome import DrainInfoOutcome
from ..models.drain_info_policy import DrainInfoPolicy
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.blocking_budget import BlockingBudget





T = TypeVar("T", bound="DrainInfo")



@_attrs_define
class DrainInfo:
    """ How the release's drain went, and what the drain policy did about what remained.

        Attributes:
            outcome (DrainInfoOutcome): drained: every pod gone; forced: the rest deleted past their budgets; blocked: pods
                remained at the drain timeout.
            policy (DrainInfoPolicy):
            evicted (list[str] | Unset): namespace/name, evicted and gone
            deleted (list[str] | Unset): Deleted past their budgets (policy force, as `kubectl drain --disable-eviction`
                would)
            not_evicted (list[str] | Unset):
            blocked_by (list[BlockingBudget] | Unset):
            left_cordoned (bool | Unset): policy leave: the VM was kept and its Node left cordoned Default: False.
     """

    outcome: DrainInfoOutcome
    policy: DrainInfoPolicy
    evicted: list[str] | Unset = UNSET
    deleted: list[str] | Unset = UNSET
    not_evicted: list[str] | Unset = UNSET
    blocked_by: list[BlockingBudget] | Unset = UNSET
    left_cordoned: bool | Unset = False





    def to_dict(self) -> dict[str, Any]:
        from ..models.blocking_budget import BlockingBudget # noqa: PLC0415
        outcome = self.outcome.value

        policy = self.policy.value

        evicted: list[str] | Unset = UNSET
        if not isinstance(self.evicted, Unset):
            evicted = self.evicted



        deleted: list[str] | Unset = UNSET
        if not isinstance(self.deleted, Unset):
            deleted = self.deleted



        not_evicted: list[str] | Unset = UNSET
        if not isinstance(self.not_evicted, Unset):
            not_evicted = self.not_evicted



        blocked_by: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = []
            for blocked_by_item_data in self.blocked_by:
                blocked_by_item = blocked_by_item_data.to_dict()
                blocked_by.append(blocked_by_item)



        left_cordoned = self.left_cordoned


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "outcome": outcome,
            "policy": policy,
        })
        if evicted is not UNSET:
            field_dict["evicted"] = evicted
        if deleted is not UNSET:
            field_dict["deleted"] = deleted
        if not_evicted is not UNSET:
            field_dict["not_evicted"] = not_evicted
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by
        if left_cordoned is not UNSET:
            field_dict["left_cordoned"] = left_cordoned

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.blocking_budget import BlockingBudget # noqa: PLC0415
        d = dict(src_dict)
        outcome = DrainInfoOutcome(d.pop("outcome"))




        policy = DrainInfoPolicy(d.pop("policy"))




        evicted = cast(list[str], d.pop("evicted", UNSET))


        deleted = cast(list[str], d.pop("deleted", UNSET))


        not_evicted = cast(list[str], d.pop("not_evicted", UNSET))


        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: list[BlockingBudget] | Unset = UNSET
        if _blocked_by is not UNSET:
            blocked_by = []
            for blocked_by_item_data in _blocked_by:
                blocked_by_item = BlockingBudget.from_dict(blocked_by_item_data)



                blocked_by.append(blocked_by_item)


        left_cordoned = d.pop("left_cordoned", UNSET)

        drain_info = cls(
            outcome=outcome,
            policy=policy,
            evicted=evicted,
            deleted=deleted,
            not_evicted=not_evicted,
            blocked_by=blocked_by,
            left_cordoned=left_cordoned,
        )

        return drain_info

