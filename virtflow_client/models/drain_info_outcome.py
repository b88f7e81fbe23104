from enum import StrEnum

class DrainInfoOutcome(StrEnum):
    BLOCKED = "blocked"
    DRAINED = "drained"
    FORCED = "forced"

    def __str__(self) -> str:
        return str(self.value)
