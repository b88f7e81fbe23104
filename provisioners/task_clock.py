"""Where a playbook run's time goes, logged once per run."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger(__name__)


class TaskClock:
    """Where a playbook run's time goes: the start of ansible-playbook before its first task,
    each task from its start to the next one's (Ansible's own work between tasks included),
    and the end after the last, read from the events' own timestamps. Logged at debug level,
    one line per run, with the seconds per task in the `playbook_seconds` extra."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.marks: list[tuple[str, float]] = [("(start of ansible-playbook)", started)]

    def record(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name not in ("playbook_on_task_start", "playbook_on_stats") or not event.get("created"):
            return
        task = str(event.get("event_data", {}).get("task", ""))
        label = "(end of the play)" if name == "playbook_on_stats" else task
        stamp = datetime.fromisoformat(event["created"])  # ansible-runner stamps in UTC
        when = (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()
        self.marks.append((label, when))

    def seconds(self, ended: float) -> list[tuple[str, float]]:
        """(task, seconds) in the order they ran; a task that ran twice (a loop of includes)
        appears twice; the last entry is the exit of ansible-playbook after its play."""
        ends = [when for _, when in self.marks[1:]] + [ended]
        return [
            (label, max(end - when, 0.0))
            for (label, when), end in zip(self.marks, ends, strict=True)
        ]

    def log(self, playbook: str, ended: float) -> None:
        if not log.isEnabledFor(logging.DEBUG):
            return
        spent = self.seconds(ended)
        log.debug(
            "%s took %.1f s: %s",
            playbook,
            ended - self.started,
            ", ".join(f"{label} {secs:.1f} s" for label, secs in spent),
            extra={"playbook_seconds": [[label, round(secs, 3)] for label, secs in spent]},
        )
