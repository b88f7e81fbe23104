from enum import StrEnum

class DrainOutcome(StrEnum):
    BLOCKED = "blocked"
    DRAINED = "drained"
    FORCED = "forced"

    def __str__(self) -> str:
        return str(self.value)
