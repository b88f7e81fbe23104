from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.topology_spread_constraint_when_unsatisfiable import TopologySpreadConstraintWhenUnsatisfiable
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="TopologySpreadConstraint")



@_attrs_define
class TopologySpreadConstraint:
    """ Kubernetes' PodTopologySpread over the VMs of a group: at most `max_skew` more VMs in a
    domain than in the emptiest one. DoNotSchedule is a filter, ScheduleAnyway a score.

        Attributes:
            topology_key (str):
            max_skew (int):
            when_unsatisfiable (TopologySpreadConstraintWhenUnsatisfiable):
            group (None | str | Unset):
     """

    topology_key: str
    max_skew: int
    when_unsatisfiable: TopologySpreadConstraintWhenUnsatisfiable
    group: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        topology_key = self.topology_key

        max_skew = self.max_skew

        when_unsatisfiable = self.when_unsatisfiable.value

        group: None | str | Unset
        if isinstance(self.group, Unset):
            group = UNSET
        else:
            group = self.group


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "topology_key": topology_key,
            "max_skew": max_skew,
            "when_unsatisfiable": when_unsatisfiable,
        })
        if group is not UNSET:
            field_dict["group"] = group

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        topology_key = d.pop("topology_key")

        max_skew = d.pop("max_skew")

        when_unsatisfiable = TopologySpreadConstraintWhenUnsatisfiable(d.pop("when_unsatisfiable"))




        def _parse_group(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        group = _parse_group(d.pop("group", UNSET))


        topology_spread_constraint = cls(
            topology_key=topology_key,
            max_skew=max_skew,
            when_unsatisfiable=when_unsatisfiable,
            group=group,
        )

        return topology_spread_constraint

