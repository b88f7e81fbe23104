"""The orchestration benchmark runs end to end at tiny sizes and prints what it promises.

No timing is asserted (benchmarks print numbers; tests never judge speed): only that every
section reports, every spare ended released, and the ledger over-committed nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "orchestration.py"


def test_quick_run_reports_every_section_and_nothing_overcommitted(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    by_metric = {(r["section"], r["metric"]): r for r in rows}

    sections = {"machine", "overhead", "latency", "admit", "ledger", "memory", "scale"}
    assert {r["section"] for r in rows} == sections
    assert by_metric["overhead", "activities per spare"]["value"] >= 5
    assert by_metric["overhead", "ratio"]["value"] > 0
    assert all(r.get("failed", 0) == 0 for r in rows), [r for r in rows if r.get("failed")]
    assert by_metric["latency", "idle p50"]["n"] == 2
    steps = [r["metric"] for r in rows if r["metric"].startswith("idle step: ")]
    assert "idle step: create_vm scheduled -> create_vm started" in steps, steps
    # One request_id, two bodies: one spare, each request answered 202 or 409, none dropped.
    admitted = by_metric["admit", "20 POSTs of one request_id, two bodies"]
    assert admitted["spares"] == 1 and admitted["errors"] == {}
    assert sorted(admitted["answers"].values()) == [10, 10], admitted["answers"]
    assert by_metric["admit", "requests without an answer"]["value"] == 0
    ledger = by_metric["ledger", "over-committed hosts"]
    assert ledger["value"] == 0 and ledger["reserved_equals_room"] is True
    assert by_metric["memory", "held spares not released"]["value"] == 0
    assert by_metric["memory", "worker RSS, 3 spares Ready"]["value"] > 0
    assert [r["n"] for r in rows if r["section"] == "scale"] == [2, 3]
    # The table is printed too, for people.
    assert "virtflow orchestration benchmark" in done.stderr
