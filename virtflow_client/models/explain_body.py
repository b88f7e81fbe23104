from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.explain_body_existing_vms_type_0_item import ExplainBodyExistingVmsType0Item
  from ..models.explain_body_hosts_type_0_item import ExplainBodyHostsType0Item
  from ..models.explain_body_policy_type_0 import ExplainBodyPolicyType0
  from ..models.explain_body_request import ExplainBodyRequest





T = TypeVar("T", bound="ExplainBody")



@_attrs_define
class ExplainBody:
    """ The placement input, with hosts inline or taken from a configured inventory.

        Attributes:
            request (ExplainBodyRequest):
            policy (ExplainBodyPolicyType0 | None | Unset):
            hosts (list[ExplainBodyHostsType0Item] | None | Unset):
            existing_vms (list[ExplainBodyExistingVmsType0Item] | None | Unset):
            used_vmids (list[int] | None | Unset):
            next_vmid (int | None | Unset):
            inventory (None | str | Unset): Configured inventory to take hosts from when none are given
            cluster (None | str | Unset): Explain for this registered cluster: its inventories only
     """

    request: ExplainBodyRequest
    policy: ExplainBodyPolicyType0 | None | Unset = UNSET
    hosts: list[ExplainBodyHostsType0Item] | None | Unset = UNSET
    existing_vms: list[ExplainBodyExistingVmsType0Item] | None | Unset = UNSET
    used_vmids: list[int] | None | Unset = UNSET
    next_vmid: int | None | Unset = UNSET
    inventory: None | str | Unset = UNSET
    cluster: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.explain_body_existing_vms_type_0_item import ExplainBodyExistingVmsType0Item # noqa: PLC0415
        from ..models.explain_body_hosts_type_0_item import ExplainBodyHostsType0Item # noqa: PLC0415
        from ..models.explain_body_policy_type_0 import ExplainBodyPolicyType0 # noqa: PLC0415
        from ..models.explain_body_request import ExplainBodyRequest # noqa: PLC0415
        request = self.request.to_dict()

        policy: dict[str, Any] | None | Unset
        if isinstance(self.policy, Unset):
            policy = UNSET
        elif isinstance(self.policy, ExplainBodyPolicyType0):
            policy = self.policy.to_dict()
        else:
            policy = self.policy

        hosts: list[dict[str, Any]] | None | Unset
        if isinstance(self.hosts, Unset):
            hosts = UNSET
        elif isinstance(self.hosts, list):
            hosts = []
            for hosts_type_0_item_data in self.hosts:
                hosts_type_0_item = hosts_type_0_item_data.to_dict()
                hosts.append(hosts_type_0_item)


        else:
            hosts = self.hosts

        existing_vms: list[dict[str, Any]] | None | Unset
        if isinstance(self.existing_vms, Unset):
            existing_vms = UNSET
        elif isinstance(self.existing_vms, list):
            existing_vms = []
            for existing_vms_type_0_item_data in self.existing_vms:
                existing_vms_type_0_item = existing_vms_type_0_item_data.to_dict()
                existing_vms.append(existing_vms_type_0_item)


        else:
            existing_vms = self.existing_vms

        used_vmids: list[int] | None | Unset
        if isinstance(self.used_vmids, Unset):
            used_vmids = UNSET
        elif isinstance(self.used_vmids, list):
            used_vmids = self.used_vmids


        else:
            used_vmids = self.used_vmids

        next_vmid: int | None | Unset
        if isinstance(self.next_vmid, Unset):
            next_vmid = UNSET
        else:
            next_vmid = self.next_vmid

        inventory: None | str | Unset
        if isinstance(self.inventory, Unset):
            inventory = UNSET
        else:
            inventory = self.inventory

        cluster: None | str | Unset
        if isinstance(self.cluster, Unset):
            cluster = UNSET
        else:
            cluster = self.cluster


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "request": request,
        })
        if policy is not UNSET:
            field_dict["policy"] = policy
        if hosts is not UNSET:
            field_dict["hosts"] = hosts
        if existing_vms is not UNSET:
            field_dict["existing_vms"] = existing_vms
        if used_vmids is not UNSET:
            field_dict["used_vmids"] = used_vmids
        if next_vmid is not UNSET:
            field_dict["next_vmid"] = next_vmid
        if inventory is not UNSET:
            field_dict["inventory"] = inventory
        if cluster is not UNSET:
            field_dict["cluster"] = cluster

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.explain_body_existing_vms_type_0_item import ExplainBodyExistingVmsType0Item # noqa: PLC0415
        from ..models.explain_body_hosts_type_0_item import ExplainBodyHostsType0Item # noqa: PLC0415
        from ..models.explain_body_policy_type_0 import ExplainBodyPolicyType0 # noqa: PLC0415
        from ..models.explain_body_request import ExplainBodyRequest # noqa: PLC0415
        d = dict(src_dict)
        request = ExplainBodyRequest.from_dict(d.pop("request"))




        def _parse_policy(data: object) -> ExplainBodyPolicyType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                policy_type_0 = ExplainBodyPolicyType0.from_dict(data)



                return policy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExplainBodyPolicyType0 | None | Unset, data)

        policy = _parse_policy(d.pop("policy", UNSET))


        def _parse_hosts(data: object) -> list[ExplainBodyHostsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                hosts_type_0 = []
                _hosts_type_0 = data
                for hosts_type_0_item_data in (_hosts_type_0):
                    hosts_type_0_item = ExplainBodyHostsType0Item.from_dict(hosts_type_0_item_data)



                    hosts_type_0.append(hosts_type_0_item)

                return hosts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ExplainBodyHostsType0Item] | None | Unset, data)

        hosts = _parse_hosts(d.pop("hosts", UNSET))


        def _parse_existing_vms(data: object) -> list[ExplainBodyExistingVmsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                existing_vms_type_0 = []
                _existing_vms_type_0 = data
                for existing_vms_type_0_item_data in (_existing_vms_type_0):
                    existing_vms_type_0_item = ExplainBodyExistingVmsType0Item.from_dict(existing_vms_type_0_item_data)



                    existing_vms_type_0.append(existing_vms_type_0_item)

                return existing_vms_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ExplainBodyExistingVmsType0Item] | None | Unset, data)

        existing_vms = _parse_existing_vms(d.pop("existing_vms", UNSET))


        def _parse_used_vmids(data: object) -> list[int] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                used_vmids_type_0 = cast(list[int], data)

                return used_vmids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[int] | None | Unset, data)

        used_vmids = _parse_used_vmids(d.pop("used_vmids", UNSET))


        def _parse_next_vmid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        next_vmid = _parse_next_vmid(d.pop("next_vmid", UNSET))


        def _parse_inventory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        inventory = _parse_inventory(d.pop("inventory", UNSET))


        def _parse_cluster(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cluster = _parse_cluster(d.pop("cluster", UNSET))


        explain_body = cls(
            request=request,
            policy=policy,
            hosts=hosts,
            existing_vms=existing_vms,
            used_vmids=used_vmids,
            next_vmid=next_vmid,
            inventory=inventory,
            cluster=cluster,
        )


        explain_body.additional_properties = d
        return explain_body

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
