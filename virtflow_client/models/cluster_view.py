from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="ClusterView")



@_attrs_define
class ClusterView:
    """ 
        Attributes:
            name (str):
            api_server (None | str): The API server spares join (None: unreadable)
            reachable (bool):
            spares_in_use (int): Its spares not yet released, warm ones not counted
            last_error (None | str | Unset):
            since (datetime.datetime | None | Unset): Unreachable: since when; reachable: when it last answered
            max_spares (int | None | Unset): Its surge budget (None: none)
     """

    name: str
    api_server: None | str
    reachable: bool
    spares_in_use: int
    last_error: None | str | Unset = UNSET
    since: datetime.datetime | None | Unset = UNSET
    max_spares: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        api_server: None | str
        api_server = self.api_server

        reachable = self.reachable

        spares_in_use = self.spares_in_use

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        since: None | str | Unset
        if isinstance(self.since, Unset):
            since = UNSET
        elif isinstance(self.since, datetime.datetime):
            since = self.since.isoformat()
        else:
            since = self.since

        max_spares: int | None | Unset
        if isinstance(self.max_spares, Unset):
            max_spares = UNSET
        else:
            max_spares = self.max_spares


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "api_server": api_server,
            "reachable": reachable,
            "spares_in_use": spares_in_use,
        })
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if since is not UNSET:
            field_dict["since"] = since
        if max_spares is not UNSET:
            field_dict["max_spares"] = max_spares

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_api_server(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        api_server = _parse_api_server(d.pop("api_server"))


        reachable = d.pop("reachable")

        spares_in_use = d.pop("spares_in_use")

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))


        def _parse_since(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                since_type_0 = datetime.datetime.fromisoformat(data)



                return since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        since = _parse_since(d.pop("since", UNSET))


        def _parse_max_spares(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_spares = _parse_max_spares(d.pop("max_spares", UNSET))


        cluster_view = cls(
            name=name,
            api_server=api_server,
            reachable=reachable,
            spares_in_use=spares_in_use,
            last_error=last_error,
            since=since,
            max_spares=max_spares,
        )


        cluster_view.additional_properties = d
        return cluster_view

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
