"""A spare request's VM id and node wishes, as the Proxmox qemu-scheduler takes them: fields,
or the annotations a CAPPX manifest carries, checked when the request arrives."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from contracts.spare import SpareRequest
from placement.engine import place
from placement.models import PlacementInput, VmRequest


def request(**fields: Any) -> SpareRequest:
    base = {"request_id": "r1", "cluster": "lab", "cpu": 2, "memory_mb": 2048}
    return SpareRequest.model_validate(base | fields)


def placed(
    vm: VmRequest, used: list[int], next_vmid: int | None = None
) -> tuple[str | None, int | None]:
    hosts = [
        {"name": n, "cpu_capacity": 8, "memory_mb_capacity": 16384}
        for n in ("pve1", "pve2", "pve3")
    ]
    decision = place(
        PlacementInput.model_validate(
            {"hosts": hosts, "request": vm.model_dump(), "used_vmids": used, "next_vmid": next_vmid}
        )
    )
    return decision.host, decision.vmid


def test_the_qemu_scheduler_annotations_choose_the_node_and_the_vm_id() -> None:
    req = request(
        annotations={
            "node.qemu-scheduler/regex": "pve[23]",
            "vmid.qemu-scheduler/range": "300-399",
            "cluster.x-k8s.io/cluster-name": "prod",
        }
    )
    vm = req.vm_request(req.spare_id)
    assert (vm.node_name_regex, vm.vmid_range, vm.vmid_regex) == ("pve[23]", "300-399", None)
    host, vmid = placed(vm, used=[300, 301])
    assert host in ("pve2", "pve3") and vmid == 302


def test_the_fields_win_over_the_annotations() -> None:
    req = request(
        vmid_regex="^4[0-9]2$",
        annotations={"vmid.qemu-scheduler/regex": "7", "vmid.qemu-scheduler/range": "400-499"},
    )
    vm = req.vm_request(req.spare_id)
    assert (vm.vmid_range, vm.vmid_regex) == ("400-499", "^4[0-9]2$")
    assert placed(vm, used=[402])[1] == 412


def test_a_replacement_avoids_its_old_host_within_the_annotated_nodes() -> None:
    req = request(annotations={"node.qemu-scheduler/regex": "pve[12]"}, avoid_hosts=["pve1"])
    pattern = req.vm_request(req.spare_id).node_name_regex
    assert pattern is not None
    assert [n for n in ("pve1", "pve2", "pve3") if re.search(pattern, n)] == ["pve2"]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"annotations": {"vmid.qemu-scheduler/range": "100"}}, "vmid.qemu-scheduler/range"),
        ({"annotations": {"node.qemu-scheduler/regex": "pve["}}, "invalid regular expression"),
        ({"vmid_range": "500-400"}, "above its end"),
        ({"vmid_regex": "(("}, "invalid regular expression"),
    ],
)
def test_a_bad_value_is_refused_when_the_request_arrives(fields: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(says)):
        request(**fields)
