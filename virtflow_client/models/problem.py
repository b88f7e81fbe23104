from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.code import Code
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.field_error import FieldError
  from ..models.problem_inventories_type_0 import ProblemInventoriesType0





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ RFC 9457 problem details; branch on `code`, show `detail` to people.

        Attributes:
            type_ (str): `urn:virtflow:problem:<code>`
            title (str):
            status (int):
            detail (str):
            code (Code): Stable error codes: once published, a code keeps its meaning.
            instance (None | str | Unset): The request path
            errors (list[FieldError] | None | Unset): 422: every bad field
            requested (int | None | Unset): no_capacity: spares asked for
            placeable (int | None | Unset): no_capacity: how many of them could be placed now
            held_by (list[str] | None | Unset): no_capacity: the spares of the requester's own cluster (bookings among them)
                holding the room in its time; spares of other clusters are only counted, in the detail
            free_until (datetime.datetime | None | Unset): no_capacity of a longer window: the latest end its room allows
                now
            free_again_at (datetime.datetime | None | Unset): no_capacity of a longer window: when the room is free again
                after the spares in `held_by` (absent: not while anything known holds it)
            inventories (None | ProblemInventoriesType0 | Unset): inventory_unavailable: inventory -> why it is unreadable
            budget (int | None | Unset): cluster_budget_exceeded: the cluster's max_spares
            in_use (int | None | Unset): cluster_budget_exceeded: its spares not yet released
     """

    type_: str
    title: str
    status: int
    detail: str
    code: Code
    instance: None | str | Unset = UNSET
    errors: list[FieldError] | None | Unset = UNSET
    requested: int | None | Unset = UNSET
    placeable: int | None | Unset = UNSET
    held_by: list[str] | None | Unset = UNSET
    free_until: datetime.datetime | None | Unset = UNSET
    free_again_at: datetime.datetime | None | Unset = UNSET
    inventories: None | ProblemInventoriesType0 | Unset = UNSET
    budget: int | None | Unset = UNSET
    in_use: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.field_error import FieldError # noqa: PLC0415
        from ..models.problem_inventories_type_0 import ProblemInventoriesType0 # noqa: PLC0415
        type_ = self.type_

        title = self.title

        status = self.status

        detail = self.detail

        code = self.code.value

        instance: None | str | Unset
        if isinstance(self.instance, Unset):
            instance = UNSET
        else:
            instance = self.instance

        errors: list[dict[str, Any]] | None | Unset
        if isinstance(self.errors, Unset):
            errors = UNSET
        elif isinstance(self.errors, list):
            errors = []
            for errors_type_0_item_data in self.errors:
                errors_type_0_item = errors_type_0_item_data.to_dict()
                errors.append(errors_type_0_item)


        else:
            errors = self.errors

        requested: int | None | Unset
        if isinstance(self.requested, Unset):
            requested = UNSET
        else:
            requested = self.requested

        placeable: int | None | Unset
        if isinstance(self.placeable, Unset):
            placeable = UNSET
        else:
            placeable = self.placeable

        held_by: list[str] | None | Unset
        if isinstance(self.held_by, Unset):
            held_by = UNSET
        elif isinstance(self.held_by, list):
            held_by = self.held_by


        else:
            held_by = self.held_by

        free_until: None | str | Unset
        if isinstance(self.free_until, Unset):
            free_until = UNSET
        elif isinstance(self.free_until, datetime.datetime):
            free_until = self.free_until.isoformat()
        else:
            free_until = self.free_until

        free_again_at: None | str | Unset
        if isinstance(self.free_again_at, Unset):
            free_again_at = UNSET
        elif isinstance(self.free_again_at, datetime.datetime):
            free_again_at = self.free_again_at.isoformat()
        else:
            free_again_at = self.free_again_at

        inventories: dict[str, Any] | None | Unset
        if isinstance(self.inventories, Unset):
            inventories = UNSET
        elif isinstance(self.inventories, ProblemInventoriesType0):
            inventories = self.inventories.to_dict()
        else:
            inventories = self.inventories

        budget: int | None | Unset
        if isinstance(self.budget, Unset):
            budget = UNSET
        else:
            budget = self.budget

        in_use: int | None | Unset
        if isinstance(self.in_use, Unset):
            in_use = UNSET
        else:
            in_use = self.in_use


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "type": type_,
            "title": title,
            "status": status,
            "detail": detail,
            "code": code,
        })
        if instance is not UNSET:
            field_dict["instance"] = instance
        if errors is not UNSET:
            field_dict["errors"] = errors
        if requested is not UNSET:
            field_dict["requested"] = requested
        if placeable is not UNSET:
            field_dict["placeable"] = placeable
        if held_by is not UNSET:
            field_dict["held_by"] = held_by
        if free_until is not UNSET:
            field_dict["free_until"] = free_until
        if free_again_at is not UNSET:
            field_dict["free_again_at"] = free_again_at
        if inventories is not UNSET:
            field_dict["inventories"] = inventories
        if budget is not UNSET:
            field_dict["budget"] = budget
        if in_use is not UNSET:
            field_dict["in_use"] = in_use

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error import FieldError # noqa: PLC0415
        from ..models.problem_inventories_type_0 import ProblemInventoriesType0 # noqa: PLC0415
        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        detail = d.pop("detail")

        code = Code(d.pop("code"))




        def _parse_instance(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        instance = _parse_instance(d.pop("instance", UNSET))


        def _parse_errors(data: object) -> list[FieldError] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                errors_type_0 = []
                _errors_type_0 = data
                for errors_type_0_item_data in (_errors_type_0):
                    errors_type_0_item = FieldError.from_dict(errors_type_0_item_data)



                    errors_type_0.append(errors_type_0_item)

                return errors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[FieldError] | None | Unset, data)

        errors = _parse_errors(d.pop("errors", UNSET))


        def _parse_requested(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        requested = _parse_requested(d.pop("requested", UNSET))


        def _parse_placeable(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        placeable = _parse_placeable(d.pop("placeable", UNSET))


        def _parse_held_by(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                held_by_type_0 = cast(list[str], data)

                return held_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        held_by = _parse_held_by(d.pop("held_by", UNSET))


        def _parse_free_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                free_until_type_0 = datetime.datetime.fromisoformat(data)



                return free_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        free_until = _parse_free_until(d.pop("free_until", UNSET))


        def _parse_free_again_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                free_again_at_type_0 = datetime.datetime.fromisoformat(data)



                return free_again_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        free_again_at = _parse_free_again_at(d.pop("free_again_at", UNSET))


        def _parse_inventories(data: object) -> None | ProblemInventoriesType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                inventories_type_0 = ProblemInventoriesType0.from_dict(data)



                return inventories_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ProblemInventoriesType0 | Unset, data)

        inventories = _parse_inventories(d.pop("inventories", UNSET))


        def _parse_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        budget = _parse_budget(d.pop("budget", UNSET))


        def _parse_in_use(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        in_use = _parse_in_use(d.pop("in_use", UNSET))


        problem = cls(
            type_=type_,
            title=title,
            status=status,
            detail=detail,
            code=code,
            instance=instance,
            errors=errors,
            requested=requested,
            placeable=placeable,
            held_by=held_by,
            free_until=free_until,
            free_again_at=free_again_at,
            inventories=inventories,
            budget=budget,
            in_use=in_use,
        )


        problem.additional_properties = d
        return problem

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
