from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.near_record import NearRecord
  from ..models.placed_topology_domains import PlacedTopologyDomains





T = TypeVar("T", bound="PlacedTopology")



@_attrs_define
class PlacedTopology:
    """ The chosen host's domain under every topology key the request names (None: no host, or
    the host lacks the key), and what `near` asked for: requested and actual side by side.

        Attributes:
            domains (PlacedTopologyDomains | Unset):
            near (NearRecord | None | Unset):
     """

    domains: PlacedTopologyDomains | Unset = UNSET
    near: NearRecord | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.near_record import NearRecord # noqa: PLC0415
        from ..models.placed_topology_domains import PlacedTopologyDomains # noqa: PLC0415
        domains: dict[str, Any] | Unset = UNSET
        if not isinstance(self.domains, Unset):
            domains = self.domains.to_dict()

        near: dict[str, Any] | None | Unset
        if isinstance(self.near, Unset):
            near = UNSET
        elif isinstance(self.near, NearRecord):
            near = self.near.to_dict()
        else:
            near = self.near


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if domains is not UNSET:
            field_dict["domains"] = domains
        if near is not UNSET:
            field_dict["near"] = near

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.near_record import NearRecord # noqa: PLC0415
        from ..models.placed_topology_domains import PlacedTopologyDomains # noqa: PLC0415
        d = dict(src_dict)
        _domains = d.pop("domains", UNSET)
        domains: PlacedTopologyDomains | Unset
        if isinstance(_domains,  Unset):
            domains = UNSET
        else:
            domains = PlacedTopologyDomains.from_dict(_domains)




        def _parse_near(data: object) -> NearRecord | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                near_type_0 = NearRecord.from_dict(data)



                return near_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NearRecord | None | Unset, data)

        near = _parse_near(d.pop("near", UNSET))


        placed_topology = cls(
            domains=domains,
            near=near,
        )


        placed_topology.additional_properties = d
        return placed_topology

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
