from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="BlockingBudget")



@_attrs_define
class BlockingBudget:
    """ A PodDisruptionBudget that refused an eviction during the drain.

        Attributes:
            namespace (str):
            name (str):
            disruptions_allowed (int | None | Unset): The budget's status.disruptionsAllowed when last read.
     """

    namespace: str
    name: str
    disruptions_allowed: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        namespace = self.namespace

        name = self.name

        disruptions_allowed: int | None | Unset
        if isinstance(self.disruptions_allowed, Unset):
            disruptions_allowed = UNSET
        else:
            disruptions_allowed = self.disruptions_allowed


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "namespace": namespace,
            "name": name,
        })
        if disruptions_allowed is not UNSET:
            field_dict["disruptions_allowed"] = disruptions_allowed

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        namespace = d.pop("namespace")

        name = d.pop("name")

        def _parse_disruptions_allowed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        disruptions_allowed = _parse_disruptions_allowed(d.pop("disruptions_allowed", UNSET))


        blocking_budget = cls(
            namespace=namespace,
            name=name,
            disruptions_allowed=disruptions_allowed,
        )

        return blocking_budget

