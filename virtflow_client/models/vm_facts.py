from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="VmFacts")



@_attrs_define
class VmFacts:
    """ What the hypervisor says about a VM once it exists; the `vm` of every event.

    Other fields a hypervisor reports (its own size, timestamps) are left out: only these
    travel, in events and in workflow history.

        Attributes:
            name (str): VM name, also the Kubernetes Node name.
            host (str): Bare-metal host the VM runs on.
            ip (None | str | Unset):
            mac (None | str | Unset):
            vmid (int | None | Unset):
     """

    name: str
    host: str
    ip: None | str | Unset = UNSET
    mac: None | str | Unset = UNSET
    vmid: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        host = self.host

        ip: None | str | Unset
        if isinstance(self.ip, Unset):
            ip = UNSET
        else:
            ip = self.ip

        mac: None | str | Unset
        if isinstance(self.mac, Unset):
            mac = UNSET
        else:
            mac = self.mac

        vmid: int | None | Unset
        if isinstance(self.vmid, Unset):
            vmid = UNSET
        else:
            vmid = self.vmid


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "host": host,
        })
        if ip is not UNSET:
            field_dict["ip"] = ip
        if mac is not UNSET:
            field_dict["mac"] = mac
        if vmid is not UNSET:
            field_dict["vmid"] = vmid

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        host = d.pop("host")

        def _parse_ip(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        ip = _parse_ip(d.pop("ip", UNSET))


        def _parse_mac(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mac = _parse_mac(d.pop("mac", UNSET))


        def _parse_vmid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        vmid = _parse_vmid(d.pop("vmid", UNSET))


        vm_facts = cls(
            name=name,
            host=host,
            ip=ip,
            mac=mac,
            vmid=vmid,
        )


        vm_facts.additional_properties = d
        return vm_facts

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
