"""`python -m placement`: JSON out, exit 2 with a one-line message on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HOSTS = [
    {"name": f"h{i}", "cpu_capacity": 16, "memory_mb_capacity": 65536, "cpu_allocated": i}
    for i in range(4)
]
DOC: dict[str, Any] = {
    "hosts": HOSTS,
    "used_vmids": [100],
    "request": {"name": "vm-1", "cpu": 4, "memory_mb": 4096, "vmid_range": "100-110"},
}


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "placement", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_json_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(DOC))
    result = run(str(path))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["host"], out["vmid"], out["error"]) == ("h0", 101, None)
    assert out["rejected"] == {}
    assert list(out["scores"]) == ["h0", "h1", "h2", "h3"]
    assert out["scores"]["h0"]["total"] > out["scores"]["h3"]["total"]


@pytest.mark.parametrize("args", [(), ("-",)], ids=["no argument", "a dash"])
def test_json_from_stdin(args: tuple[str, ...]) -> None:
    result = run(*args, stdin=json.dumps(DOC))
    assert json.loads(result.stdout)["host"] == "h0"


def test_nothing_fits_is_an_answer_not_a_failure() -> None:
    doc = {**DOC, "request": {**DOC["request"], "pool": "gpu"}}
    result = run(stdin=json.dumps(doc))
    assert result.returncode == 0
    out = json.loads(result.stdout)
    assert out["error"] == "no_host_fits" and out["host"] is None
    assert set(out["rejected"].values()) == {"pool_mismatch"}


SPREAD = {"topology_key": "zone", "max_skew": 1, "when_unsatisfiable": "DoNotSchedule"}
ZONED: dict[str, Any] = {
    "hosts": [{**h, "labels": {"zone": "ab"[i % 2]}} for i, h in enumerate(HOSTS)],
    "existing_vms": [
        {"name": "node-7", "host": "h3"},
        {"name": "web-0", "host": "h1", "group": "web"},
    ],
    "request": {
        "name": "web-1",
        "cpu": 4,
        "memory_mb": 4096,
        "topology_spread": [{**SPREAD, "group": "web"}],
        "near": {"vm": "node-7", "topology_key": "zone", "required": False},
    },
}


def test_spread_and_near_in_json() -> None:
    result = run(stdin=json.dumps(ZONED))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    # Zone b holds web-0 (h1): the spread closes b, so near (b) can only be preferred.
    assert out["rejected"] == {"h1": "topology_spread_violation", "h3": "topology_spread_violation"}
    assert out["host"] == "h0"
    assert out["scores"]["h0"]["Near"] == 0
    assert out["topology"]["domains"] == {"zone": "a"}
    assert out["topology"]["near"]["domain"] == "b"


def test_an_unknown_near_is_an_answer() -> None:
    doc = {**ZONED, "existing_vms": []}
    result = run("--explain", stdin=json.dumps(doc))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "near_unknown: vm 'node-7' is not among the existing VMs"
    )


def test_explain_prints_the_table() -> None:
    result = run("--explain", stdin=json.dumps(DOC))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[2].split()[:2] == ["h0", "chosen"]
    assert lines[-1].startswith("placed on h0 (total ")


def test_a_policy_file_replaces_the_inputs_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "scoring_strategy: MostAllocated\nplugin_weights: {NodeResourcesBalancedAllocation: 0}\n"
    )
    result = run("--policy", str(policy), stdin=json.dumps(DOC))
    assert json.loads(result.stdout)["host"] == "h3"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {**DOC, "hosts": [*HOSTS[:3], {**HOSTS[3], "cpu_capacity": "many"}]},
            "hosts.3.cpu_capacity: Input should be a valid integer",
        ),
        ({**DOC, "request": {**DOC["request"], "cpus": 4}}, "request.cpus: Extra inputs"),
        (
            {**DOC, "request": {**DOC["request"], "devices": {"fpga": 1}}},
            "error: request.devices.fpga: Value error, device name 'fpga': needs a domain",
        ),
        ({"hosts": HOSTS}, "request: Field required"),
        ({**DOC, "hosts": [HOSTS[0], HOSTS[0]]}, "duplicate host name 'h0'"),
        ({**DOC, "policy": {"plugin_weights": {"Nope": 1}}}, "policy.plugin_weights.Nope:"),
        ([1, 2], "input: expected a JSON object"),
        (
            {**DOC, "request": {**DOC["request"], "topology_spread": [SPREAD]}},
            "request.topology_spread: Value error, constraint 0 names no group",
        ),
    ],
    ids=[
        "a host field of the wrong type",
        "a typo in the request",
        "a bad device name (a dict key)",
        "no request",
        "duplicate host names",
        "an unknown plugin in the input's policy",
        "not an object",
        "a spread constraint without a group",
    ],
)
def test_invalid_input_exits_2_with_one_line(doc: Any, message: str) -> None:
    result = run(stdin=json.dumps(doc))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert message in result.stderr


def test_invalid_json_and_missing_file_exit_2(tmp_path: Path) -> None:
    assert "invalid JSON" in run(stdin="{").stderr
    missing = run(str(tmp_path / "absent.json"))
    assert missing.returncode == 2 and "No such file" in missing.stderr
    bad_policy = run("--policy", str(tmp_path / "absent.yaml"), stdin=json.dumps(DOC))
    assert bad_policy.returncode == 2 and bad_policy.stderr.startswith("error: policy: cannot")
