from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.near_info import NearInfo
  from ..models.topology_info_domains import TopologyInfoDomains





T = TypeVar("T", bound="TopologyInfo")



@_attrs_define
class TopologyInfo:
    """ Where the spare's host is among the site's failure domains, and what was asked for.

    The shape of virtflow's placement record (`placement.topology.PlacedTopology`), declared
    here because the webhook contract imports nothing of the rest of virtflow.

        Attributes:
            domains (TopologyInfoDomains): The host's domain under every topology key the request named (null: the host
                lacks that key).
            near (NearInfo | None | Unset):
     """

    domains: TopologyInfoDomains
    near: NearInfo | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.near_info import NearInfo # noqa: PLC0415
        from ..models.topology_info_domains import TopologyInfoDomains # noqa: PLC0415
        domains = self.domains.to_dict()

        near: dict[str, Any] | None | Unset
        if isinstance(self.near, Unset):
            near = UNSET
        elif isinstance(self.near, NearInfo):
            near = self.near.to_dict()
        else:
            near = self.near


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "domains": domains,
        })
        if near is not UNSET:
            field_dict["near"] = near

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.near_info import NearInfo # noqa: PLC0415
        from ..models.topology_info_domains import TopologyInfoDomains # noqa: PLC0415
        d = dict(src_dict)
        domains = TopologyInfoDomains.from_dict(d.pop("domains"))




        def _parse_near(data: object) -> NearInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                near_type_0 = NearInfo.from_dict(data)



                return near_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NearInfo | None | Unset, data)

        near = _parse_near(d.pop("near", UNSET))


        topology_info = cls(
            domains=domains,
            near=near,
        )

        return topology_info

