"""The quick regression run (`make bench-quick`, a few minutes): the figures virtflow is held to,
measured again and printed beside the ones recorded in docs/BENCHMARKS.md.

A change to the spare's path, the API or placement runs it before and after. The overhead is a
ratio to the bare engine on the same machine in the same run, so a faster or slower machine
moves both sides; the latency, admission rate and memory are absolute, so compare them on the
same machine, and run twice: others' load moves them.

    .venv/bin/python bench/quick.py [--sections memory] [--record-file docs/BENCHMARKS.md]

`--sections` runs only some of them (comma-separated, default all). A section alone starts from
a fresh worker, so its figures can read lower than in the full run, where the sections before
it have already grown the worker: compare a section alone only with the same section alone.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from orchestration import Benchmark, Report, Sizes, machine
from orchestration_stack import bench_stack
from rich.console import Console
from rich.table import Table

DOCS = Path(__file__).resolve().parent.parent / "docs" / "BENCHMARKS.md"
# The table in docs/BENCHMARKS.md that this run reads: rows `| key | figure | recorded | target |`.
RECORDED = re.compile(r"^\|\s*`(?P<key>[a-z0-9_]+)`\s*\|[^|]*\|\s*(?P<value>[^|]*?)\s*\|", re.M)
SIZES = Sizes(burst=60, rounds=2, idle=10, held=500, admit=1000, admit_connections=200)
SECTIONS = ("overhead", "latency", "admit", "memory")


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    section: str
    metric: str  # the start of the benchmark's metric name
    target: str


FIGURES = (
    Figure("ratio", "overhead: ratio to the bare workflow", "overhead", "ratio", "<= 1.3"),
    Figure("cpu_ratio", "overhead: the same in CPU seconds", "overhead", "cpu ratio", ""),
    Figure("activities", "activities per spare (own + release)", "overhead", "activities", ""),
    Figure("idle_p50", "idle POST -> create-VM started, p50 ms", "latency", "idle p50", "< 100"),
    Figure("idle_p95", "idle POST -> create-VM started, p95 ms", "latency", "idle p95", ""),
    Figure("admit", "1,000 POSTs of one request_id: requests/s", "admit", "1000 POSTs", ">= 100"),
    Figure("dropped", "... of them without an answer", "admit", "requests without", "0"),
    Figure("rss_held", "worker RSS, 500 spares held, MB", "memory", "worker RSS, 500", "< 250"),
)


def section_list(text: str) -> tuple[str, ...]:
    """The sections named, in the run's own order; an unknown name is an error."""
    names = {name.strip() for name in text.split(",") if name.strip()}
    if not names or names - set(SECTIONS):
        raise argparse.ArgumentTypeError(
            f"unknown section(s) {', '.join(sorted(names - set(SECTIONS))) or '(none)'}; "
            f"choose from {', '.join(SECTIONS)}"
        )
    return tuple(s for s in SECTIONS if s in names)


def recorded(path: Path) -> dict[str, str]:
    return {m["key"]: m["value"] for m in RECORDED.finditer(path.read_text())}


def measured(report: Report) -> dict[str, float]:
    found: dict[str, float] = {}
    for figure in FIGURES:
        for row in report.rows:
            if row["section"] == figure.section and row["metric"].startswith(figure.metric):
                found[figure.key] = row["value"]
    return found


async def run(sections: tuple[str, ...] = SECTIONS) -> Report:
    report = Report()
    with tempfile.TemporaryDirectory(prefix="virtflow-bench-quick-") as tmp:
        async with bench_stack(Path(tmp), "http", SIZES.tight_hosts, SIZES.tight_each) as stack:
            report.emit("machine", "load at start", machine()["load_avg_1m"], "", **machine())
            bench = Benchmark(stack, SIZES, report)
            for section in sections:
                await getattr(bench, section)()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--record-file", type=Path, default=DOCS)
    parser.add_argument(
        "--sections",
        type=section_list,
        default=SECTIONS,
        help=f"comma-separated, in this order: {','.join(SECTIONS)} (default: all)",
    )
    args = parser.parse_args()
    report = asyncio.run(run(args.sections))
    before, now = recorded(args.record_file), measured(report)
    table = Table(title=f"virtflow quick benchmark (load at start {report.rows[0]['value']})")
    for column in ("figure", "recorded", "now", "target"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for figure in FIGURES:
        value = now.get(figure.key)
        table.add_row(
            figure.label,
            before.get(figure.key, "-"),
            "-" if value is None else f"{value:g}",
            figure.target,
        )
    Console(stderr=True).print(table)


if __name__ == "__main__":
    main()
