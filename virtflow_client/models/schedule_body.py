from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ScheduleBody")



@_attrs_define
class ScheduleBody:
    """ The original request; `inventory` and `hold_seconds` are optional extras.

        Attributes:
            requested_cpu (int):
            requested_memory (int): MiB
            requested_pool (None | str | Unset):
            dedicated (bool | Unset):  Default: False.
            inventory (str | Unset):  Default: 'default'.
            hold_seconds (int | Unset):  Default: 900.
            cluster (None | str | Unset): The registered cluster the task is for; default: the one cluster the token acts
                for (an unscoped token's task belongs to no cluster)
     """

    requested_cpu: int
    requested_memory: int
    requested_pool: None | str | Unset = UNSET
    dedicated: bool | Unset = False
    inventory: str | Unset = 'default'
    hold_seconds: int | Unset = 900
    cluster: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        requested_cpu = self.requested_cpu

        requested_memory = self.requested_memory

        requested_pool: None | str | Unset
        if isinstance(self.requested_pool, Unset):
            requested_pool = UNSET
        else:
            requested_pool = self.requested_pool

        dedicated = self.dedicated

        inventory = self.inventory

        hold_seconds = self.hold_seconds

        cluster: None | str | Unset
        if isinstance(self.cluster, Unset):
            cluster = UNSET
        else:
            cluster = self.cluster


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "requested_cpu": requested_cpu,
            "requested_memory": requested_memory,
        })
        if requested_pool is not UNSET:
            field_dict["requested_pool"] = requested_pool
        if dedicated is not UNSET:
            field_dict["dedicated"] = dedicated
        if inventory is not UNSET:
            field_dict["inventory"] = inventory
        if hold_seconds is not UNSET:
            field_dict["hold_seconds"] = hold_seconds
        if cluster is not UNSET:
            field_dict["cluster"] = cluster

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        requested_cpu = d.pop("requested_cpu")

        requested_memory = d.pop("requested_memory")

        def _parse_requested_pool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        requested_pool = _parse_requested_pool(d.pop("requested_pool", UNSET))


        dedicated = d.pop("dedicated", UNSET)

        inventory = d.pop("inventory", UNSET)

        hold_seconds = d.pop("hold_seconds", UNSET)

        def _parse_cluster(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cluster = _parse_cluster(d.pop("cluster", UNSET))


        schedule_body = cls(
            requested_cpu=requested_cpu,
            requested_memory=requested_memory,
            requested_pool=requested_pool,
            dedicated=dedicated,
            inventory=inventory,
            hold_seconds=hold_seconds,
            cluster=cluster,
        )


        schedule_body.additional_properties = d
        return schedule_body

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
