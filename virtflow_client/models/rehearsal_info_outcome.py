from enum import StrEnum

class RehearsalInfoOutcome(StrEnum):
    FAILED = "failed"
    PASSED = "passed"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
