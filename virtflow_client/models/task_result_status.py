from enum import StrEnum

class TaskResultStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    PROCESSING = "processing"

    def __str__(self) -> str:
        return str(self.value)
