from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Near")



@_attrs_define
class Near:
    """ Place the VM in the domain of the host of an existing VM (the node it replaces), named
    by the VM or by its Kubernetes Node (an existing VM whose `node`, else whose name, it is).

        Attributes:
            topology_key (str):
            vm (None | str | Unset):
            node (None | str | Unset):
            required (bool | Unset):  Default: True.
     """

    topology_key: str
    vm: None | str | Unset = UNSET
    node: None | str | Unset = UNSET
    required: bool | Unset = True





    def to_dict(self) -> dict[str, Any]:
        topology_key = self.topology_key

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

        required = self.required


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "topology_key": topology_key,
        })
        if vm is not UNSET:
            field_dict["vm"] = vm
        if node is not UNSET:
            field_dict["node"] = node
        if required is not UNSET:
            field_dict["required"] = required

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        topology_key = d.pop("topology_key")

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


        required = d.pop("required", UNSET)

        near = cls(
            topology_key=topology_key,
            vm=vm,
            node=node,
            required=required,
        )

        return near

