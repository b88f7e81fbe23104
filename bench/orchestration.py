"""Orchestration benchmark: what virtflow adds on top of Temporal, how fast a spare starts to be
built, how many can be in flight, and what the worker holds in memory.

Run: .venv/bin/python bench/orchestration.py [--quick] [--sections overhead,latency,...]
     [--provisioner http|ansible] [--profile worker.txt]

It starts its own stack (bench/orchestration_stack.py: Temporal dev server with a SQLite file
and WAL pragmas, the lab with no provisioning or kubelet delay, the worker in its own process,
the HTTP API) and prints one JSON object per measurement, then a table.
- overhead: N PrepareSpare (prepare, Ready, release) vs N minimal workflows running as many
  trivial activities as one spare runs, A/B alternating, same server and worker.
- latency: POST /spare/prepare to the create-VM activity starting (history event time), for
  one spare at a time on an idle stack and for a burst of N.
- ledger: reservations/s with N concurrent requests on an inventory with less room than asked;
  proof that no host is over-committed.
- memory: worker RSS with M spares held Ready.
- scale: the burst through the API at several sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil
from orchestration_admit import admit_burst
from orchestration_breakdown import median_steps, spare_timeline
from orchestration_history import spare_footprint
from orchestration_ledger import ledger_burst
from orchestration_runs import (
    Run,
    hold_spares,
    minimal_workflows,
    release_all,
    spares_via_api,
    spares_via_client,
    tag,
)
from orchestration_stack import BIG_INVENTORY, BenchStack, bench_stack
from rich.console import Console
from rich.table import Table

SECTIONS = ("overhead", "latency", "admit", "ledger", "memory", "scale")
MB = 1024 * 1024


@dataclass
class Sizes:
    burst: int = 200
    rounds: int = 3
    idle: int = 10
    ledger: int = 200
    held: int = 500
    scale: tuple[int, ...] = (50, 200, 800)
    tight_hosts: int = 20
    tight_each: int = 8  # 20 x 8 = room for 160 of the 200 asked
    admit: int = 1000
    admit_connections: int = 200


QUICK = Sizes(
    burst=3,
    rounds=1,
    idle=2,
    ledger=6,
    held=3,
    scale=(2, 3),
    tight_hosts=2,
    tight_each=2,
    admit=20,
    admit_connections=5,
)


class Report:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def emit(
        self, section: str, metric: str, value: float, unit: str, target: str = "", **extra: Any
    ) -> None:
        row = {"section": section, "metric": metric, "value": value, "unit": unit}
        if target:
            row["target"] = target
        row.update(extra)
        print(json.dumps(row), flush=True)
        self.rows.append(row)

    def table(self) -> Table:
        table = Table(title="virtflow orchestration benchmark")
        for column in ("section", "metric", "value", "unit", "target"):
            table.add_column(column, justify="right" if column == "value" else "left")
        for row in self.rows:
            table.add_row(
                row["section"], row["metric"], f"{row['value']:g}", row["unit"], row.get("target")
            )
        return table


def run_fields(run: Run) -> dict[str, Any]:
    return {
        "n": run.count,
        "failed": run.failed,
        "wall_s": round(run.wall, 2),
        "worker_cpu_s": round(run.worker_cpu, 2),
        "server_cpu_s": round(run.server_cpu, 2),
        "lab_and_driver_cpu_s": round(run.driver_cpu, 2),
    }


class Benchmark:
    def __init__(self, stack: BenchStack, sizes: Sizes, report: Report) -> None:
        self.stack, self.sizes, self.report = stack, sizes, report
        self.bursts: dict[int, Run] = {}

    async def burst(self, count: int) -> Run:
        """The API burst of `count` spares, measured once per size and shared by sections."""
        if count not in self.bursts:
            self.bursts[count] = await spares_via_api(self.stack, count)
        return self.bursts[count]

    async def overhead(self) -> None:
        calibration = await spares_via_client(self.stack, 1)
        assert calibration.failed == 0, "a calibration spare did not end released"
        spare = await spare_footprint(self.stack.client, calibration.ids[0])
        # The baseline runs as many activities as a spare, all of them regular ones: a local
        # activity of the spare counts as a whole activity of engine work.
        steps = spare.activities
        self.report.emit(
            "overhead",
            "activities per spare",
            steps,
            "activities",
            regular=spare.regular,
            local=spare.local,
        )
        self.report.emit("overhead", "history events per spare", spare.events, "events")
        spares, minimal = [], []
        cpu: dict[str, float] = {"PrepareSpare": 0.0, "minimal": 0.0}
        for round_no in range(1, self.sizes.rounds + 1):
            a = await spares_via_client(self.stack, self.sizes.burst)
            b = await minimal_workflows(self.stack, self.sizes.burst, steps)
            spares.append(a.wall)
            minimal.append(b.wall)
            if round_no == 1:
                baseline = await spare_footprint(self.stack.client, b.ids[0])
                self.report.emit(
                    "overhead", "history events per minimal workflow", baseline.events, "events"
                )
            for name, run in (("PrepareSpare", a), ("minimal", b)):
                cpu[name] += run.worker_cpu + run.server_cpu + run.driver_cpu
                self.report.emit(
                    "overhead",
                    f"round {round_no} {name}",
                    round(run.wall, 2),
                    "s",
                    **run_fields(run),
                )
        ratio = round(sum(spares) / sum(minimal), 2)
        self.report.emit("overhead", "ratio", ratio, "x", "<= 1.3", rounds=self.sizes.rounds)
        # The same comparison in CPU seconds (worker, server, lab and driver): less sensitive
        # to other load on the machine than wall time.
        cpu_ratio = round(cpu["PrepareSpare"] / cpu["minimal"], 2)
        self.report.emit("overhead", "cpu ratio", cpu_ratio, "x", rounds=self.sizes.rounds)

    async def latency(self) -> None:
        idle = Run(0)
        timelines = []
        for _ in range(self.sizes.idle):
            one = await spares_via_api(self.stack, 1)
            idle.latencies += one.latencies
            idle.count += 1
            for spare_id, (sent, answered) in one.posts.items():
                timelines.append(
                    await spare_timeline(self.stack.client, spare_id, BIG_INVENTORY, sent, answered)
                )
        for pct in (50, 95):
            target = "< 100 ms" if pct == 50 else ""
            self.report.emit(
                "latency", f"idle p{pct}", idle.latency_ms(pct), "ms", target, n=idle.count
            )
        # Where the idle latency goes, step by step (medians over the idle spares).
        for step, ms in median_steps(timelines):
            self.report.emit("latency", f"idle step: {step}", ms, "ms")
        burst = await self.burst(self.sizes.burst)
        for pct in (50, 95):
            self.report.emit(
                "latency",
                f"burst of {burst.count} p{pct}",
                burst.latency_ms(pct),
                "ms",
                **run_fields(burst),
            )

    async def admit(self) -> None:
        run = await admit_burst(self.stack, self.sizes.admit, self.sizes.admit_connections)
        self.report.emit(
            "admit",
            f"{run.requests} POSTs of one request_id, two bodies",
            round(run.per_second, 1),
            "requests/s",
            ">= 100/s",
            connections=run.connections,
            wall_s=round(run.wall, 2),
            answers=dict(run.answers),
            errors=dict(run.errors),
            spares=len(run.spare_ids),
        )
        self.report.emit(
            "admit", "requests without an answer", sum(run.errors.values()), "requests", "0"
        )

    async def ledger(self) -> None:
        run = await ledger_burst(self.stack, self.sizes.ledger, tag())
        room = self.sizes.tight_hosts * self.sizes.tight_each
        self.report.emit(
            "ledger",
            f"reservations/s ({run.asked} concurrent)",
            round(run.asked / run.reserve_wall, 1),
            "1/s",
            reserved=run.reserved,
            refused=run.refused,
            room=room,
            wall_s=round(run.reserve_wall, 2),
        )
        self.report.emit(
            "ledger", "frees/s", round(run.asked / run.free_wall, 1), "1/s", wall_s=run.free_wall
        )
        self.report.emit(
            "ledger",
            "over-committed hosts",
            len(run.overcommitted),
            "hosts",
            "0",
            hosts=run.overcommitted,
            reserved_equals_room=run.reserved == min(room, run.asked),
        )

    async def memory(self) -> None:
        before = self.stack.worker.memory_info().rss / MB
        cluster, spare_ids = await hold_spares(self.stack, self.sizes.held)
        held = self.stack.worker.memory_info().rss / MB
        self.report.emit("memory", "worker RSS idle", round(before, 1), "MB")
        self.report.emit(
            "memory",
            f"worker RSS, {len(spare_ids)} spares Ready",
            round(held, 1),
            "MB",
            "< 250 MB",
            cluster=cluster,
        )
        failed = await release_all(self.stack, spare_ids)
        self.report.emit("memory", "held spares not released", failed, "spares", "0")

    async def scale(self) -> None:
        for count in self.sizes.scale:
            run = await self.burst(count)
            self.report.emit(
                "scale",
                f"burst of {count}",
                round(run.per_second, 2),
                "spares/s",
                p50_ms=run.latency_ms(50),
                p95_ms=run.latency_ms(95),
                worker_rss_mb=round(self.stack.worker.memory_info().rss / MB, 1),
                **run_fields(run),
            )


def machine() -> dict[str, Any]:
    """What the numbers were measured on, and how busy it was (others may share the CPU)."""
    model = platform.processor()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "ram_gb": round(psutil.virtual_memory().total / 1024**3, 1),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


class Profile:
    """py-spy sampling the worker process; a summary of where its time went."""

    def __init__(self, pid: int, path: Path) -> None:
        self.path = path
        py_spy = Path(sys.executable).with_name("py-spy")
        self.proc = subprocess.Popen(
            [str(py_spy), "record", "-p", str(pid), "-f", "raw", "-o", str(path), "-r", "50"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self, top: int = 25) -> list[tuple[str, float]]:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=60)
        own: Counter[str] = Counter()
        total = 0
        for line in self.path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            total += int(count)
            # Count each function once per sample, wherever it is on the stack (inclusive).
            for frame in set(frames):
                own[frame] += int(count)
        return [(frame, round(100 * n / total, 1)) for frame, n in own.most_common(top)]


async def main_async(args: argparse.Namespace) -> Report:
    sizes = QUICK if args.quick else Sizes()
    if args.burst:
        sizes.burst = args.burst
    if args.scale:
        sizes.scale = tuple(int(x) for x in args.scale.split(","))
    report = Report()
    with tempfile.TemporaryDirectory(prefix="virtflow-bench-") as tmp:
        state_dir = Path(args.state_dir or tmp)
        async with bench_stack(
            state_dir, args.provisioner, sizes.tight_hosts, sizes.tight_each
        ) as stack:
            bench = Benchmark(stack, sizes, report)
            report.emit("machine", "load at start", machine()["load_avg_1m"], "", **machine())
            profile = Profile(stack.worker.pid, Path(args.profile)) if args.profile else None
            for section in args.sections.split(","):
                await getattr(bench, section)()
            report.emit("machine", "load at end", round(os.getloadavg()[0], 2), "")
            if profile is not None:
                for frame, share in profile.stop():
                    print(f"{share:5.1f}%  {frame}", file=sys.stderr)
    return report


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated subset")
    parser.add_argument("--burst", type=int, help="spares per overhead round and latency burst")
    parser.add_argument("--scale", help="burst sizes of the scale curve, e.g. 50,200,800")
    parser.add_argument("--provisioner", choices=["http", "ansible"], default="http")
    parser.add_argument("--profile", help="sample the worker with py-spy; raw stacks here")
    parser.add_argument("--state-dir", help="keep the server's database and logs here")
    args = parser.parse_args(argv)
    unknown = set(args.sections.split(",")) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; known: {', '.join(SECTIONS)}")
    return args


def main() -> None:
    args = parse_args()
    report = asyncio.run(main_async(args))
    Console(stderr=True).print(report.table())


if __name__ == "__main__":
    main()
