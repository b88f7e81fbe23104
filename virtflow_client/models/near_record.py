from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="NearRecord")



@_attrs_define
class NearRecord:
    """ What `near` asked for: the VM (found from the Node when a Node was named), its host and
    the domain wanted.

        Attributes:
            topology_key (str):
            required (bool):
            vm (None | str | Unset):
            node (None | str | Unset):
            host (None | str | Unset):
            domain (None | str | Unset):
     """

    topology_key: str
    required: bool
    vm: None | str | Unset = UNSET
    node: None | str | Unset = UNSET
    host: None | str | Unset = UNSET
    domain: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        topology_key = self.topology_key

        required = self.required

        vm: None | str | Unset
        if isinstance(self.vm, Unset):
            vm = UNSET
        else:
            vm = self.vm

        node: None | str | Unset
        if isinstance(self.node, Unset):
            node = UNSET
        else:
            node = self.node

        host: None | str | Unset
        if isinstance(self.host, Unset):
            host = UNSET
        else:
            host = self.host

        domain: None | str | Unset
        if isinstance(self.domain, Unset):
            domain = UNSET
        else:
            domain = self.domain


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "topology_key": topology_key,
            "required": required,
        })
        if vm is not UNSET:
            field_dict["vm"] = vm
        if node is not UNSET:
            field_dict["node"] = node
        if host is not UNSET:
            field_dict["host"] = host
        if domain is not UNSET:
            field_dict["domain"] = domain

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        topology_key = d.pop("topology_key")

        required = d.pop("required")

        def _parse_vm(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        vm = _parse_vm(d.pop("vm", UNSET))


        def _parse_node(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node = _parse_node(d.pop("node", UNSET))


        def _parse_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host = _parse_host(d.pop("host", UNSET))


        def _parse_domain(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        domain = _parse_domain(d.pop("domain", UNSET))


        near_record = cls(
            topology_key=topology_key,
            required=required,
            vm=vm,
            node=node,
            host=host,
            domain=domain,
        )


        near_record.additional_properties = d
        return near_record

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
